package gitrepo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"quarry/internal/git"
)

// Strategy is how much an optimization of a repository does, in GitLab's
// terms of housekeeping tasks.
type Strategy int

const (
	// Incremental does what the repository's state calls for (Gitaly's
	// heuristics): loose objects into a pack once enough have gathered
	// (a geometric repack, which keeps every object of the packs it
	// rolls up), a full repack once packs have piled up, loose refs
	// packed, and the commit-graph brought up to date.
	Incremental Strategy = iota
	// Full repacks every object into one pack with a reachability
	// bitmap; unreachable objects leave the pack as loose objects that
	// keep the age of the pack they were in, for a later prune.
	Full
	// GC is Full plus the prune of unreachable objects older than the
	// grace (Options.PruneBefore), and a commit-graph rewritten whole.
	GC
)

// ParseStrategy reads a strategy's name (incremental, full, gc).
func ParseStrategy(s string) (Strategy, bool) {
	switch s {
	case "incremental":
		return Incremental, true
	case "full":
		return Full, true
	case "gc":
		return GC, true
	}
	return 0, false
}

func (s Strategy) String() string {
	switch s {
	case Full:
		return "full"
	case GC:
		return "gc"
	}
	return "incremental"
}

// OptimizeOptions say what Optimize does.
type OptimizeOptions struct {
	Strategy Strategy
	// PruneBefore is the grace's end for GC: unreachable objects last
	// written before it go, younger ones stay, so the objects of a push
	// or of a commit written without a work tree whose ref is not
	// updated yet are never lost. Zero: nothing is pruned.
	PruneBefore time.Time
}

// Optimized says what Optimize did.
type Optimized struct {
	Repack      string // "", "incremental" or "full"
	Pruned      bool
	PackedRefs  bool
	CommitGraph bool
}

// Thresholds of the incremental strategy.
const (
	// looseLimit is how many loose objects a repository gathers before
	// they are packed: reads of packed objects are much cheaper.
	looseLimit = 256
	// packLimit is how many packs a repository gathers before a full
	// repack (geometric repacks keep their number logarithmic).
	packLimit = 16
	// looseRefLimit is how many loose refs a repository gathers before
	// they are packed.
	looseRefLimit = 16
)

// ObjectStats are the counts `git count-objects -v` gives, and whether
// the repository has a reachability bitmap and a commit-graph.
type ObjectStats struct {
	Loose, InPack, Packs, Garbage int64
	// SizeLoose and SizePack are in KiB, as git counts them.
	SizeLoose, SizePack int64
	Bitmap, CommitGraph bool
}

// Stats counts the repository's objects.
func (r *Repo) Stats(ctx context.Context) (ObjectStats, error) {
	out, err := r.run(ctx, git.Command{Name: "count-objects", Flags: []git.Flag{{Name: "-v"}}}, git.Options{})
	if err != nil {
		return ObjectStats{}, err
	}
	var st ObjectStats
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "count":
			st.Loose = n
		case "size":
			st.SizeLoose = n
		case "in-pack":
			st.InPack = n
		case "packs":
			st.Packs = n
		case "size-pack":
			st.SizePack = n
		case "garbage":
			st.Garbage = n
		}
	}
	packs, _ := os.ReadDir(filepath.Join(r.path, "objects", "pack"))
	for _, e := range packs {
		if strings.HasSuffix(e.Name(), ".bitmap") {
			st.Bitmap = true
		}
	}
	st.CommitGraph = exists(filepath.Join(r.path, "objects", "info", "commit-graph")) ||
		exists(filepath.Join(r.path, "objects", "info", "commit-graphs", "commit-graph-chain"))
	return st, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Tidy removes what a crash left beside the repository (the folders of a
// creation or a move, once an hour old). It runs no git.
func (r *Repo) Tidy() { r.removeOldAside() }

// Optimize is the repository's housekeeping (see Strategy). The
// repository is served meanwhile: git's repack writes the new pack before
// it removes the old ones, readers find objects in either, ref updates
// take their own locks, and no object younger than the grace is removed.
// Callers run one Optimize per repository at a time (the housekeeping
// lease).
func (r *Repo) Optimize(ctx context.Context, o OptimizeOptions) (Optimized, error) {
	var done Optimized
	r.removeOldAside()
	if !r.Exists() {
		return done, nil
	}
	st, err := r.Stats(ctx)
	if err != nil {
		return done, err
	}
	full := o.Strategy >= Full || st.Packs >= packLimit
	prune := o.Strategy == GC && !o.PruneBefore.IsZero()
	before := o.PruneBefore.UTC().Format("2006-01-02 15:04:05 -0700")
	switch {
	case full:
		// -A: unreachable packed objects come out loose with their pack's
		// age; with a prune, those already past the grace are dropped
		// instead (--unpack-unreachable), as git gc does.
		flags := []git.Flag{{Name: "-A"}, {Name: "-d"}, {Name: "-q"}, {Name: "-b"}}
		if prune {
			flags = append(flags, git.Flag{Name: "--unpack-unreachable", Value: before})
		}
		if _, err := r.run(ctx, git.Command{Name: "repack", Flags: flags}, git.Options{}); err != nil {
			return done, err
		}
		done.Repack = "full"
	case st.Loose >= looseLimit:
		if _, err := r.run(ctx, git.Command{Name: "repack", Flags: []git.Flag{{Name: "-d"}, {Name: "-q"},
			{Name: "--geometric", Value: "2"}}}, git.Options{}); err != nil {
			return done, err
		}
		done.Repack = "incremental"
	}
	if prune {
		if _, err := r.run(ctx, git.Command{Name: "prune", Flags: []git.Flag{{Name: "--expire", Value: before}}}, git.Options{}); err != nil {
			return done, err
		}
		done.Pruned = true
	}
	if o.Strategy >= Full || r.looseRefs(looseRefLimit) >= looseRefLimit {
		if _, err := r.run(ctx, git.Command{Name: "pack-refs", Flags: []git.Flag{{Name: "--all"}}}, git.Options{}); err != nil {
			return done, err
		}
		done.PackedRefs = true
	}
	if done.Repack != "" || !st.CommitGraph || o.Strategy >= Full {
		// A split graph costs what the new commits cost; after a prune
		// it is rewritten whole, so it names no commit that is gone.
		split := "--split"
		if done.Pruned {
			split = "--split=replace"
		}
		if _, err := r.run(ctx, git.Command{Name: "commit-graph", Sub: "write", Flags: []git.Flag{{Name: "--reachable"},
			{Name: split}, {Name: "--changed-paths"}, {Name: "--size-multiple", Value: "4"}}}, git.Options{}); err != nil {
			return done, err
		}
		done.CommitGraph = true
	}
	return done, nil
}

// looseRefs counts the files under refs/, stopping at limit.
func (r *Repo) looseRefs(limit int) int {
	n := 0
	stop := errors.New("enough")
	_ = filepath.WalkDir(filepath.Join(r.path, "refs"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() {
			if n++; n >= limit {
				return stop
			}
		}
		return nil
	})
	return n
}
