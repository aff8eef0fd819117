package repofiles

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Branch is a branch with what its entity shows.
type Branch struct {
	ProjectPath        string // the project's full path, for web links
	Name               string
	Commit             gitrepo.Commit
	Merged             bool
	Protected          bool
	Default            bool
	DevelopersCanPush  bool
	DevelopersCanMerge bool
	CanPush            bool
}

// ProtectionSource gives a project's protected branch rules (the projects
// service).
type ProtectionSource interface {
	ProtectedRules(ctx context.Context, projectID int64) ([]model.ProtectedBranch, error)
	ProtectedTagRules(ctx context.Context, projectID int64) ([]model.ProtectedTag, error)
	InGroup(ctx context.Context, userID int64) func(groupID int64) bool
}

// MsgCreateProtectedTag refuses a tag a protected tag rule keeps from the
// caller (GitLab's TagCheck, through the API a 400).
const MsgCreateProtectedTag = "You are not allowed to create this tag as it is protected."

// mayCreateTag applies p's protected tags to a new tag.
func (s *Service) mayCreateTag(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, name string) (bool, error) {
	rules, err := s.protection.ProtectedTagRules(ctx, p.ID)
	if err != nil || len(model.ProtectedTagsMatching(rules, name)) == 0 {
		return err == nil, err
	}
	return auth.CanCreateTag(a, acc, name, rules, s.protection.InGroup(ctx, a.UserID())), nil
}

// branches completes the branches refs of snap for their entity: the
// flags come from the project's protected branch rules (read once,
// matched in memory) and one merged check for all of them, the commits
// from the snapshot; no git process runs per branch.
func (s *Service) branches(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, repo *gitrepo.Repo, snap *gitrepo.RefSnapshot, refs []gitrepo.RefCommit) ([]Branch, error) {
	rules, err := s.protection.ProtectedRules(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	var merged map[string]bool
	if def, ok := snap.Find(p.DefaultBranch); ok && len(refs) > 0 {
		names := make([]string, 0, len(refs))
		for _, r := range refs {
			if r.Name != p.DefaultBranch {
				names = append(names, r.Name)
			}
		}
		if merged, err = repo.MergedInto(ctx, snap, def.Commit.ID, names); err != nil {
			return nil, err
		}
	}
	out := make([]Branch, 0, len(refs))
	for _, ref := range refs {
		b := Branch{ProjectPath: p.FullPath(), Name: ref.Name, Commit: ref.Commit, Merged: merged[ref.Name] && ref.Name != p.DefaultBranch, Default: ref.Name == p.DefaultBranch}
		devPush, devMerge := true, true
		for _, r := range rules {
			if !model.MatchesBranch(r.Name, ref.Name) {
				continue
			}
			b.Protected = true
			devPush = devPush && grants(r.Push, model.Developer)
			devMerge = devMerge && grants(r.Merge, model.Developer)
		}
		b.DevelopersCanPush, b.DevelopersCanMerge = devPush, devMerge
		b.CanPush = auth.Can(a, auth.PushCode, auth.Resource{Project: &p, Access: acc, Branch: &auth.Branch{Name: ref.Name, Rules: rules}})
		out = append(out, b)
	}
	return out, nil
}

func grants(list []model.BranchAccess, level model.AccessLevel) bool {
	for _, g := range list {
		if g.AccessLevel != nil && *g.AccessLevel != model.NoOneAccess && *g.AccessLevel <= level {
			return true
		}
	}
	return false
}

// Branch orders of a branches list (GitLab's sort parameter); "updated"
// is the committer date of the branch's commit, ties by name.
const (
	BranchesByName        = "name_asc"
	BranchesUpdatedAsc    = "updated_asc"
	BranchesUpdatedDesc   = "updated_desc"
	maxBranchRegexpLength = 1024
)

// BranchFilter selects and orders a branches list.
type BranchFilter struct {
	// Search keeps names containing it, ignoring case; "^x" and "x$"
	// anchor it at the start and end.
	Search string
	// Regex keeps names it matches (RE2, anywhere in the name).
	Regex string
	// Sort is one of the Branches* orders; "" is by name.
	Sort string
}

// Branches lists one page of the branches: filtered and ordered over all
// branches (one `git for-each-ref`, shared while the refs are unchanged),
// then only the page's branches are completed (see branches).
func (s *Service) Branches(ctx context.Context, a auth.Actor, projectRef string, f BranchFilter, page model.Page) ([]Branch, model.PageInfo, error) {
	var re *regexp.Regexp
	if f.Regex != "" {
		var err error
		if len(f.Regex) > maxBranchRegexpLength {
			return nil, model.PageInfo{}, model.BadRequestRaw("Regex is invalid")
		}
		if re, err = regexp.Compile(f.Regex); err != nil {
			return nil, model.PageInfo{}, model.BadRequestRaw("Regex is invalid")
		}
	}
	p, acc, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	snap, err := s.branchSnapshot(ctx, repo)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	kept := make([]gitrepo.RefCommit, 0, len(snap.Refs))
	for _, r := range snap.Refs {
		if f.Search != "" && !matchSearch(r.Name, f.Search) {
			continue
		}
		if re != nil && !re.MatchString(r.Name) {
			continue
		}
		kept = append(kept, r)
	}
	switch f.Sort {
	case BranchesUpdatedAsc:
		sort.SliceStable(kept, func(i, j int) bool { return kept[i].Commit.Committer.When.Before(kept[j].Commit.Committer.When) })
	case BranchesUpdatedDesc:
		sort.SliceStable(kept, func(i, j int) bool { return kept[j].Commit.Committer.When.Before(kept[i].Commit.Committer.When) })
	}
	kept, info := model.PageOf(kept, page)
	list, err := s.branches(ctx, a, p, acc, repo, snap, kept)
	return list, info, err
}

// branchSnapshot reads the branches of repo (none when it does not
// exist yet).
func (s *Service) branchSnapshot(ctx context.Context, repo *gitrepo.Repo) (*gitrepo.RefSnapshot, error) {
	if !repo.Exists() {
		return &gitrepo.RefSnapshot{}, nil
	}
	return repo.RefSnapshot(ctx, "refs/heads/")
}

func matchSearch(name, q string) bool {
	n, q := strings.ToLower(name), strings.ToLower(q)
	switch {
	case len(q) >= 2 && strings.HasPrefix(q, "^") && strings.HasSuffix(q, "$"):
		return n == q[1:len(q)-1]
	case strings.HasPrefix(q, "^"):
		return strings.HasPrefix(n, q[1:])
	case strings.HasSuffix(q, "$"):
		return strings.HasSuffix(n, q[:len(q)-1])
	}
	return strings.Contains(n, q)
}

// Branch returns one branch, or 404 Branch Not Found: the same snapshot
// and flags as the list's.
func (s *Service) Branch(ctx context.Context, a auth.Actor, projectRef, name string) (Branch, error) {
	p, acc, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return Branch{}, err
	}
	return s.oneBranch(ctx, a, p, acc, repo, name)
}

