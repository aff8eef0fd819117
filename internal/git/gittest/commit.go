package gittest

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Files are the files a commit writes: path (slash-separated, relative to
// the repository root) → content. Paths not named keep what the first
// parent has, unless WholeTree is given.
type Files map[string]string

// Signature is an author or committer identity.
type Signature struct {
	Name  string
	Email string
}

// The identities and clock of commits that do not choose their own.
var (
	DefaultAuthor    = Signature{Name: "Test Author", Email: "author@example.com"}
	DefaultCommitter = Signature{Name: "Test Committer", Email: "committer@example.com"}
	// BaseTime dates root commits and tags; a commit with parents is
	// dated one minute after the latest of them.
	BaseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
)

// CommitOption changes how Commit builds a commit.
type CommitOption func(*commitSpec)

type commitSpec struct {
	branch      string
	parents     []string
	hasParents  bool
	message     *string
	author      Signature
	committer   Signature
	authorAt    time.Time
	committedAt time.Time
	remove      []string
	executable  []string
	symlinks    map[string]string
	wholeTree   bool
}

// Branch makes the commit on a branch: its parent is the branch's tip (no
// parent when the branch does not exist yet, unless Parents says
// otherwise), and the branch points at the new commit afterwards. A name
// starting with "refs/" is used as it is; others are branches
// ("main" → refs/heads/main).
func Branch(name string) CommitOption {
	return func(s *commitSpec) {
		if !strings.HasPrefix(name, "refs/") {
			name = "refs/heads/" + name
		}
		s.branch = name
	}
}

// Parents sets the commit's parents (commit ids, or any revision git
// resolves to a commit), overriding the tip of Branch; with no argument the
// commit is a root commit. A merge takes its tree from the first parent.
func Parents(revs ...string) CommitOption {
	return func(s *commitSpec) { s.parents, s.hasParents = revs, true }
}

// Message sets the commit message (a final newline is added when missing).
// The default is "Update <the paths written, sorted>".
func Message(msg string) CommitOption {
	return func(s *commitSpec) { s.message = &msg }
}

// Author sets the author (default DefaultAuthor).
func Author(name, email string) CommitOption {
	return func(s *commitSpec) { s.author = Signature{name, email} }
}

// Committer sets the committer (default DefaultCommitter).
func Committer(name, email string) CommitOption {
	return func(s *commitSpec) { s.committer = Signature{name, email} }
}

// At dates the commit (author and committer) at tm, in tm's zone, to the
// second. Without it the commit is dated one minute after its latest parent,
// or at BaseTime when it has none.
func At(tm time.Time) CommitOption {
	return func(s *commitSpec) { s.authorAt, s.committedAt = tm, tm }
}

// AuthoredAt dates only the author; the committer keeps its date.
func AuthoredAt(tm time.Time) CommitOption {
	return func(s *commitSpec) { s.authorAt = tm }
}

// Remove deletes paths (files or whole folders) from the tree taken from the
// first parent. Removing a path that does not exist is not an error.
func Remove(paths ...string) CommitOption {
	return func(s *commitSpec) { s.remove = append(s.remove, paths...) }
}

// Executable gives paths written by the same commit's Files the mode
// 100755.
func Executable(paths ...string) CommitOption {
	return func(s *commitSpec) { s.executable = append(s.executable, paths...) }
}

// Symlink writes a symbolic link at path pointing to target.
func Symlink(path, target string) CommitOption {
	return func(s *commitSpec) {
		if s.symlinks == nil {
			s.symlinks = map[string]string{}
		}
		s.symlinks[path] = target
	}
}

// WholeTree makes Files (with Symlink) the commit's whole tree: nothing is
// taken from the parents.
func WholeTree() CommitOption {
	return func(s *commitSpec) { s.wholeTree = true }
}

// Commit writes a commit into the bare repository repo and returns its id.
//
// Its tree is the first parent's with files written over it (a file
// replaces a folder of the same name and the other way round) and the
// Remove paths deleted. Identity and dates are fixed (DefaultAuthor,
// DefaultCommitter, dates derived from BaseTime), so the same calls on an
// empty repository always give the same ids. Without Branch the commit is
// reachable from no ref; keep its id.
//
// It runs two git processes (one to read the parents, one fast-import), so
// histories of hundreds of commits stay quick. It does not guard against
// another writer moving the branch at the same moment.
func Commit(t testing.TB, repo string, files Files, opts ...CommitOption) string {
	t.Helper()
	s := commitSpec{author: DefaultAuthor, committer: DefaultCommitter}
	for _, o := range opts {
		o(&s)
	}
	if err := s.check(files); err != nil {
		t.Fatalf("gittest.Commit: %v", err)
	}
	parents, latest, err := s.resolveParents(repo)
	if err != nil {
		t.Fatalf("gittest.Commit: %v", err)
	}
	when := BaseTime
	if len(parents) > 0 {
		when = latest.Add(time.Minute)
	}
	if s.committedAt.IsZero() {
		s.committedAt = when
	}
	if s.authorAt.IsZero() {
		s.authorAt = when
	}

	ref := s.branch
	if ref == "" {
		// fast-import needs a ref to commit on; this one is dropped in the
		// same stream and never written.
		ref = "refs/gittest/scratch"
	}
	var b bytes.Buffer
	b.WriteString("feature done\n")
	fmt.Fprintf(&b, "commit %s\nmark :1\n", ref)
	fmt.Fprintf(&b, "author %s %s\n", s.author, stamp(s.authorAt))
	fmt.Fprintf(&b, "committer %s %s\n", s.committer, stamp(s.committedAt))
	data(&b, s.messageFor(files))
	for i, p := range parents {
		if i == 0 {
			fmt.Fprintf(&b, "from %s\n", p)
		} else {
			fmt.Fprintf(&b, "merge %s\n", p)
		}
	}
	if s.wholeTree {
		b.WriteString("deleteall\n")
	}
	for _, p := range sorted(s.remove) {
		fmt.Fprintf(&b, "D %s\n", quotePath(p))
	}
	executable := map[string]bool{}
	for _, p := range s.executable {
		executable[p] = true
	}
	for _, p := range sortedKeys(files) {
		mode := "100644"
		if executable[p] {
			mode = "100755"
		}
		fmt.Fprintf(&b, "M %s inline %s\n", mode, quotePath(p))
		data(&b, files[p])
	}
	for _, p := range sortedKeys(s.symlinks) {
		fmt.Fprintf(&b, "M 120000 inline %s\n", quotePath(p))
		data(&b, s.symlinks[p])
	}
	b.WriteString("\n")
	if s.branch == "" {
		fmt.Fprintf(&b, "reset %s\nfrom %s\n\n", ref, strings.Repeat("0", 40))
	}
	b.WriteString("get-mark :1\ndone\n")
	out, err := run(repo, nil, &b, "--git-dir="+repo, "fast-import", "--quiet", "--force", "--date-format=raw")
	if err != nil {
		t.Fatalf("gittest.Commit: %v", err)
	}
	id := strings.TrimSpace(string(out))
	if len(id) != 40 {
		t.Fatalf("gittest.Commit: fast-import answered %q", out)
	}
	return id
}

// check refuses descriptions git would misread.
func (s *commitSpec) check(files Files) error {
	for _, sig := range []Signature{s.author, s.committer} {
		if sig.Name == "" || strings.ContainsAny(sig.Name+sig.Email, "<>\n") {
			return fmt.Errorf("bad identity %q <%s>", sig.Name, sig.Email)
		}
	}
	all := map[string]string{}
	add := func(p, what string) error {
		if err := checkPath(p); err != nil {
			return err
		}
		if prev, ok := all[p]; ok {
			return fmt.Errorf("path %q is both %s and %s", p, prev, what)
		}
		all[p] = what
		return nil
	}
	for p := range files {
		if err := add(p, "a file"); err != nil {
			return err
		}
	}
	for p := range s.symlinks {
		if err := add(p, "a symlink"); err != nil {
			return err
		}
	}
	for _, p := range s.remove {
		if err := add(p, "removed"); err != nil {
			return err
		}
	}
	for _, p := range s.executable {
		if _, ok := files[p]; !ok {
			return fmt.Errorf("executable %q is not among the files", p)
		}
	}
	if s.wholeTree && len(s.remove) > 0 {
		return fmt.Errorf("Remove with WholeTree")
	}
	return nil
}

func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) {
		return fmt.Errorf("bad path %q", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
			return fmt.Errorf("bad path %q", p)
		}
	}
	return nil
}

