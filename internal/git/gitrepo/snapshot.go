package gitrepo

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"quarry/internal/git"
)

// ErrNoRepository is a repository that has not been created (or is gone).
var ErrNoRepository = errors.New("repository does not exist")

// Snapshot is a consistent copy of a bare repository on its way into a
// tar: the refs as one moment saw them and every object they reach.
//
// How it stays consistent while pushes and housekeeping go on: the refs
// are read first and written as one packed-refs file, so every object
// they name already exists somewhere in the object store. Objects are
// only ever added, except by repacking, which writes the new pack before
// it deletes the loose objects and packs it replaces. The loose objects
// are listed before the packs, and the packs are opened at once (an open
// file stays readable when repacking deletes it); a loose object that is
// gone by the time it is read has therefore moved into a pack that a new
// listing of the packs finds, and that listing is added at the end.
// Lock files, temporary objects and quarantines, hooks and derived
// indexes (commit-graph, bitmaps, reverse and multi-pack indexes, which
// git rebuilds or does without) are never copied.
type Snapshot struct {
	head, config, refs []byte
	objDirs            []string // the repository's objects folder and its alternates'
	loose              []looseObject
	packs              []*snapshotPack
	seen               map[string]bool // packs included, by name
	when               time.Time
}

type looseObject struct{ dir, name string } // name: "ab/cdef…"

type snapshotPack struct {
	name      string // "pack-<id>"
	pack, idx *os.File
}

// maxPackListings bounds how often the packs are listed again while
// repacking keeps replacing them.
const maxPackListings = 8