// oneBranch completes the branch name of repo, or 404 Branch Not Found.
func (s *Service) oneBranch(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, repo *gitrepo.Repo, name string) (Branch, error) {
	snap, err := s.branchSnapshot(ctx, repo)
	if err != nil {
		return Branch{}, err
	}
	ref, ok := snap.Find(name)
	if !ok {
		return Branch{}, model.NotFound("Branch")
	}
	list, err := s.branches(ctx, a, p, acc, repo, snap, []gitrepo.RefCommit{ref})
	if err != nil {
		return Branch{}, err
	}
	return list[0], nil
}

// writable resolves a project the actor may push a branch of, and
// registers the write (see leased): call end when done.
func (s *Service) writable(ctx context.Context, a auth.Actor, projectRef, branch string) (p model.Project, acc model.AccessLevel, repo *gitrepo.Repo, end func(), err error) {
	p, acc, _, err = s.readable(ctx, a, projectRef)
	if err != nil {
		return p, acc, nil, nil, err
	}
	ok, err := s.projects.CanPush(ctx, a, &p, acc, branch)
	if err != nil {
		return p, acc, nil, nil, err
	}
	if !ok {
		return p, acc, nil, nil, model.Forbidden("You are not allowed to push into this branch")
	}
	repo, end, err = s.leased(ctx, &p)
	return p, acc, repo, end, err
}

// leased registers a write to p's repository (refused while a storage
// move holds it) and opens the repository where it is now; call end once
// the write is over.
func (s *Service) leased(ctx context.Context, p *model.Project) (*gitrepo.Repo, func(), error) {
	end, err := s.projects.BeginWrite(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		end()
		return nil, nil, err
	}
	return repo, end, nil
}

