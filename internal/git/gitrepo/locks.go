package gitrepo

import (
	"context"
	"hash/fnv"
)

// branchLocks serialize this process's writers of one branch over a
// fixed set of locks; branches that share a stripe wait for each other,
// which is harmless.
type branchLocks [64]chan struct{}

func newBranchLocks() *branchLocks {
	var l branchLocks
	for i := range l {
		l[i] = make(chan struct{}, 1)
	}
	return &l
}

// LockBranch waits until no other writer of this process holds the
// branch (or ctx ends) and returns the release. Writers of one branch
// that take turns do not keep rebuilding their commits on each other's;
// the compare-and-swap of UpdateRef still guards against pushes and
// other processes.
func (r *Repo) LockBranch(ctx context.Context, branch string) (func(), error) {
	h := fnv.New32a()
	h.Write([]byte(r.path + "\x00" + branch))
	ch := r.locks[h.Sum32()%uint32(len(r.locks))]
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
