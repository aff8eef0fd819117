package approvals

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"

	"quarry/internal/codeowners"
	"quarry/internal/git"
	"quarry/internal/git/catfile"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// CodeOwnersPaths are where a CODEOWNERS file is looked for, first found
// wins: the root, docs/, then Quarry's .service/ and GitLab's .gitlab/.
var CodeOwnersPaths = []string{"CODEOWNERS", "docs/CODEOWNERS", ".service/CODEOWNERS", ".gitlab/CODEOWNERS"}

// maxOwnedPaths bounds the changed paths matched against a CODEOWNERS
// file (the first ones in byte order).
const maxOwnedPaths = 5000

// Sizes of the caches of code owner matching. An index holds a parsed
// file: a few KiB for most, 5 MiB for one at the 1 MiB bound (15 MiB if
// every entry has wildcards); it serves the merge requests whose target
// branch has that CODEOWNERS blob when one is pushed to. An entry of the
// other, which serves every other read, is the owners of one merge
// request's changes at one head: a few owner names per section.
const (
	indexCacheEntries  = 4
	ownersCacheEntries = 1024
)

// ownersKey names what the owners of a merge request's changes follow
// from, all immutable git objects: the CODEOWNERS blob and the commits
// whose difference are the changed paths.
type ownersKey struct{ blob, base, head git.ObjectID }

// codeOwnersFile is a CODEOWNERS blob prepared for matching, or why it
// gives no owners.
type codeOwnersFile struct {
	index   *codeowners.Index
	invalid error // a *codeowners.LimitError
}

// codeOwnerCaches are the service's caches of code owner matching. They
// hold what git fixes, never database state: owners are resolved to users
// and groups on every read, so changes of membership show at once.
type codeOwnerCaches struct {
	indexes *lru.Cache[git.ObjectID, codeOwnersFile]
	owners  *lru.Cache[ownersKey, []codeowners.SectionOwners]
}

func newCodeOwnerCaches() codeOwnerCaches {
	return codeOwnerCaches{indexes: mustLRU[git.ObjectID, codeOwnersFile](indexCacheEntries),
		owners: mustLRU[ownersKey, []codeowners.SectionOwners](ownersCacheEntries)}
}

// mustLRU makes a cache of n entries (n > 0: New fails only for n <= 0).
func mustLRU[K comparable, V any](n int) *lru.Cache[K, V] {
	c, err := lru.New[K, V](n)
	if err != nil {
		panic(err)
	}
	return c
}

// codeOwnerRules are the code_owner rules of a merge request: one per
// CODEOWNERS section owning a path the merge request changes, when the
// target branch's protection requires code owner approval (protected: the
// project's protected branches, read by the caller). The file is read from the target branch's tip. The rules are not
// stored but derived on every read, numbered -1, -2, … in section order,
// so they follow the file and the changes; what git fixes of them (the
// file parsed, each changed path's owners) is cached by object ids, and
// the owners are resolved to users and groups each time.
func (s *Service) codeOwnerRules(ctx context.Context, p model.Project, m model.MergeRequest, protected []model.ProtectedBranch) ([]model.ApprovalRule, error) {
	return s.codeOwnerRulesWith(ctx, s.newOwnerResolver(p), p, m, protected)
}

// newOwnerResolver resolves the owners of one read of a project's merge
// requests.
func (s *Service) newOwnerResolver(p model.Project) *ownerResolver {
	return &ownerResolver{s: s, p: p, users: map[string]resolved{}, roles: map[string][]int64{}}
}