// OpenSnapshot reads the refs and opens the packs of the repository; the
// snapshot must be closed. ErrNoRepository when there is no repository.
func (r *Repo) OpenSnapshot(ctx context.Context) (*Snapshot, error) {
	head, err := os.ReadFile(filepath.Join(r.path, "HEAD"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoRepository
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: read HEAD: %w", err)
	}
	config, err := os.ReadFile(filepath.Join(r.path, "config"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot: read config: %w", err)
	}
	refs, err := r.run(ctx, git.Command{Name: "for-each-ref", Flags: []git.Flag{{Name: "--format", Value: "%(objectname) %(refname)"}}}, git.Options{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: list refs: %w", err)
	}
	// Folders and the synthesized files carry the time of HEAD.
	var when time.Time
	if st, err := os.Stat(filepath.Join(r.path, "HEAD")); err == nil {
		when = st.ModTime()
	}
	s := &Snapshot{head: head, config: config, refs: refs, seen: map[string]bool{}, when: when}
	objects := filepath.Join(r.path, "objects")
	s.objDirs = append([]string{objects}, alternates(objects)...)
	for _, dir := range s.objDirs {
		names, err := looseObjects(dir)
		if err != nil {
			return nil, fmt.Errorf("snapshot: list loose objects: %w", err)
		}
		for _, n := range names {
			s.loose = append(s.loose, looseObject{dir: dir, name: n})
		}
	}
	if err := s.addPacks(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// alternates lists the object folders the repository borrows from.
func alternates(objects string) []string {
	b, err := os.ReadFile(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		out = append(out, filepath.Clean(line))
	}
	return out
}

// lowerHex reports a non-empty run of lower-case hex digits.
func lowerHex(s string) bool { return s != "" && isHex(s) }

// looseObjects lists the loose objects of an objects folder as "ab/cdef…",
// sorted; temporary files (tmp_obj_*) have other names and are left out.
func looseObjects(objects string) ([]string, error) {
	dirs, err := os.ReadDir(objects)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 || !lowerHex(d.Name()) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(objects, d.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if n := f.Name(); f.Type().IsRegular() && (len(n) == 38 || len(n) == 62) && lowerHex(n) {
				out = append(out, d.Name()+"/"+n)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// packNames lists the complete packs (a .pack with its .idx) of an objects
// folder; a pack still being written (tmp_pack_*, or no index yet) is
// left out, as git leaves it out.
func packNames(objects string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(objects, "pack"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name()] = true
	}
	var out []string
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".pack")
		id, isPack := strings.CutPrefix(base, "pack-")
		if ok && isPack && lowerHex(id) && have[base+".idx"] {
			out = append(out, base)
		}
	}
	sort.Strings(out)
	return out, nil
}

// addPacks opens every complete pack not yet included. A pack deleted
// between the listing and the opening was replaced by a newer one: the
// packs are listed again (a bounded number of times).
func (s *Snapshot) addPacks() error {
	for attempt := 0; ; attempt++ {
		vanished := false
		for _, dir := range s.objDirs {
			names, err := packNames(dir)
			if err != nil {
				return fmt.Errorf("snapshot: list packs: %w", err)
			}
			for _, n := range names {
				key := dir + "\x00" + n
				if s.seen[key] {
					continue
				}
				p, err := openPack(filepath.Join(dir, "pack"), n)
				if errors.Is(err, fs.ErrNotExist) {
					vanished = true
					continue
				}
				if err != nil {
					return err
				}
				s.seen[key] = true
				s.packs = append(s.packs, p)
			}
		}
		if !vanished {
			return nil
		}
		if attempt == maxPackListings {
			return errors.New("snapshot: packs keep changing")
		}
	}
}

func openPack(dir, name string) (*snapshotPack, error) {
	idx, err := os.Open(filepath.Join(dir, name+".idx"))
	if err != nil {
		return nil, err
	}
	pack, err := os.Open(filepath.Join(dir, name+".pack"))
	if err != nil {
		idx.Close()
		return nil, err
	}
	return &snapshotPack{name: name, pack: pack, idx: idx}, nil
}

// Close releases the open packs.
func (s *Snapshot) Close() error {
	for _, p := range s.packs {
		p.pack.Close()
		p.idx.Close()
	}
	s.packs = nil
	return nil
}

// WriteTar writes the snapshot to w as an uncompressed tar of a bare
// repository folder (HEAD, config, packed-refs, refs/, objects/),
// streaming every object file; a copy that `git clone` accepts.
func (s *Snapshot) WriteTar(ctx context.Context, w io.Writer) error {
	tw := tar.NewWriter(w)
	for _, d := range []string{"refs/", "refs/heads/", "refs/tags/", "objects/", "objects/info/", "objects/pack/"} {
		if err := s.dir(tw, d); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"HEAD", s.head}, {"config", s.config}, {"packed-refs", s.packedRefs()}} {
		if f.name == "config" && f.data == nil {
			continue
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: s.when}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := s.writePacks(ctx, tw, 0); err != nil {
		return err
	}
	vanished, err := s.writeLoose(ctx, tw)
	if err != nil {
		return err
	}
	if vanished {
		// Repacking moved loose objects into packs we have not seen yet.
		done := len(s.packs)
		if err := s.addPacks(); err != nil {
			return err
		}
		if err := s.writePacks(ctx, tw, done); err != nil {
			return err
		}
	}
	return tw.Close()
}

// packedRefs renders the refs as a packed-refs file (no traits: git reads
// it as it is, unsorted and unpeeled).
func (s *Snapshot) packedRefs() []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(string(s.refs), "\n") {
		if id, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && lowerHex(id) && strings.HasPrefix(name, "refs/") {
			b.WriteString(id + " " + name + "\n")
		}
	}
	return b.Bytes()
}

func (s *Snapshot) dir(tw *tar.Writer, name string) error {
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: s.when})
}

func (s *Snapshot) writePacks(ctx context.Context, tw *tar.Writer, from int) error {
	for _, p := range s.packs[from:] {
		for _, f := range []struct {
			file *os.File
			ext  string
		}{{p.pack, ".pack"}, {p.idx, ".idx"}} {
			if err := copyFile(ctx, tw, "objects/pack/"+p.name+f.ext, f.file); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeLoose copies the loose objects; vanished reports one that was gone
// (moved into a pack meanwhile).
func (s *Snapshot) writeLoose(ctx context.Context, tw *tar.Writer) (vanished bool, err error) {
	dirs := map[string]bool{}
	for _, o := range s.loose {
		f, err := os.Open(filepath.Join(o.dir, filepath.FromSlash(o.name)))
		if errors.Is(err, fs.ErrNotExist) {
			vanished = true
			continue
		}
		if err != nil {
			return vanished, err
		}
		if d := "objects/" + o.name[:3]; !dirs[d] {
			dirs[d] = true
			if err := s.dir(tw, d); err != nil {
				f.Close()
				return vanished, err
			}
		}
		err = copyFile(ctx, tw, "objects/"+o.name, f)
		f.Close()
		if err != nil {
			return vanished, err
		}
	}
	return vanished, nil
}

// copyFile adds an open file to the tar under name. Object files never
// change once written, so the size read first is the size copied.
func copyFile(ctx context.Context, tw *tar.Writer, name string, f *os.File) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(st.Mode().Perm()), Size: st.Size(), ModTime: st.ModTime()}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	n, err := io.Copy(tw, ctxReader{ctx, io.LimitReader(f, st.Size())})
	if err == nil && n != st.Size() {
		err = fmt.Errorf("snapshot: %s is shorter than its size", name)
	}
	return err
}

// ctxReader stops a long copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