// resolveParents returns the full ids of the parents and the latest of
// their committer dates.
func (s *commitSpec) resolveParents(repo string) ([]string, time.Time, error) {
	var out []byte
	var err error
	switch {
	case s.hasParents && len(s.parents) == 0:
		return nil, time.Time{}, nil
	case s.hasParents:
		args := []string{"--git-dir=" + repo, "log", "--no-walk=unsorted", "--format=%H %ct", "--end-of-options"}
		for _, p := range s.parents {
			args = append(args, p+"^{commit}")
		}
		out, err = run(repo, nil, nil, append(args, "--")...)
	case s.branch != "":
		out, err = run(repo, nil, nil, "--git-dir="+repo, "for-each-ref", "--format=%(refname) %(objectname) %(committerdate:unix)", s.branch)
		// A pattern also matches refs below it; keep the exact one.
		var exact []string
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == s.branch {
				exact = append(exact, f[1]+" "+f[2])
			}
		}
		out = []byte(strings.Join(exact, "\n"))
	default:
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	var ids []string
	var latest time.Time
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		sec, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("parent %s has a commit date of %q", f[0], f[1])
		}
		ids = append(ids, f[0])
		if tm := time.Unix(sec, 0); tm.After(latest) {
			latest = tm
		}
	}
	if s.hasParents && len(ids) != len(s.parents) {
		return nil, time.Time{}, fmt.Errorf("parents %q resolve to %q", s.parents, ids)
	}
	return ids, latest, nil
}

func (s *commitSpec) messageFor(files Files) string {
	var msg string
	if s.message != nil {
		msg = *s.message
	} else {
		paths := append(sortedKeys(files), sortedKeys(s.symlinks)...)
		paths = append(paths, sorted(s.remove)...)
		msg = "Update " + strings.Join(paths, ", ")
		if len(paths) == 0 {
			msg = "Empty commit"
		}
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	return msg
}

func (sig Signature) String() string { return sig.Name + " <" + sig.Email + ">" }

// stamp is a date in git's raw format: seconds and zone offset.
func stamp(tm time.Time) string {
	return strconv.FormatInt(tm.Unix(), 10) + " " + tm.Format("-0700")
}

// data writes a fast-import data block.
func data(b *bytes.Buffer, s string) {
	fmt.Fprintf(b, "data %d\n%s\n", len(s), s)
}

// quotePath quotes p the way fast-import reads paths: C style, when it
// starts with a double quote or holds a control character.
func quotePath(p string) string {
	needs := strings.HasPrefix(p, `"`)
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f {
			needs = true
		}
	}
	if !needs {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}