// CreateBranch makes a branch at a ref.
func (s *Service) CreateBranch(ctx context.Context, a auth.Actor, projectRef, name, ref string) (Branch, error) {
	if !git.ValidRefName(name) || strings.HasPrefix(name, "refs/") {
		return Branch{}, model.BadRequestRaw("Branch name is invalid")
	}
	p, acc, repo, end, err := s.writable(ctx, a, projectRef, name)
	if err != nil {
		return Branch{}, err
	}
	defer end()
	commit, err := repo.CommitID(ctx, ref)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return Branch{}, model.BadRequestRaw(fmt.Sprintf("Failed to create branch '%s': invalid reference name '%s'", name, ref))
	}
	if err != nil {
		return Branch{}, err
	}
	if err := repo.CreateRef(ctx, "refs/heads/"+name, commit); err != nil {
		if errors.Is(err, gitrepo.ErrRefExists) {
			return Branch{}, model.BadRequestRaw("Branch already exists")
		}
		if errors.Is(err, gitrepo.ErrRefHierarchy) {
			return Branch{}, model.BadRequestRaw(fmt.Sprintf("Failed to create branch '%s': Branch name conflicts with existing branch hierarchy.", name))
		}
		return Branch{}, err
	}
	s.refsChanged(ctx, a, p, update("refs/heads/"+name, "", commit))
	return s.oneBranch(ctx, a, p, acc, repo, name)
}

// DeleteBranch removes a branch; protected and default branches stay.
func (s *Service) DeleteBranch(ctx context.Context, a auth.Actor, projectRef, name string) error {
	p, _, repo, end, err := s.writable(ctx, a, projectRef, name)
	if err != nil {
		return err
	}
	defer end()
	tip, err := repo.BranchTip(ctx, name)
	if err != nil {
		return err
	}
	if tip == "" {
		return model.NotFound("Branch")
	}
	if name == p.DefaultBranch {
		return model.Forbidden("The default branch of a project cannot be deleted.")
	}
	rules, err := s.protection.ProtectedRules(ctx, p.ID)
	if err != nil {
		return err
	}
	for _, r := range rules {
		if model.MatchesBranch(r.Name, name) {
			return model.Forbidden("Protected branches cannot be deleted.")
		}
	}
	if err := repo.DeleteRef(ctx, "refs/heads/"+name, tip); err != nil {
		return err
	}
	s.refsChanged(ctx, a, p, update("refs/heads/"+name, tip, ""))
	return nil
}

// DeleteMergedBranches removes branches merged into the default branch
// (not protected ones).
func (s *Service) DeleteMergedBranches(ctx context.Context, a auth.Actor, projectRef string) error {
	p, acc, _, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return err
	}
	if !auth.Can(a, auth.PushCode, auth.Resource{Project: &p, Access: acc, Branch: &auth.Branch{}}) {
		return model.Forbidden("")
	}
	repo, end, err := s.leased(ctx, &p)
	if err != nil {
		return err
	}
	defer end()
	tip, err := repo.BranchTip(ctx, p.DefaultBranch)
	if err != nil || tip == "" {
		return err
	}
	merged, err := repo.MergedBranches(ctx, tip)
	if err != nil {
		return err
	}
	rules, err := s.protection.ProtectedRules(ctx, p.ID)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(merged))
	for n := range merged {
		names = append(names, n)
	}
	sort.Strings(names)
	var deleted []model.RefUpdate
	defer func() { s.refsChanged(ctx, a, p, deleted...) }()
next:
	for _, n := range names {
		if n == p.DefaultBranch {
			continue
		}
		for _, r := range rules {
			if model.MatchesBranch(r.Name, n) {
				continue next
			}
		}
		t, err := repo.BranchTip(ctx, n)
		if err != nil {
			return err
		}
		if err := repo.DeleteRef(ctx, "refs/heads/"+n, t); err != nil {
			return err
		}
		deleted = append(deleted, update("refs/heads/"+n, t, ""))
	}
	return nil
}

// Tag is a tag with its commit.
type Tag struct {
	gitrepo.Ref
	ProjectPath string // the project's full path, for web links
	Commit      gitrepo.Commit
}

