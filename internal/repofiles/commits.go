package repofiles

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// CommitView is a commit with its project context.
type CommitView struct {
	gitrepo.Commit
	ProjectID int64
	WebURL    string // path below the external URL: "/group/project/-/commit/<id>"
	Stats     *Stats
}

// Stats counts the lines a commit changed.
type Stats struct{ Additions, Deletions int }

func commitPath(p model.Project, id git.ObjectID) string {
	return "/" + p.FullPath() + "/-/commit/" + string(id)
}

// CommitsInput selects commits.
type CommitsInput struct {
	RefName     string
	Path        string
	Since       *time.Time
	Until       *time.Time
	Author      string
	All         bool
	FirstParent bool
	WithStats   bool
}

// Commits lists commits newest first, one page, with the total.
func (s *Service) Commits(ctx context.Context, a auth.Actor, projectRef string, in CommitsInput, page model.Page) ([]CommitView, model.PageInfo, error) {
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if empty, err := repo.Empty(ctx); err != nil || empty {
		return []CommitView{}, model.PageInfo{TotalKnown: true}, err
	}
	ref := in.RefName
	if ref == "" {
		ref = p.DefaultBranch
	}
	if !in.All {
		if _, err := repo.CommitID(ctx, ref); errors.Is(err, gitrepo.ErrRefNotFound) {
			return []CommitView{}, model.PageInfo{TotalKnown: true}, nil
		} else if err != nil {
			return nil, model.PageInfo{}, err
		}
	}
	if in.Path != "" {
		if in.Path, err = CleanPath(in.Path); err != nil {
			return nil, model.PageInfo{}, model.Param("path should be a valid file path")
		}
	}
	o := gitrepo.LogOptions{Rev: ref, All: in.All, Path: in.Path, Since: in.Since, Until: in.Until, Author: in.Author,
		FirstParent: in.FirstParent, Skip: page.Offset(), Max: page.PerPage}
	ids, err := repo.Log(ctx, o)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	o.Skip, o.Max = 0, 0
	total, err := repo.CountCommits(ctx, o)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	out := make([]CommitView, 0, len(ids))
	for _, id := range ids {
		v, err := s.commitView(ctx, p, repo, string(id), in.WithStats)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		out = append(out, v)
	}
	return out, model.PageInfo{Total: total, TotalKnown: true, HasMore: page.Offset()+len(out) < total}, nil
}

func (s *Service) commitView(ctx context.Context, p model.Project, repo *gitrepo.Repo, rev string, withStats bool) (CommitView, error) {
	c, err := repo.ReadCommit(ctx, rev)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return CommitView{}, model.NotFound("Commit")
	}
	if err != nil {
		return CommitView{}, err
	}
	v := CommitView{Commit: c, ProjectID: p.ID, WebURL: commitPath(p, c.ID)}
	if withStats {
		parent := git.ObjectID("")
		if len(c.ParentIDs) > 0 {
			parent = git.ObjectID(c.ParentIDs[0])
		}
		files, _, err := repo.Diff(ctx, parent, c.ID, gitrepo.StatsOnly)
		if err != nil {
			return v, err
		}
		st := &Stats{}
		for _, f := range files {
			st.Additions += f.Additions
			st.Deletions += f.Deletions
		}
		v.Stats = st
	}
	return v, nil
}

// Commit returns one commit (a SHA, branch or tag) with stats.
func (s *Service) Commit(ctx context.Context, a auth.Actor, projectRef, sha string, withStats bool) (CommitView, error) {
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return CommitView{}, err
	}
	if sha == "" || strings.HasPrefix(sha, "-") {
		return CommitView{}, model.NotFound("Commit")
	}
	return s.commitView(ctx, p, repo, sha, withStats)
}

