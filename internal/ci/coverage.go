package ci

import (
	"bytes"
	"io"
	"regexp"
	"strconv"

	"quarry/internal/model"
)

// maxCoverageScan bounds how much of a log's end the coverage regular
// expression reads.
const maxCoverageScan = 4 << 20

var coverageNumber = regexp.MustCompile(`\d+(\.\d+)?`)

// coverage reads a finished job's coverage from its log with the job's
// coverage regular expression, as GitLab does: the last line that
// matches wins, its last match (or capture group) gives the number. nil
// without a regular expression, a log or a match.
func (s *Service) coverage(j *model.Job, expr string) *float64 {
	if expr == "" {
		return nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil
	}
	f, ok, err := s.files.OpenLog(j.ProjectID, j.ID)
	if err != nil || !ok {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxCoverageScan {
		if _, err := f.Seek(st.Size()-maxCoverageScan, io.SeekStart); err != nil {
			return nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCoverageScan))
	if err != nil {
		return nil
	}
	return CoverageOf(data, re)
}

// CoverageOf finds the coverage in a log: lines from the end, the first
// that matches re; in its last match (the last capture group when there
// are groups) the first number.
func CoverageOf(log []byte, re *regexp.Regexp) *float64 {
	lines := bytes.Split(log, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimRight(lines[i], "\r")
		all := re.FindAllSubmatch(line, -1)
		if len(all) == 0 {
			continue
		}
		m := all[len(all)-1]
		text := m[0]
		for g := len(m) - 1; g > 0; g-- {
			if m[g] != nil {
				text = m[g]
				break
			}
		}
		num := coverageNumber.Find(text)
		if num == nil {
			continue
		}
		v, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			continue
		}
		return &v
	}
	return nil
}
