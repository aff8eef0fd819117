package gitrepo

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
)

// Finding the last commit that changed a path is the hot part of reading a
// file. Spawning `git rev-list -1 -- path` costs milliseconds per request,
// so history is walked here instead, over the warm cat-file process: what
// each commit changed against its parent is computed once (comparing only
// the subtrees whose ids differ) and kept, and a lookup walks those change
// sets in memory. Merges and very long walks fall back to rev-list, whose
// history simplification they need.

// maxWalk bounds the commits a lookup walks in memory before it asks git.
const maxWalk = 2000

// changeSet is what one commit changed against its first parent.
type changeSet struct {
	parents []git.ObjectID
	// paths holds every changed path and each folder above one.
	paths map[string]struct{}
	// replaced holds paths whose whole subtree changed (a folder added,
	// removed or turned into a file).
	replaced map[string]struct{}
}

// touches reports whether the commit changed path (or anything below it).
func (cs *changeSet) touches(path string) bool {
	if _, ok := cs.paths[path]; ok {
		return true
	}
	for p := path; ; {
		if _, ok := cs.replaced[p]; ok {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// changeSets caches change sets by repository and commit: a commit's
// changes never change. Walks read it at every step, so reads take no
// lock; when it grows past maxChangeSets it starts afresh.
var changeSets struct {
	m sync.Map // commitAt → *changeSet
	n atomic.Int64
}

const maxChangeSets = 200000

func cachedChanges(k commitAt) (*changeSet, bool) {
	v, ok := changeSets.m.Load(k)
	if !ok {
		return nil, false
	}
	return v.(*changeSet), true
}

func storeChanges(k commitAt, cs *changeSet) {
	if changeSets.n.Add(1) > maxChangeSets {
		changeSets.m.Clear()
		changeSets.n.Store(1)
	}
	changeSets.m.Store(k, cs)
}

// commitAt names a commit of a repository.
type commitAt struct{ repo, commit string }

// LastCommit returns the newest commit at or before commit that changed
// path (rev-list's answer for `commit -- path`).
func (r *Repo) LastCommit(ctx context.Context, commit git.ObjectID, path string) (git.ObjectID, error) {
	key := pathAt{r.path, string(commit), path}
	if v, ok := lastCommits.get(key); ok {
		return v, nil
	}
	id, err := r.walkLastCommit(ctx, commit, path)
	if err != nil {
		return "", err
	}
	lastCommits.put(key, id)
	return id, nil
}

func (r *Repo) walkLastCommit(ctx context.Context, commit git.ObjectID, path string) (git.ObjectID, error) {
	var found git.ObjectID
	fallback := git.ObjectID("")
	err := r.withCat(ctx, func(p *catfile.Process) error {
		if _, err := p.Info(string(commit) + ":" + path); err != nil {
			if errors.Is(err, catfile.ErrMissing) {
				return ErrPathNotFound
			}
			return err
		}
		cur := commit
		for steps := 0; steps < maxWalk; steps++ {
			// Another walk may have answered from here (typically from the
			// branch's previous tips); looking at the first few commits
			// and then every 16th bounds the detour at little cost.
			if steps > 0 && (steps < 4 || steps%16 == 0) {
				if v, ok := lastCommits.get(pathAt{r.path, string(cur), path}); ok {
					found = v
					return nil
				}
			}
			cs, err := r.changes(p, cur)
			if err != nil {
				return err
			}
			switch {
			case len(cs.parents) == 0 || cs.touches(path):
				found = cur
				return nil
			case len(cs.parents) > 1:
				fallback = cur
				return nil
			}
			cur = cs.parents[0]
		}
		fallback = cur
		return nil
	})
	if err != nil || fallback == "" {
		return found, err
	}
	return r.revListLast(ctx, fallback, path)
}

// revListLast asks git for the last commit changing path from commit.
func (r *Repo) revListLast(ctx context.Context, commit git.ObjectID, path string) (git.ObjectID, error) {
	out, err := r.run(ctx, git.Command{Name: "rev-list", Flags: []git.Flag{{Name: "--max-count", Value: "1"}},
		Args: []string{string(commit)}, PathArgs: []string{path}}, git.Options{})
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(out))
	if id == "" {
		return "", ErrPathNotFound
	}
	return git.ObjectID(id), nil
}

// changes returns (and caches) what commit changed against its first
// parent; merges carry only their parents.
func (r *Repo) changes(p *catfile.Process, commit git.ObjectID) (*changeSet, error) {
	key := commitAt{r.path, string(commit)}
	if cs, ok := cachedChanges(key); ok {
		return cs, nil
	}
	info, data, err := p.Contents(string(commit))
	if err != nil {
		return nil, err
	}
	c, err := ParseCommit(info.OID, data)
	if err != nil {
		return nil, err
	}
	cs := &changeSet{paths: map[string]struct{}{}, replaced: map[string]struct{}{}}
	for _, id := range c.ParentIDs {
		cs.parents = append(cs.parents, git.ObjectID(id))
	}
	if len(cs.parents) == 1 {
		_, pdata, err := p.Contents(string(cs.parents[0]))
		if err != nil {
			return nil, err
		}
		parent, err := ParseCommit(cs.parents[0], pdata)
		if err != nil {
			return nil, err
		}
		if err := diffTrees(p, parent.Tree, c.Tree, "", cs); err != nil {
			return nil, err
		}
	}
	storeChanges(key, cs)
	return cs, nil
}

// treeEntry is one parsed entry of a tree object.
type treeEntry struct {
	mode string
	oid  string // hex
}

// parseTree reads a raw tree object: "<mode> <name>\0<binary id>"...
func parseTree(data []byte, idLen int) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+idLen {
			return nil, fmt.Errorf("malformed tree object")
		}
		out[string(data[sp+1:nul])] = treeEntry{mode: string(data[:sp]), oid: hex.EncodeToString(data[nul+1 : nul+1+idLen])}
		data = data[nul+1+idLen:]
	}
	return out, nil
}