// CommitDiff returns one page of the changes of a commit against its
// first parent.
func (s *Service) CommitDiff(ctx context.Context, a auth.Actor, projectRef, sha string, page model.Page) ([]gitrepo.FileDiff, model.PageInfo, error) {
	_, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	c, err := repo.ReadCommit(ctx, sha)
	if err != nil {
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			return nil, model.PageInfo{}, model.NotFound("Commit")
		}
		return nil, model.PageInfo{}, err
	}
	parent := git.ObjectID("")
	if len(c.ParentIDs) > 0 {
		parent = git.ObjectID(c.ParentIDs[0])
	}
	lim, err := s.diffLimits(ctx)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	files, _, err := repo.Diff(ctx, parent, c.ID, lim)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	files, info := model.PageOf(files, page)
	return files, info, nil
}

// CommitRef is a branch or tag whose history holds a commit.
type CommitRef struct{ Type, Name string }

// CommitRefs lists one page of the branches and/or tags (kind "branch", "tag" or
// "all") that contain a commit.
func (s *Service) CommitRefs(ctx context.Context, a auth.Actor, projectRef, sha, kind string, page model.Page) ([]CommitRef, model.PageInfo, error) {
	_, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if sha == "" || strings.HasPrefix(sha, "-") {
		return nil, model.PageInfo{}, model.NotFound("Commit")
	}
	c, err := repo.ReadCommit(ctx, sha)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return nil, model.PageInfo{}, model.NotFound("Commit")
	}
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	var prefixes []string
	if kind != "tag" {
		prefixes = append(prefixes, "refs/heads/")
	}
	if kind != "branch" {
		prefixes = append(prefixes, "refs/tags/")
	}
	names, err := repo.RefsContaining(ctx, c.ID, prefixes...)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	out := make([]CommitRef, 0, len(names))
	for _, n := range names {
		if b, ok := strings.CutPrefix(n, "refs/heads/"); ok {
			out = append(out, CommitRef{Type: "branch", Name: b})
		} else {
			out = append(out, CommitRef{Type: "tag", Name: strings.TrimPrefix(n, "refs/tags/")})
		}
	}
	list, info := model.PageOf(out, page)
	return list, info, nil
}

// CreateCommit commits several actions and returns the new commit.
func (s *Service) CreateCommit(ctx context.Context, a auth.Actor, projectRef string, in CommitInput, withStats bool) (CommitView, error) {
	p, repo, commit, err := s.commitActions(ctx, a, projectRef, in)
	if err != nil {
		return CommitView{}, err
	}
	return s.commitView(ctx, p, repo, string(commit), withStats)
}

// Compare is the difference between two refs.
type Compare struct {
	ProjectPath string // the compared project's full path, for web links
	Commits     []CommitView
	Diffs       []gitrepo.FileDiff
	Timeout     bool
	SameRef     bool
	From, To    git.ObjectID // the compared commits (merge base or from, and head)
}

// Compare compares from and to: from the merge base (default) or straight
// from from. fromProject, when set, is the project the from ref is read
// from (a fork relation).
func (s *Service) Compare(ctx context.Context, a auth.Actor, projectRef, from, to string, straight bool, fromProject string) (Compare, error) {
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return Compare{}, err
	}
	fromRepo := repo
	if fromProject != "" {
		fp, _, fr, err := s.readable(ctx, a, fromProject)
		if err != nil {
			if model.KindOf(err) == model.KindNotFound {
				return Compare{}, model.Forbidden("You don't have access to this fork's parent project")
			}
			return Compare{}, err
		}
		if fp.ID != p.ID && !related(fp, p) {
			return Compare{}, model.BadRequestRaw("Target project id:" + strconv.FormatInt(fp.ID, 10) + " is not a fork of project id:" + strconv.FormatInt(p.ID, 10))
		}
		fromRepo = fr
	}
	head, err := repo.CommitID(ctx, to)
	if err != nil {
		return Compare{}, refError(err)
	}
	base, err := fromRepo.CommitID(ctx, from)
	if err != nil {
		return Compare{}, refError(err)
	}
	if fromRepo != repo {
		// Bring the other side's commit in so one repository can compare.
		if err := repo.FetchCommit(ctx, fromRepo, base); err != nil {
			return Compare{}, err
		}
	}
	out := Compare{ProjectPath: p.FullPath(), To: head, From: base, SameRef: head == base}
	if out.SameRef {
		return out, nil
	}
	if !straight {
		mb, ok, err := repo.MergeBase(ctx, string(base), string(head))
		if err != nil {
			return Compare{}, err
		}
		if ok {
			base = mb
			out.From = mb
		}
	}
	ids, err := repo.Log(ctx, gitrepo.LogOptions{Rev: string(base) + ".." + string(head), Max: 1000})
	if err != nil {
		return Compare{}, err
	}
	for i := len(ids) - 1; i >= 0; i-- {
		v, err := s.commitView(ctx, p, repo, string(ids[i]), false)
		if err != nil {
			return Compare{}, err
		}
		out.Commits = append(out.Commits, v)
	}
	if base == head {
		return out, nil
	}
	lim, err := s.diffLimits(ctx)
	if err != nil {
		return out, err
	}
	out.Diffs, out.Timeout, err = repo.Diff(ctx, base, head, lim)
	return out, err
}

