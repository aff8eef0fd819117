package web

import (
	"strconv"
	"strings"

	"quarry/internal/repofiles"
)

// Diff pages bound what they render: a file of more lines than
// collapseLines is shown collapsed (a <details> the reader opens), and
// past maxDiffLines on one page files are listed without their lines.
const (
	collapseLines = 500
	maxDiffLines  = 20000
)

// diffLine is one line of a file's diff. Kind is "ctx", "add", "del",
// "hunk" (an "@@" header) or "note" ("\ No newline at end of file").
type diffLine struct {
	Kind     string
	Old, New int // line numbers, 0 where the side has none
	Text     string
}

// diffRow is a row of the side-by-side view: a hunk header, or the old
// and new sides (either may be empty).
type diffRow struct {
	Hunk        string
	Left, Right *diffLine
}

// diffFile is one file of a diff.
type diffFile struct {
	Anchor                string
	OldPath, NewPath      string
	New, Deleted, Renamed bool
	Binary, TooLarge      bool
	Omitted               bool // the page's line budget ran out
	Collapsed             bool // many lines: shown closed
	Additions, Deletions  int
	Lines                 []diffLine
	Rows                  []diffRow // the parallel view
	ModeChange            string
}

// diffView is a whole diff as a page shows it.
type diffView struct {
	Parallel             bool
	Files                []diffFile
	Additions, Deletions int
	Truncated            bool // more files than a page lists
}

// buildDiff turns the files of a diff into their lines (or rows, side by
// side).
func buildDiff(files []repofiles.FileDiff, parallel bool) diffView {
	dv := diffView{Parallel: parallel, Files: make([]diffFile, 0, len(files))}
	budget := maxDiffLines
	for i, f := range files {
		df := diffFile{Anchor: "diff-" + strconv.Itoa(i), OldPath: f.OldPath, NewPath: f.NewPath, New: f.NewFile,
			Deleted: f.DeletedFile, Renamed: f.RenamedFile, Binary: f.Binary, TooLarge: f.TooLarge,
			Additions: f.Additions, Deletions: f.Deletions}
		if f.AMode != "" && f.BMode != "" && f.AMode != f.BMode {
			df.ModeChange = f.AMode + " → " + f.BMode
		}
		dv.Additions += f.Additions
		dv.Deletions += f.Deletions
		if f.Diff != "" && !f.Binary && !f.TooLarge {
			n := strings.Count(f.Diff, "\n") + 1
			if n > budget {
				df.Omitted = true
			} else {
				budget -= n
				df.Lines = parseHunks(f.Diff)
				df.Collapsed = len(df.Lines) > collapseLines
				if parallel {
					df.Rows = sideBySide(df.Lines)
					df.Lines = nil
				}
			}
		}
		dv.Files = append(dv.Files, df)
	}
	return dv
}

// parseHunks reads unified diff hunks into numbered lines.
func parseHunks(d string) []diffLine {
	d = strings.TrimSuffix(d, "\n")
	out := make([]diffLine, 0, strings.Count(d, "\n")+1)
	old, nw := 0, 0
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			old, nw = hunkStart(l)
			out = append(out, diffLine{Kind: "hunk", Text: l})
		case strings.HasPrefix(l, "+"):
			out = append(out, diffLine{Kind: "add", New: nw, Text: l[1:]})
			nw++
		case strings.HasPrefix(l, "-"):
			out = append(out, diffLine{Kind: "del", Old: old, Text: l[1:]})
			old++
		case strings.HasPrefix(l, `\`):
			out = append(out, diffLine{Kind: "note", Text: l})
		default:
			out = append(out, diffLine{Kind: "ctx", Old: old, New: nw, Text: strings.TrimPrefix(l, " ")})
			old++
			nw++
		}
	}
	return out
}

// hunkStart reads the first old and new line numbers of "@@ -a,b +c,d @@".
func hunkStart(h string) (old, nw int) {
	fields := strings.Fields(h)
	num := func(s, sign string) int {
		s = strings.TrimPrefix(s, sign)
		s, _, _ = strings.Cut(s, ",")
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
	if len(fields) >= 3 {
		old, nw = num(fields[1], "-"), num(fields[2], "+")
	}
	return old, nw
}

// sideBySide pairs each run of removed lines with the added lines that
// follow it; context lines stand on both sides.
func sideBySide(lines []diffLine) []diffRow {
	rows := make([]diffRow, 0, len(lines))
	for i := 0; i < len(lines); {
		l := &lines[i]
		switch l.Kind {
		case "hunk":
			rows = append(rows, diffRow{Hunk: l.Text})
			i++
		case "ctx":
			rows = append(rows, diffRow{Left: l, Right: l})
			i++
		case "note":
			rows = append(rows, diffRow{Left: l})
			i++
		default:
			var dels, adds []*diffLine
			for i < len(lines) && lines[i].Kind == "del" {
				dels = append(dels, &lines[i])
				i++
			}
			for i < len(lines) && lines[i].Kind == "add" {
				adds = append(adds, &lines[i])
				i++
			}
			for j := 0; j < max(len(dels), len(adds)); j++ {
				var row diffRow
				if j < len(dels) {
					row.Left = dels[j]
				}
				if j < len(adds) {
					row.Right = adds[j]
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}
