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

func unquote(p string) string {
	if strings.HasPrefix(p, `"`) {
		if u, err := strconv.Unquote(p); err == nil {
			return u
		}
	}
	return p
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
			rest := strings.TrimPrefix(line, "diff --git ")
			if i := strings.Index(rest, " b/"); i >= 0 && strings.HasPrefix(rest, "a/") {
				cur.OldPath, cur.NewPath = rest[2:i], rest[i+3:]
			}
			continue
		case cur == nil:
			continue
		case inHunks:
			if keep {
				body.WriteString(line + "\n")
				fileLines++
				if body.Len() > lim.MaxFileBytes || lines+fileLines > lim.MaxLines {
					keep = false
					body.Reset()
				}
			}
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
			if keep {
				body.WriteString(line + "\n")
				fileLines++
			}
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
			if p := strings.TrimPrefix(line, "--- "); p != "/dev/null" {
				cur.OldPath = strings.TrimPrefix(unquote(p), "a/")
			}
		case strings.HasPrefix(line, "+++ "):
			if p := strings.TrimPrefix(line, "+++ "); p != "/dev/null" {
				cur.NewPath = strings.TrimPrefix(unquote(p), "b/")
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