func related(a, b model.Project) bool {
	return (a.ForkedFromID != nil && *a.ForkedFromID == b.ID) || (b.ForkedFromID != nil && *b.ForkedFromID == a.ID)
}

func refError(err error) error {
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return model.NotFound("Ref")
	}
	return err
}

// MergeBase finds the common ancestor of two or more refs.
func (s *Service) MergeBase(ctx context.Context, a auth.Actor, projectRef string, refs []string) (CommitView, error) {
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return CommitView{}, err
	}
	if len(refs) < 2 {
		return CommitView{}, model.BadRequestRaw("Provide at least 2 refs")
	}
	var ids []string
	var missing []string
	for _, r := range refs {
		id, err := repo.CommitID(ctx, r)
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			missing = append(missing, r)
			continue
		}
		if err != nil {
			return CommitView{}, err
		}
		ids = append(ids, string(id))
	}
	if len(missing) == 1 {
		return CommitView{}, model.BadRequestRaw("Could not find ref: " + missing[0])
	}
	if len(missing) > 1 {
		return CommitView{}, model.BadRequestRaw("Could not find refs: " + strings.Join(missing, ", "))
	}
	mb, ok, err := repo.MergeBase(ctx, ids...)
	if err != nil {
		return CommitView{}, err
	}
	if !ok {
		return CommitView{}, model.NotFound("Merge Base")
	}
	return s.commitView(ctx, p, repo, string(mb), false)
}

// Contributors lists one page of the commit authors of a ref (default branch) ordered by
// commits, name or e-mail.
func (s *Service) Contributors(ctx context.Context, a auth.Actor, projectRef, ref, orderBy string, desc bool, page model.Page) ([]gitrepo.Contributor, model.PageInfo, error) {
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if ref == "" {
		ref = p.DefaultBranch
	}
	if empty, err := repo.Empty(ctx); err != nil || empty {
		return []gitrepo.Contributor{}, model.PageInfo{TotalKnown: true}, err
	}
	id, err := repo.CommitID(ctx, ref)
	if err != nil {
		return nil, model.PageInfo{}, refError(err)
	}
	list, err := repo.Contributors(ctx, string(id))
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	less := func(i, j int) bool {
		if list[i].Commits != list[j].Commits {
			return list[i].Commits < list[j].Commits
		}
		return strings.ToLower(list[i].Email) < strings.ToLower(list[j].Email)
	}
	switch orderBy {
	case "name":
		less = func(i, j int) bool { return strings.ToLower(list[i].Name) < strings.ToLower(list[j].Name) }
	case "email":
		less = func(i, j int) bool { return strings.ToLower(list[i].Email) < strings.ToLower(list[j].Email) }
	}
	sort.SliceStable(list, func(i, j int) bool {
		if desc {
			return less(j, i)
		}
		return less(i, j)
	})
	list, info := model.PageOf(list, page)
	return list, info, nil
}
