package gitrepo

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// A storage is usable when its root is a folder Quarry can write in.
// NewStoragesWith checks every storage once (its root is made if missing,
// "default" with its parents, the others only when their parent folder
// exists, so that a storage on a volume that is not mounted is reported
// rather than made on the wrong disk); Usable checks again when its last
// answer is older than usableTTL. An unusable storage is never picked for
// a new repository, and a move to it fails with the reason.

// usableTTL is how long an answer of Usable is reused.
const usableTTL = 10 * time.Second

type usability struct {
	mu      sync.Mutex
	checked map[string]usableAnswer
}

type usableAnswer struct {
	err error
	at  time.Time
}

// probe checks that root is a folder in which files can be made.
func probe(root string) error {
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", root)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	f, err := os.OpenFile(filepath.Join(root, ".quarry-probe-"+hex.EncodeToString(b[:])), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("not writable: %w", err)
	}
	name := f.Name()
	werr := f.Close()
	if rerr := os.Remove(name); werr == nil {
		werr = rerr
	}
	if werr != nil {
		return fmt.Errorf("not writable: %w", werr)
	}
	return nil
}

// prepareRoot makes a storage's root if it is missing (see above) and
// checks it.
func prepareRoot(name, root string) error {
	if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
		if name == "default" {
			err = os.MkdirAll(root, 0o750)
		} else {
			err = os.Mkdir(root, 0o750)
		}
		if err != nil {
			return fmt.Errorf("missing and cannot be made: %w", err)
		}
	}
	return probe(root)
}

// Usable reports why storage name cannot take repositories now (nil when
// it can): not configured, missing, not a folder, not writable.
func (s *Storages) Usable(name string) error {
	root, ok := s.roots[name]
	if !ok {
		return fmt.Errorf("unknown repository storage %q", name)
	}
	s.usable.mu.Lock()
	defer s.usable.mu.Unlock()
	if a, ok := s.usable.checked[name]; ok && time.Since(a.at) < usableTTL {
		return a.err
	}
	err := probe(root)
	if err != nil {
		err = fmt.Errorf("repository storage %s (%s) is not usable: %w", name, root, err)
	}
	s.usable.checked[name] = usableAnswer{err: err, at: time.Now()}
	return err
}

// Unusable lists the storages that cannot take repositories, with the
// reason, by name (for the log at start).
func (s *Storages) Unusable() map[string]error {
	out := map[string]error{}
	for _, name := range s.Names() {
		if err := s.Usable(name); err != nil {
			out[name] = err
		}
	}
	return out
}

// Root is the folder of storage name.
func (s *Storages) Root(name string) (string, bool) {
	root, ok := s.roots[name]
	return root, ok
}

// SameRoot reports whether two storages keep their repositories in the
// same folder (a move between them copies nothing).
func (s *Storages) SameRoot(a, b string) bool {
	ra, oka := s.roots[a]
	rb, okb := s.roots[b]
	if !oka || !okb {
		return false
	}
	if filepath.Clean(ra) == filepath.Clean(rb) {
		return true
	}
	fa, erra := os.Stat(ra)
	fb, errb := os.Stat(rb)
	return erra == nil && errb == nil && os.SameFile(fa, fb)
}

// ErrNoStorage reports that no storage may take a new repository: none
// has a weight above zero and is usable.
var ErrNoStorage = errors.New("no usable repository storage has a weight above zero")

// Pick chooses the storage of a new repository (of any kind: project,
// group wiki, snippet) or the destination of a move: a weighted random
// choice among the storages with a weight above zero in weights (the
// application setting repository_storages_weighted) that are configured
// and usable, leaving out exclude.
func (s *Storages) Pick(weights map[string]int64, exclude ...string) (string, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := PickWeighted(weights, binary.LittleEndian.Uint64(b[:]), func(name string) bool {
		for _, x := range exclude {
			if x == name {
				return false
			}
		}
		return s.Has(name) && s.Usable(name) == nil
	})
	if name == "" {
		return "", ErrNoStorage
	}
	return name, nil
}

// PickWeighted is the weighted choice of Pick, without its randomness:
// among the names eligible says yes to with a weight above zero, in name
// order, the one that r (uniform over uint64) falls on, each taking a
// share of the range proportional to its weight; "" when there is none.
func PickWeighted(weights map[string]int64, r uint64, eligible func(name string) bool) string {
	names := make([]string, 0, len(weights))
	var total uint64
	for name, w := range weights {
		if w > 0 && eligible(name) {
			names = append(names, name)
			total += uint64(w)
		}
	}
	if total == 0 {
		return ""
	}
	sort.Strings(names)
	at := r % total
	for _, name := range names {
		w := uint64(weights[name])
		if at < w {
			return name
		}
		at -= w
	}
	return names[len(names)-1]
}