// tags reads the tags whose names pass keep, with their commits (tags of
// other objects are left out), from the tags' snapshot: one `git
// for-each-ref`, shared while the tags are unchanged.
func tags(ctx context.Context, p model.Project, repo *gitrepo.Repo, keep func(name string) bool) ([]Tag, error) {
	if !repo.Exists() {
		return nil, nil
	}
	snap, err := repo.RefSnapshot(ctx, "refs/tags/")
	if err != nil {
		return nil, err
	}
	var out []Tag
	for _, r := range snap.Refs {
		if !r.HasCommit || !keep(r.Name) {
			continue
		}
		out = append(out, Tag{Ref: r.Ref, ProjectPath: p.FullPath(), Commit: r.Commit})
	}
	return out, nil
}

// Tags lists one page of the tags ordered by name, update time (default)
// or version.
func (s *Service) Tags(ctx context.Context, a auth.Actor, projectRef, search, orderBy string, desc bool, page model.Page) ([]Tag, model.PageInfo, error) {
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	out, err := tags(ctx, p, repo, func(name string) bool { return search == "" || matchSearch(name, search) })
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	less := func(i, j int) bool { return out[i].Commit.Committer.When.Before(out[j].Commit.Committer.When) }
	switch orderBy {
	case "name":
		less = func(i, j int) bool { return out[i].Name < out[j].Name }
	case "version":
		less = func(i, j int) bool { return versionLess(out[i].Name, out[j].Name) }
	}
	sort.SliceStable(out, func(i, j int) bool {
		if desc {
			return less(j, i)
		}
		return less(i, j)
	})
	list, info := model.PageOf(out, page)
	return list, info, nil
}

var versionNumbers = regexp.MustCompile(`\d+`)

// versionLess compares tag names by their numeric parts.
func versionLess(a, b string) bool {
	pa, pb := versionNumbers.FindAllString(a, -1), versionNumbers.FindAllString(b, -1)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if len(pa[i]) != len(pb[i]) {
			return len(pa[i]) < len(pb[i])
		}
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	if len(pa) != len(pb) {
		return len(pa) < len(pb)
	}
	return a < b
}

// Tag returns one tag, or 404 Tag Not Found.
func (s *Service) Tag(ctx context.Context, a auth.Actor, projectRef, name string) (Tag, error) {
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return Tag{}, err
	}
	return tag(ctx, p, repo, name)
}

func tag(ctx context.Context, p model.Project, repo *gitrepo.Repo, name string) (Tag, error) {
	list, err := tags(ctx, p, repo, func(n string) bool { return n == name })
	if err != nil {
		return Tag{}, err
	}
	if len(list) == 0 {
		return Tag{}, model.NotFound("Tag")
	}
	return list[0], nil
}

// CreateTag makes a lightweight tag, or an annotated one with a message.
func (s *Service) CreateTag(ctx context.Context, a auth.Actor, projectRef, name, ref, message string) (Tag, error) {
	p, acc, _, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return Tag{}, err
	}
	if !auth.Can(a, auth.PushCode, auth.Resource{Project: &p, Access: acc, Branch: &auth.Branch{}}) {
		return Tag{}, model.Forbidden("")
	}
	if ok, err := s.mayCreateTag(ctx, a, p, acc, name); err != nil || !ok {
		if err == nil {
			err = model.BadRequestRaw(MsgCreateProtectedTag)
		}
		return Tag{}, err
	}
	return s.createTag(ctx, a, p, name, ref, message)
}

// ReleaseTag returns tag name of p with its commit; ok false when p has
// no such tag. It checks no permission: the caller (the releases
// service) has.
func (s *Service) ReleaseTag(ctx context.Context, p model.Project, name string) (t Tag, ok bool, err error) {
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil || !repo.Exists() {
		return Tag{}, false, err
	}
	t, err = tag(ctx, p, repo, name)
	if errors.Is(err, model.ErrNotFound) {
		return Tag{}, false, nil
	}
	return t, err == nil, err
}

// CreateReleaseTag makes the tag a new release names, as CreateTag but
// without its push check: the releases service has checked
// create_release (GitLab's Releases::CreateService calls
// Tags::CreateService the same way).
//
// A tag a protected tag rule keeps from the caller is GitLab's 403
// "Access Denied" (ReleasePolicy prevents create_release then).
func (s *Service) CreateReleaseTag(ctx context.Context, a auth.Actor, p model.Project, name, ref, message string) (Tag, error) {
	acc, err := s.projects.Access(ctx, a, p.ID)
	if err != nil {
		return Tag{}, err
	}
	if ok, err := s.mayCreateTag(ctx, a, p, acc, name); err != nil || !ok {
		if err == nil {
			err = model.ForbiddenRaw("Access Denied")
		}
		return Tag{}, err
	}
	return s.createTag(ctx, a, p, name, ref, message)
}

