package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"quarry/internal/git"
)

// BlameRange is a run of consecutive lines last changed by one commit.
type BlameRange struct {
	Commit Commit
	Lines  []string
}

// Blame attributes each line of path at commit, grouping consecutive lines
// of the same commit; start and end (1-based, inclusive; 0 for all) narrow
// the lines.
func (r *Repo) Blame(ctx context.Context, commit git.ObjectID, path string, start, end int) ([]BlameRange, error) {
	flags := []git.Flag{{Name: "--porcelain"}}
	if start > 0 {
		flags = append(flags, git.Flag{Name: "-L", Value: strconv.Itoa(start) + "," + strconv.Itoa(end)})
	}
	out, err := r.run(ctx, git.Command{Name: "blame", Flags: flags, Args: []string{string(commit)}, PathArgs: []string{path}}, git.Options{})
	if err != nil {
		return nil, err
	}
	type info struct {
		c       Commit
		summary string
	}
	commits := map[string]*info{}
	var ranges []BlameRange
	rd := bufio.NewReader(bytes.NewReader(out))
	var cur *info
	for {
		line, err := rd.ReadString('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "\t") {
			text := line[1:]
			if n := len(ranges); n > 0 && ranges[n-1].Commit.ID == cur.c.ID {
				ranges[n-1].Lines = append(ranges[n-1].Lines, text)
			} else {
				ranges = append(ranges, BlameRange{Commit: cur.c, Lines: []string{text}})
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) >= 3 && len(f[0]) == 40 && isHex(f[0]) {
			if c, ok := commits[f[0]]; ok {
				cur = c
			} else {
				cur = &info{c: Commit{ID: git.ObjectID(f[0]), ParentIDs: []string{}}}
				commits[f[0]] = cur
			}
			continue
		}
		if cur == nil {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "author":
			cur.c.Author.Name = val
		case "author-mail":
			cur.c.Author.Email = strings.Trim(val, "<>")
		case "author-time":
			cur.c.Author.When = unixTime(val)
		case "committer":
			cur.c.Committer.Name = val
		case "committer-mail":
			cur.c.Committer.Email = strings.Trim(val, "<>")
		case "committer-time":
			cur.c.Committer.When = unixTime(val)
		case "summary":
			cur.summary = val
		}
		if err == io.EOF {
			break
		}
	}
	// Full messages and parents come from the commit objects.
	for id, c := range commits {
		full, err := r.ReadCommit(ctx, id)
		if err == nil {
			c.c.Message, c.c.ParentIDs = full.Message, full.ParentIDs
		}
	}
	for i := range ranges {
		c := commits[string(ranges[i].Commit.ID)].c
		ranges[i].Commit = c
	}
	return ranges, nil
}

func isHex(s string) bool { return strings.Trim(s, "0123456789abcdef") == "" }

func unixTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxPersonTime || strings.Trim(s, "0123456789") != "" {
		return time.Time{} // as parsePerson: a date this package cannot show is none
	}
	return time.Unix(n, 0).UTC()
}