func isTreeMode(mode string) bool { return mode == "40000" || mode == "040000" }

// diffTrees records in cs the paths that differ between trees a and b
// (under prefix), reading only subtrees whose ids differ.
func diffTrees(p *catfile.Process, a, b git.ObjectID, prefix string, cs *changeSet) error {
	if a == b {
		return nil
	}
	read := func(id git.ObjectID) (map[string]treeEntry, error) {
		_, data, err := p.Contents(string(id))
		if err != nil {
			return nil, err
		}
		return parseTree(data, len(id)/2)
	}
	ta, err := read(a)
	if err != nil {
		return err
	}
	tb, err := read(b)
	if err != nil {
		return err
	}
	mark := func(path string, whole bool) {
		if whole {
			cs.replaced[path] = struct{}{}
		}
		cs.paths[path] = struct{}{}
		for i := strings.LastIndexByte(path, '/'); i >= 0; i = strings.LastIndexByte(path[:i], '/') {
			cs.paths[path[:i]] = struct{}{}
		}
	}
	visit := func(name string, ea, eb treeEntry, inA, inB bool) error {
		if inA && inB && ea == eb {
			return nil
		}
		path := prefix + name
		if inA && inB && isTreeMode(ea.mode) && isTreeMode(eb.mode) {
			return diffTrees(p, git.ObjectID(ea.oid), git.ObjectID(eb.oid), path+"/", cs)
		}
		mark(path, (inA && isTreeMode(ea.mode)) || (inB && isTreeMode(eb.mode)))
		return nil
	}
	for name, ea := range ta {
		eb, inB := tb[name]
		if err := visit(name, ea, eb, true, inB); err != nil {
			return err
		}
	}
	for name, eb := range tb {
		if _, inA := ta[name]; !inA {
			if err := visit(name, treeEntry{}, eb, false, true); err != nil {
				return err
			}
		}
	}
	return nil
}