func (s *Service) createTag(ctx context.Context, a auth.Actor, p model.Project, name, ref, message string) (Tag, error) {
	repo, end, err := s.leased(ctx, &p)
	if err != nil {
		return Tag{}, err
	}
	defer end()
	if !git.ValidRefName(name) {
		return Tag{}, model.BadRequestRaw("Tag name invalid")
	}
	commit, err := repo.CommitID(ctx, ref)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return Tag{}, model.BadRequestRaw("Target " + ref + " is invalid")
	}
	if err != nil {
		return Tag{}, err
	}
	target := commit
	if message != "" {
		target, err = repo.CreateAnnotatedTag(ctx, name, commit, message, gitrepo.Signature{Name: a.User.Name, Email: a.User.Email, When: s.now()})
	} else {
		err = repo.CreateRef(ctx, "refs/tags/"+name, commit)
	}
	if errors.Is(err, gitrepo.ErrRefExists) {
		return Tag{}, model.BadRequestRaw("Tag " + name + " already exists")
	}
	if errors.Is(err, gitrepo.ErrRefHierarchy) {
		return Tag{}, model.BadRequestRaw("Failed to create a tag: " + name)
	}
	if err != nil {
		return Tag{}, err
	}
	s.refsChanged(ctx, a, p, update("refs/tags/"+name, "", target))
	return tag(ctx, p, repo, name)
}

// DeleteTag removes a tag (developers and up, as for pushing).
func (s *Service) DeleteTag(ctx context.Context, a auth.Actor, projectRef, name string) error {
	p, acc, _, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return err
	}
	if !auth.Can(a, auth.PushCode, auth.Resource{Project: &p, Access: acc, Branch: &auth.Branch{}}) {
		return model.Forbidden("")
	}
	repo, end, err := s.leased(ctx, &p)
	if err != nil {
		return err
	}
	defer end()
	refs, err := repo.Refs(ctx, "refs/tags/")
	if err != nil {
		return err
	}
	for _, r := range refs {
		if r.Name == name {
			// A protected tag goes only by maintainers (GitLab's TagPolicy).
			if !a.Admin() && acc < model.Maintainer {
				rules, err := s.protection.ProtectedTagRules(ctx, p.ID)
				if err != nil {
					return err
				}
				if len(model.ProtectedTagsMatching(rules, name)) > 0 {
					return model.Forbidden("")
				}
			}
			if err := repo.DeleteRef(ctx, "refs/tags/"+name, r.Target); err != nil {
				return err
			}
			s.refsChanged(ctx, a, p, update("refs/tags/"+name, r.Target, ""))
			return nil
		}
	}
	return model.NotFound("Tag")
}

// DefaultBranchTip is the commit at the tip of p's default branch, ""
// when the repository or the branch does not exist. It checks no
// permission: the caller has.
func (s *Service) DefaultBranchTip(ctx context.Context, p model.Project) (string, error) {
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil || !repo.Exists() || p.DefaultBranch == "" {
		return "", err
	}
	tip, err := repo.BranchTip(ctx, p.DefaultBranch)
	return string(tip), err
}

// LatestTag names p's most recently updated tag, as the tags list orders
// "updated" descending (its commit's committer date, the first name on
// a tie), ""
// when there is none. It checks no permission: the caller has.
func (s *Service) LatestTag(ctx context.Context, p model.Project) (string, error) {
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil || !repo.Exists() {
		return "", err
	}
	list, err := tags(ctx, p, repo, func(string) bool { return true })
	if err != nil || len(list) == 0 {
		return "", err
	}
	best := list[0]
	for _, t := range list[1:] {
		if t.Commit.Committer.When.After(best.Commit.Committer.When) {
			best = t
		}
	}
	return best.Name, nil
}

// ReleaseCommit reads the commit sha of p for a release's entity; ok
// false when the repository no longer holds it. It checks no
// permission: the caller has.
func (s *Service) ReleaseCommit(ctx context.Context, p model.Project, sha string) (c Commit, ok bool, err error) {
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil || !repo.Exists() || sha == "" || strings.HasPrefix(sha, "-") {
		return Commit{}, false, err
	}
	c, err = repo.ReadCommit(ctx, sha)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return Commit{}, false, nil
	}
	return c, err == nil, err
}
