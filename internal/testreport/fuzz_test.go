package testreport

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes as a job's upload: Build never fails
// (the stream itself never does), never panics, and keeps its invariants.
func FuzzParse(f *testing.F) {
	samples, _ := filepath.Glob("testdata/*.xml")
	for _, name := range samples {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(gz(f, string(b), string(b)))
	}
	for _, s := range []string{
		"",
		`<testsuite><testcase name="a"><failure message="m"/><system-out>[[ATTACHMENT|x]]</system-out></testcase></testsuite>`,
		`<testsuites><testcase/><testsuite name="n"><testsuite><testcase classname="c" time="1e3"><skipped>s</skipped></testcase></testsuite></testsuite></testsuites>`,
		`<?xml version="1.0" encoding="latin1"?><testsuite><testcase name="\xe9"/></testsuite>`,
		"<testsuite><testcase name=\"a\"></testsuite>",
	} {
		f.Add([]byte(s))
		f.Add(gz(f, s, s))
	}
	l := Limits{MaxBytes: 1 << 20, MaxCases: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := Blob{JobID: 1, JobName: "fuzz 1/2", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}}
		r, err := Build([]Blob{b, b}, l)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		if len(r.Suites) != 1 || r.Suites[0].Name != "fuzz" {
			t.Fatalf("suites %+v; want one named fuzz", r.Suites)
		}
		s := r.Suites[0]
		if s.TotalCount != s.SuccessCount+s.FailedCount+s.SkippedCount+s.ErrorCount || s.TotalCount != len(s.Cases) {
			t.Errorf("counts %d = %d+%d+%d+%d with %d cases", s.TotalCount, s.SuccessCount, s.FailedCount, s.SkippedCount, s.ErrorCount, len(s.Cases))
		}
		if s.SuiteError != "" && (s.TotalCount != 0 || len(s.Cases) != 0) {
			t.Errorf("suite error %q with %d cases", s.SuiteError, s.TotalCount)
		}
		if s.SuiteError != "" && !strings.HasPrefix(s.SuiteError, "JUnit XML parsing failed: ") && !strings.HasPrefix(s.SuiteError, "JUnit data parsing failed: ") {
			t.Errorf("suite error %q", s.SuiteError)
		}
		if s.TotalCount > l.MaxCases {
			t.Errorf("%d cases kept; limit %d", s.TotalCount, l.MaxCases)
		}
		for _, c := range s.Cases {
			failing := c.Status == StatusFailed || c.Status == StatusError
			switch {
			case statusIndex(c.Status) < 0, c.StackTrace != nil,
				c.Status == StatusSuccess && c.SystemOutput != nil,
				failing && c.SystemOutput == nil,
				!failing && c.Attachment != "":
				t.Errorf("case %+v", c)
			}
		}
		// Both jobs read the same upload: the summary counts it twice.
		sum := r.Summary()
		if sum.Total.Count != 2*s.TotalCount || sum.Suites[0].TotalCount != sum.Total.Count || len(sum.Suites[0].BuildIDs) != 2 {
			t.Errorf("summary %+v; report suite %d cases", sum, s.TotalCount)
		}
		if sum.Total.SuiteError != s.SuiteError {
			t.Errorf("summary error %q; report's %q", sum.Total.SuiteError, s.SuiteError)
		}
	})
}

// FuzzGroupName: a group name is the job name cut short and trimmed.
func FuzzGroupName(f *testing.F) {
	for _, s := range []string{"rspec 1/3", "test: [a, b]", "a 1/2 3/4 5/6 7/8", " x ", "[[[[", "1 1 1 1 1 1 1 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		g := GroupName(name)
		if !strings.Contains(name, g) {
			t.Errorf("GroupName(%q) = %q, not part of the name", name, g)
		}
		if g != strings.Trim(g, "\x00\t\n\v\f\r ") {
			t.Errorf("GroupName(%q) = %q, not trimmed", name, g)
		}
	})
}
