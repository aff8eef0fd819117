package approvals

import (
	"context"
	"errors"
	"slices"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"quarry/internal/model"
)

// Bounds of the cache of approval inputs (per process): entries, and
// their estimated bytes (a rule naming a large group holds its members).
const (
	inputsCacheEntries = 4096
	inputsCacheBytes   = 8 << 20
)

// inputsKey names what the stored part of a merge request's inputs
// follows from: the approval versions of its project and of group
// membership (moved by triggers on every write of any process), the
// target branch (which project rules apply) and the day (memberships
// expire).
type inputsKey struct {
	projectID, mrID         int64
	targetBranch            string
	projectVersion, members int64
	today                   string
}

// storedInputs are the database state a merge request's approval state
// is computed from, as read under one key. Shared by every reader: read
// it, do not change it.
type storedInputs struct {
	// configured: anything could require approvals (ApprovalsConfigured).
	configured bool
	// loaded: the fields below were read (an entry of a merge request
	// nothing requires approvals of holds configured only).
	loaded       bool
	settings     model.ApprovalSettings
	projectRules []model.ApprovalRule // those that apply to the target branch
	mrRules      []model.ApprovalRule // the merge request's own, stored ones
	protected    []model.ProtectedBranch
	groupMembers map[int64][]int64 // of every group the rules above name
	approvals    []model.Approval
}

// size estimates the bytes an entry holds.
func (e *storedInputs) size() int64 {
	n := int64(256)
	for _, rs := range [][]model.ApprovalRule{e.projectRules, e.mrRules} {
		for _, r := range rs {
			n += 160 + int64(len(r.Name)) + 8*int64(len(r.UserIDs)+len(r.GroupIDs)+len(r.ProtectedBranchIDs))
		}
	}
	for _, b := range e.protected {
		n += 96 + int64(len(b.Name))
	}
	for _, m := range e.groupMembers {
		n += 48 + 8*int64(len(m))
	}
	return n + 40*int64(len(e.approvals))
}

// inputsCache is a per-process LRU of stored inputs bounded by entries
// and estimated bytes.
type inputsCache struct {
	mu    sync.Mutex
	lru   *lru.Cache[inputsKey, *storedInputs]
	bytes int64
	max   int64
}

func newInputsCache(entries int, maxBytes int64) *inputsCache {
	c := &inputsCache{max: maxBytes}
	l, err := lru.NewWithEvict(entries, func(_ inputsKey, e *storedInputs) { c.bytes -= e.size() })
	if err != nil {
		panic(err) // only for entries <= 0
	}
	c.lru = l
	return c
}

func (c *inputsCache) get(k inputsKey) (*storedInputs, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(k)
}

func (c *inputsCache) add(k inputsKey, e *storedInputs) {
	size := e.size()
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(k)
	c.bytes += size
	c.lru.Add(k, e)
	for c.bytes > c.max {
		c.lru.RemoveOldest()
	}
}

// stored returns the stored part of a merge request's inputs: from the
// cache when the approval versions read first still name it, else read
// (and cached). full: the fields are needed, not only whether anything
// is configured. The versions are read before anything else, so an
// entry never holds state older than its key.
func (s *Service) stored(ctx context.Context, p model.Project, m model.MergeRequest, full bool) (*storedInputs, error) {
	pv, mv, err := s.db.ApprovalVersions(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	k := inputsKey{projectID: p.ID, mrID: m.ID, targetBranch: m.TargetBranch, projectVersion: pv, members: mv, today: s.today()}
	if e, ok := s.inputsCache.get(k); ok && (e.loaded || !full) {
		return e, nil
	}
	if !full {
		configured, err := s.db.ApprovalsConfigured(ctx, p.ID, m.ID)
		if err != nil {
			return nil, err
		}
		if !configured {
			e := &storedInputs{}
			s.inputsCache.add(k, e)
			return e, nil
		}
	}
	e, err := s.readStored(ctx, p, m)
	if err != nil {
		return nil, err
	}
	s.inputsCache.add(k, e)
	return e, nil
}

// readStored reads the stored part of a merge request's inputs.
func (s *Service) readStored(ctx context.Context, p model.Project, m model.MergeRequest) (*storedInputs, error) {
	e := &storedInputs{loaded: true}
	var err error
	if e.settings, err = s.db.ApprovalSettings(ctx, p.ID); err != nil {
		return nil, err
	}
	rules, err := s.db.ProjectApprovalRules(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	protected, err := s.projects.ProtectedRules(ctx, p.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return nil, err // not kept: a failed read is not the state of a version
	}
	for _, b := range protected {
		// Approvals use a protected branch's name, id and code owner
		// setting only.
		e.protected = append(e.protected, model.ProtectedBranch{ID: b.ID, ProjectID: b.ProjectID, Name: b.Name,
			CodeOwnerApprovalRequired: b.CodeOwnerApprovalRequired})
	}
	e.projectRules = rulesForBranch(rules, m.TargetBranch, e.protected)
	if e.mrRules, err = s.db.MergeRequestApprovalRules(ctx, m.ID); err != nil {
		return nil, err
	}
	// As ApprovalsConfigured decides it.
	e.configured = e.settings.ApprovalsBeforeMerge > 0 || len(rules) > 0 || len(e.mrRules) > 0 ||
		slices.ContainsFunc(e.protected, func(b model.ProtectedBranch) bool { return b.CodeOwnerApprovalRequired })
	e.groupMembers = map[int64][]int64{}
	for _, r := range append(slices.Clone(e.projectRules), e.mrRules...) {
		if err := s.addGroupMembers(ctx, e.groupMembers, r.GroupIDs); err != nil {
			return nil, err
		}
	}
	if e.approvals, err = s.db.Approvals(ctx, m.ID); err != nil {
		return nil, err
	}
	return e, nil
}

// addGroupMembers reads the members of the groups not yet in members.
func (s *Service) addGroupMembers(ctx context.Context, members map[int64][]int64, groupIDs []int64) error {
	for _, gid := range groupIDs {
		if _, ok := members[gid]; ok {
			continue
		}
		ids, err := s.db.GroupMemberIDs(ctx, gid, s.today())
		if err != nil {
			return err
		}
		members[gid] = ids
	}
	return nil
}
