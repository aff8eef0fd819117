package gitrepo

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"

	"quarry/internal/git"
)

// FileDiff is the change of one file between two trees.
type FileDiff struct {
	OldPath, NewPath string
	AMode, BMode     string // "" when absent
	Diff             string // hunks, from the first "@@"
	NewFile          bool
	RenamedFile      bool
	DeletedFile      bool
	Binary           bool
	TooLarge         bool // the diff text was left out for the limits
	Additions        int
	Deletions        int
}

// DiffLimits cap how much diff text is returned; past them a file's diff
// is empty and TooLarge reports it.
type DiffLimits struct {
	MaxFiles     int
	MaxLines     int
	MaxFileBytes int
}

// InstanceDiffLimits are the limits of the instance's settings
// (diff_max_files, diff_max_lines, diff_max_patch_bytes), GitLab's
// defaults where a value is not positive.
func InstanceDiffLimits(files, lines, patchBytes int64) DiffLimits {
	l := DefaultDiffLimits
	if files > 0 {
		l.MaxFiles = int(files)
	}
	if lines > 0 {
		l.MaxLines = int(lines)
	}
	if patchBytes > 0 {
		l.MaxFileBytes = int(patchBytes)
	}
	return l
}

// DefaultDiffLimits are GitLab's safe limits.
var DefaultDiffLimits = DiffLimits{MaxFiles: 1000, MaxLines: 50000, MaxFileBytes: 200 << 10}

// Diff compares two commits (from "" compares a root commit with nothing).
// overflow reports that the limits cut the result. The output of git is
// read as it comes: past the limits, diff text is counted, not kept.
func (r *Repo) Diff(ctx context.Context, from, to git.ObjectID, lim DiffLimits) (files []FileDiff, overflow bool, err error) {
	flags := []git.Flag{{Name: "-r"}, {Name: "-p"}, {Name: "-M"}, {Name: "--full-index"}, {Name: "--no-commit-id"}, {Name: "--no-color"}}
	args := []string{string(from), string(to)}
	if from == "" {
		flags = append(flags, git.Flag{Name: "--root"})
		args = []string{string(to)}
	}
	proc, err := r.runner.Start(ctx, r.path, git.Command{Name: "diff-tree", Flags: flags, Args: args})
	if err != nil {
		return nil, false, err
	}
	proc.Stdin.Close()
	files, overflow, perr := parseDiff(proc.Stdout, lim)
	if perr != nil {
		io.Copy(io.Discard, proc.Stdout)
	}
	if err := proc.Wait(); err != nil {
		return nil, false, err
	}
	return files, overflow, perr
}

// StatsOnly are limits that keep no diff text (for counting lines).
var StatsOnly = DiffLimits{}

// unquote reads a path git wrote in C quotes ("a/na\303\257ve"); others
// are as they stand.
func unquote(p string) string {
	if strings.HasPrefix(p, `"`) {
		if u, err := strconv.Unquote(p); err == nil {
			return u
		}
	}
	return p
}

// filePath reads the name of a "--- " or "+++ " line. git ends the line
// with a tab when the name holds a space (as GNU diff does); a name that
// really ends in a tab is quoted, so the tab is never part of the name.
func filePath(p string) string { return unquote(strings.TrimSuffix(p, "\t")) }

// headerPaths reads the names of a "diff --git a/<old> b/<new>" line,
// either of them C-quoted. Unquoted names with spaces are ambiguous: the
// same name twice (no rename) is split in the middle, otherwise at the
// first " b/". The "---", "+++" and "rename" lines, when present, name
// the paths exactly and override these.
func headerPaths(rest string) (oldPath, newPath string) {
	if strings.HasPrefix(rest, `"`) {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return "", ""
		}
		a, _ := strconv.Unquote(q)
		b := unquote(strings.TrimPrefix(rest[len(q):], " "))
		if !strings.HasPrefix(a, "a/") || !strings.HasPrefix(b, "b/") {
			return "", ""
		}
		return a[2:], b[2:]
	}
	if !strings.HasPrefix(rest, "a/") {
		return "", ""
	}
	if i := strings.Index(rest, ` "b/`); i >= 0 && strings.HasSuffix(rest, `"`) {
		if b, err := strconv.Unquote(rest[i+1:]); err == nil {
			return rest[2:i], b[2:]
		}
	}
	if n := len(rest) - 5; n >= 0 && n%2 == 0 {
		if k := n / 2; rest[2+k:5+k] == " b/" && rest[2:2+k] == rest[5+k:] {
			return rest[2 : 2+k], rest[5+k:]
		}
	}
	if i := strings.Index(rest, " b/"); i >= 0 {
		return rest[2:i], rest[i+3:]
	}
	return "", ""
}

