package approvals

import (
	"context"
	"errors"
	"slices"
	"strings"

	"quarry/internal/codeowners"
	"quarry/internal/git"
	"quarry/internal/model"
)

// CodeOwnersPaths are where a CODEOWNERS file is looked for, first found
// wins: the root, docs/, then Quarry's .service/ and GitLab's .gitlab/.
var CodeOwnersPaths = []string{"CODEOWNERS", "docs/CODEOWNERS", ".service/CODEOWNERS", ".gitlab/CODEOWNERS"}

// maxCodeOwnersBytes bounds the CODEOWNERS file read; maxOwnedPaths the
// changed paths matched against it (entries × paths matches).
const (
	maxCodeOwnersBytes = 1 << 20
	maxOwnedPaths      = 5000
)

// codeOwnerRules are the code_owner rules of a merge request: one per
// CODEOWNERS section owning a path the merge request changes, when the
// target branch's protection requires code owner approval. The file is
// read from the target branch. The rules are derived on every read (they
// follow the file and the changes), numbered -1, -2, … in section order.
func (s *Service) codeOwnerRules(ctx context.Context, p model.Project, m model.MergeRequest) ([]model.ApprovalRule, error) {
	required := false
	for _, b := range s.protected(ctx, p.ID) {
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
	var data []byte
	for _, path := range CodeOwnersPaths {
		b, found, err := repo.ReadFile(ctx, "refs/heads/"+m.TargetBranch, path, maxCodeOwnersBytes)
		if err != nil {
			return nil, err
		}
		if found {
			data = b
			break
		}
	}
	if data == nil {
		return nil, nil
	}
	changed, err := repo.ChangedPaths(ctx, git.ObjectID(m.BaseSHA), git.ObjectID(m.HeadSHA))
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
	file, _ := codeowners.Parse(data)
	var out []model.ApprovalRule
	for i, sec := range file.OwnersFor(paths) {
		r := model.ApprovalRule{ID: -int64(i + 1), MergeRequestID: m.ID, Name: sec.Section, RuleType: model.RuleCodeOwner,
			ApprovalsRequired: sec.ApprovalsRequired}
		if sec.Optional {
			r.ApprovalsRequired = 0
		}
		for _, owner := range sec.Owners {
			if kind, role := codeowners.Classify(owner); kind == "role" {
				ids, err := s.roleMembers(ctx, p, role)
				if err != nil {
					return nil, err
				}
				for _, uid := range ids {
					if !slices.Contains(r.UserIDs, uid) {
						r.UserIDs = append(r.UserIDs, uid)
					}
				}
				continue
			}
			uid, gid, err := s.resolveOwner(ctx, owner)
			if err != nil {
				return nil, err
			}
			if uid != 0 && !slices.Contains(r.UserIDs, uid) {
				r.UserIDs = append(r.UserIDs, uid)
			}
			if gid != 0 && !slices.Contains(r.GroupIDs, gid) {
				r.GroupIDs = append(r.GroupIDs, gid)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// resolveOwner finds the user or group a CODEOWNERS owner names (0, 0:
// nobody Quarry knows).
func (s *Service) resolveOwner(ctx context.Context, owner string) (userID, groupID int64, err error) {
	kind, name := codeowners.Classify(owner)
	notFound := func(err error) bool { return errors.Is(err, model.ErrNotFound) }
	switch kind {
	case "email":
		u, err := s.db.UserByEmail(ctx, strings.ToLower(name))
		if err == nil {
			return u.ID, 0, nil
		}
		if notFound(err) {
			return 0, 0, nil
		}
		return 0, 0, err
	case "name":
		u, err := s.db.UserByUsername(ctx, name)
		if err == nil {
			return u.ID, 0, nil
		}
		if !notFound(err) {
			return 0, 0, err
		}
		fallthrough
	case "group":
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