// codeOwnerRulesWith is codeOwnerRules with the owners resolved by res
// (shared by the merge requests of one page: each owner once).
func (s *Service) codeOwnerRulesWith(ctx context.Context, res *ownerResolver, p model.Project, m model.MergeRequest,
	protected []model.ProtectedBranch) ([]model.ApprovalRule, error) {
	required := false
	for _, b := range protected {
		if b.CodeOwnerApprovalRequired && model.MatchesBranch(b.Name, m.TargetBranch) {
			required = true
		}
	}
	if !required || m.HeadSHA == "" || m.BaseSHA == "" || m.HeadSHA == m.BaseSHA {
		return nil, nil
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return nil, err
	}
	sections, err := s.sectionOwners(ctx, p, repo, m)
	if err != nil {
		return nil, err
	}
	var out []model.ApprovalRule
	for i, sec := range sections {
		r := model.ApprovalRule{ID: -int64(i + 1), MergeRequestID: m.ID, Name: sec.Section, RuleType: model.RuleCodeOwner,
			ApprovalsRequired: sec.ApprovalsRequired}
		if sec.Optional {
			r.ApprovalsRequired = 0
		}
		for _, owner := range sec.Owners {
			userIDs, groupID, err := res.resolve(ctx, owner)
			if err != nil {
				return nil, err
			}
			for _, uid := range userIDs {
				if !slices.Contains(r.UserIDs, uid) {
					r.UserIDs = append(r.UserIDs, uid)
				}
			}
			if groupID != 0 && !slices.Contains(r.GroupIDs, groupID) {
				r.GroupIDs = append(r.GroupIDs, groupID)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// sectionOwners are the owners the target branch's CODEOWNERS gives the
// paths a merge request changes, section by section: none without a
// file, or with one over a bound of codeowners.Parse. The answer is
// cached, shared by every reader: read it, do not change it.
func (s *Service) sectionOwners(ctx context.Context, p model.Project, repo *gitrepo.Repo, m model.MergeRequest) ([]codeowners.SectionOwners, error) {
	tip, err := repo.BranchTip(ctx, m.TargetBranch)
	if err != nil || tip == "" {
		return nil, err
	}
	blob, path, err := findCodeOwners(ctx, repo, tip)
	if err != nil || blob.OID == "" {
		return nil, err
	}
	key := ownersKey{blob: blob.OID, base: git.ObjectID(m.BaseSHA), head: git.ObjectID(m.HeadSHA)}
	if owned, ok := s.caches.owners.Get(key); ok {
		return owned, nil
	}
	file, err := s.codeOwnersFile(ctx, p, repo, blob, path)
	if err != nil {
		return nil, err
	}
	var owned []codeowners.SectionOwners
	if file.index != nil {
		changed, err := repo.ChangedPaths(ctx, key.base, key.head)
		if err != nil {
			return nil, err
		}
		paths := make([]string, 0, len(changed))
		for path := range changed {
			paths = append(paths, path)
		}
		slices.Sort(paths)
		if len(paths) > maxOwnedPaths {
			paths = paths[:maxOwnedPaths]
		}
		owned = compact(file.index.OwnersFor(paths))
	}
	s.caches.owners.Add(key, owned)
	return owned, nil
}

// compact keeps of owners what the rules use, in memory of its own (not
// the lines of the parsed file the names were cut from).
func compact(owned []codeowners.SectionOwners) []codeowners.SectionOwners {
	for i := range owned {
		owned[i].Patterns = nil
		owned[i].Owners = slices.Clone(owned[i].Owners)
		for j, o := range owned[i].Owners {
			owned[i].Owners[j] = strings.Clone(o)
		}
		owned[i].Section = strings.Clone(owned[i].Section)
	}
	return owned
}

// findCodeOwners finds the CODEOWNERS blob of a commit: the first of
// CodeOwnersPaths that is a file (none: an empty OID).
func findCodeOwners(ctx context.Context, repo *gitrepo.Repo, commit git.ObjectID) (blob catfile.ObjectInfo, path string, err error) {
	for _, path := range CodeOwnersPaths {
		info, err := repo.ObjectAt(ctx, commit, path)
		switch {
		case errors.Is(err, gitrepo.ErrPathNotFound):
			continue
		case err != nil:
			return catfile.ObjectInfo{}, "", fmt.Errorf("find %s at %s: %w", path, commit, err)
		case info.Type == "blob":
			return info, path, nil
		}
	}
	return catfile.ObjectInfo{}, "", nil
}

// codeOwnersFile parses a CODEOWNERS blob once (cached by its id), its
// size checked before it is read. A file over a bound is logged and
// gives no owners.
func (s *Service) codeOwnersFile(ctx context.Context, p model.Project, repo *gitrepo.Repo, blob catfile.ObjectInfo, path string) (codeOwnersFile, error) {
	if f, ok := s.caches.indexes.Get(blob.OID); ok {
		return f, nil
	}
	var f codeOwnersFile
	if f.invalid = codeowners.CheckSize(blob.Size); f.invalid == nil {
		_, data, err := repo.ReadObject(ctx, string(blob.OID))
		if err != nil {
			return f, fmt.Errorf("read %s: %w", path, err)
		}
		file, errs := codeowners.Parse(data)
		var limit *codeowners.LimitError
		if len(errs) > 0 && errors.As(errs[0], &limit) {
			f.invalid = limit
		} else {
			f.index = file.Index()
		}
	}
	if f.invalid != nil {
		s.log.Warn("approvals: CODEOWNERS ignored, no code owner rules come from it", "project_id", p.ID, "path", path,
			"blob", blob.OID, "size", blob.Size, "reason", f.invalid.Error())
	}
	s.caches.indexes.Add(blob.OID, f)
	return f, nil
}

// ownerResolver resolves the owners of one read, each owner once.
type ownerResolver struct {
	s     *Service
	p     model.Project
	users map[string]resolved // by owner as written
	roles map[string][]int64  // by role
}

type resolved struct {
	userID, groupID int64
}

// resolve finds the users (one, or a role's members) or the group an
// owner names; none when Quarry knows nobody by that name.
func (r *ownerResolver) resolve(ctx context.Context, owner string) (userIDs []int64, groupID int64, err error) {
	if kind, role := codeowners.Classify(owner); kind == codeowners.KindRole {
		ids, ok := r.roles[role]
		if !ok {
			if ids, err = r.s.roleMembers(ctx, r.p, role); err != nil {
				return nil, 0, err
			}
			r.roles[role] = ids
		}
		return ids, 0, nil
	}
	res, ok := r.users[owner]
	if !ok {
		if res.userID, res.groupID, err = r.s.resolveOwner(ctx, owner); err != nil {
			return nil, 0, err
		}
		r.users[owner] = res
	}
	if res.userID != 0 {
		userIDs = []int64{res.userID}
	}
	return userIDs, res.groupID, nil
}

// resolveOwner finds the user or group a CODEOWNERS owner names (0, 0:
// nobody Quarry knows).
func (s *Service) resolveOwner(ctx context.Context, owner string) (userID, groupID int64, err error) {
	kind, name := codeowners.Classify(owner)
	notFound := func(err error) bool { return errors.Is(err, model.ErrNotFound) }
	switch kind {
	case codeowners.KindEmail:
		u, err := s.db.UserByEmail(ctx, strings.ToLower(name))
		if err == nil {
			return u.ID, 0, nil
		}
		if notFound(err) {
			return 0, 0, nil
		}
		return 0, 0, err
	case codeowners.KindName:
		u, err := s.db.UserByUsername(ctx, name)
		if err == nil {
			return u.ID, 0, nil
		}
		if !notFound(err) {
			return 0, 0, err
		}
		fallthrough
	case codeowners.KindGroup:
		g, err := s.db.GroupByFullPath(ctx, name)
		if err == nil {
			return 0, g.ID, nil
		}
		if notFound(err) {
			return 0, 0, nil
		}
		return 0, 0, err
	}
	return 0, 0, nil
}

// roleMembers are the project's members with at least a role
// (@@developer, @@maintainer, @@owner).
func (s *Service) roleMembers(ctx context.Context, p model.Project, role string) ([]int64, error) {
	level, ok := map[string]model.AccessLevel{"developer": model.Developer, "maintainer": model.Maintainer, "owner": model.Owner}[role]
	if !ok {
		return nil, nil
	}
	return s.db.ProjectUserIDsAtLeast(ctx, p.ID, level, s.today())
}