// parseDiff reads `diff-tree -p` output. Each file's text is kept while
// it stays within lim (per file bytes, lines in all, number of files);
// past them the text is dropped and the file marked TooLarge. Lines are
// read in pieces of at most 64 KiB, so no line is held whole.
func parseDiff(out io.Reader, lim DiffLimits) ([]FileDiff, bool, error) {
	var files []FileDiff
	var cur *FileDiff
	var body strings.Builder
	inHunks, keep, overflow := false, false, false
	lines, fileLines := 0, 0
	flush := func() {
		if cur != nil {
			if keep {
				cur.Diff = body.String()
				lines += fileLines
			} else if lim != StatsOnly {
				cur.TooLarge, overflow = true, true
			}
			files = append(files, *cur)
		}
		body.Reset()
		inHunks, fileLines = false, 0
	}
	// text keeps a line of the file's hunks while the file stays within
	// the limits; past them its text is dropped for good.
	text := func(line string) {
		if !keep {
			return
		}
		body.WriteString(line)
		body.WriteByte('\n')
		fileLines++
		if body.Len() > lim.MaxFileBytes || lines+fileLines > lim.MaxLines {
			keep = false
			body.Reset()
		}
	}
	rd := bufio.NewReaderSize(out, 64<<10)
	for {
		chunk, err := rd.ReadSlice('\n')
		if len(chunk) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			if err != bufio.ErrBufferFull {
				return nil, false, err
			}
		}
		line := strings.TrimSuffix(string(chunk), "\n")
		// The rest of an overlong line is skipped; such a file's text is
		// past the per-file limit anyway.
		for err == bufio.ErrBufferFull {
			_, err = rd.ReadSlice('\n')
			keep = false
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flush()
			cur = &FileDiff{}
			keep = lim != StatsOnly && len(files) < lim.MaxFiles && lines < lim.MaxLines
			cur.OldPath, cur.NewPath = headerPaths(strings.TrimPrefix(line, "diff --git "))
			continue
		case cur == nil:
			continue
		case inHunks:
			text(line)
			if strings.HasPrefix(line, "+") {
				cur.Additions++
			} else if strings.HasPrefix(line, "-") {
				cur.Deletions++
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "@@"):
			inHunks = true
			text(line)
		case strings.HasPrefix(line, "new file mode "):
			cur.NewFile, cur.BMode = true, strings.TrimPrefix(line, "new file mode ")
			cur.AMode = "0"
		case strings.HasPrefix(line, "deleted file mode "):
			cur.DeletedFile, cur.AMode = true, strings.TrimPrefix(line, "deleted file mode ")
			cur.BMode = "0"
		case strings.HasPrefix(line, "old mode "):
			cur.AMode = strings.TrimPrefix(line, "old mode ")
		case strings.HasPrefix(line, "new mode "):
			cur.BMode = strings.TrimPrefix(line, "new mode ")
		case strings.HasPrefix(line, "rename from "):
			cur.RenamedFile, cur.OldPath = true, unquote(strings.TrimPrefix(line, "rename from "))
		case strings.HasPrefix(line, "rename to "):
			cur.NewPath = unquote(strings.TrimPrefix(line, "rename to "))
		case strings.HasPrefix(line, "index "):
			f := strings.Fields(line)
			if len(f) == 3 && cur.AMode == "" {
				cur.AMode, cur.BMode = f[2], f[2]
			}
		case strings.HasPrefix(line, "--- "):
			if p := filePath(strings.TrimPrefix(line, "--- ")); p != "/dev/null" {
				cur.OldPath = strings.TrimPrefix(p, "a/")
			}
		case strings.HasPrefix(line, "+++ "):
			if p := filePath(strings.TrimPrefix(line, "+++ ")); p != "/dev/null" {
				cur.NewPath = strings.TrimPrefix(p, "b/")
			}
		case strings.HasPrefix(line, "Binary files "):
			cur.Binary = true
		}
	}
	flush()
	for i := range files {
		if files[i].NewFile && files[i].OldPath == "" {
			files[i].OldPath = files[i].NewPath
		}
		if files[i].DeletedFile && files[i].NewPath == "" {
			files[i].NewPath = files[i].OldPath
		}
	}
	return files, overflow, nil
}

// MergeBase returns the best common ancestor of revisions; ok is false
// when they share none.
func (r *Repo) MergeBase(ctx context.Context, revs ...string) (git.ObjectID, bool, error) {
	out, err := r.run(ctx, git.Command{Name: "merge-base", Args: revs}, git.Options{})
	if err != nil {
		var ge *git.Error
		if asGitError(err, &ge) && ge.Code == 1 {
			return "", false, nil
		}
		return "", false, err
	}
	return git.ObjectID(strings.TrimSpace(string(out))), true, nil
}

// Contributor is an author of commits on a branch.
type Contributor struct {
	Name, Email string
	Commits     int
}

// Contributors counts commits by author (name and e-mail) reachable from rev.
func (r *Repo) Contributors(ctx context.Context, rev string) ([]Contributor, error) {
	out, err := r.run(ctx, git.Command{Name: "log", Flags: []git.Flag{{Name: "--format", Value: "%aN%x00%aE"}, {Name: "--no-merges"}},
		Args: []string{rev}}, git.Options{})
	if err != nil {
		return nil, err
	}
	idx := map[string]int{}
	var list []Contributor
	for _, l := range strings.Split(string(out), "\n") {
		if l == "" {
			continue
		}
		name, email, _ := strings.Cut(l, "\x00")
		key := strings.ToLower(email)
		if i, ok := idx[key]; ok {
			list[i].Commits++
			continue
		}
		idx[key] = len(list)
		list = append(list, Contributor{Name: name, Email: email, Commits: 1})
	}
	return list, nil
}
