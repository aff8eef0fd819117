// Package testreport turns the JUnit XML uploads of a pipeline's jobs
// (artifacts:reports:junit) into GitLab's pipeline test report and test
// report summary. It does no I/O besides reading the streams its caller
// opens for it, and keeps JSON out: the API layer renders the values.
//
// What it follows, from GitLab (lib/gitlab/ci/parsers/test/junit.rb,
// lib/gitlab/ci/reports/test_{case,suite,report,suite_summary,
// report_summary}.rb, lib/gitlab/ci/build/artifacts/gzip_file_adapter.rb,
// lib/gitlab/utils/job.rb, app/serializers/test_*_entity.rb):
//
//   - A job's upload is a gzip stream whose members are separate XML
//     documents (the runner concatenates one member per matched file); a
//     stream that is not gzip is read as one plain XML document. An empty
//     or blank document holds no cases and is no error.
//   - Cases are the <testcase> children of the root <testsuites>, of a root
//     <testsuite>, and of <testsuite> elements nested in those, to any depth.
//     A <testsuites> below the root and anything else is ignored.
//   - One suite per job group (see GroupName; parallel:matrix jobs keep their
//     full name); jobs of a group share the suite.
//   - A case is keyed by its <testsuite>'s name attribute (the suite name
//     when absent), classname and name; within one status a later case with
//     the key replaces the earlier one, but every case's time counts in
//     TotalTime.
//   - A failure sets SuiteError; the suite then counts 0 cases and lists
//     none, though TotalTime keeps the time of the cases it did read.
//
// Where it departs from GitLab, on purpose: a blank <failure>, <error> or
// <skipped> with a message attribute shows the message (GitLab shows the
// attributes as a Ruby hash, or for <skipped> a JSON object); an upload that is not gzip is read as XML (GitLab fails the
// request); stray text inside <testsuite> or <testcase> is ignored (GitLab
// drops the suite's cases or fails the document); the size and case limits
// apply per job, not per document; libxml2's messages are encoding/xml's.
//
// Parsing streams (encoding/xml token by token) and is bounded by Limits.
package testreport

import (
	"cmp"
	"fmt"
	"io"
	"slices"
)

// Case statuses, in the order a suite lists them.
const (
	StatusError   = "error"
	StatusFailed  = "failed"
	StatusSuccess = "success"
	StatusSkipped = "skipped"
)

// statusOrder is GitLab's TestCase::STATUS_TYPES: the order of a suite's
// cases by status.
var statusOrder = [...]string{StatusError, StatusFailed, StatusSuccess, StatusSkipped}

// Case is one <testcase>.
type Case struct {
	Status string // StatusSuccess, StatusFailed, StatusSkipped or StatusError
	// Name is the name attribute, or "(No name)" when the attribute is
	// absent (GitLab's entity default). Classname and File are their
	// attributes, "" when absent (GitLab renders those as null).
	Name, Classname, File string
	// ExecutionTime is the time attribute in seconds, read as Ruby's
	// String#to_f does (the longest numeric prefix; "1.5s" is 1.5); 0 when
	// absent, not a number or not finite.
	ExecutionTime float64
	// SystemOutput is nil for a success. For a failure (error) it is the
	// text of <failure> (<error>) — its message attribute when the text is
	// blank —, then "System Out:\n\n" and the <system-out> text, then
	// "System Err:\n\n" and the <system-err> text, the present parts joined
	// by "\n\n" (never nil, maybe ""). For a skip it is the text (or
	// message) of <skipped>, nil when both are empty.
	SystemOutput *string
	// StackTrace is always nil: GitLab's JUnit parser never sets it.
	StackTrace *string
	// Attachment is the path inside the job's artifacts named by the first
	// [[ATTACHMENT|path]] tag in <system-out> of a failed or error case, ""
	// when none; the API renders it as attachment_url
	// (<project>/-/jobs/<JobID>/artifacts/file/<path>).
	Attachment string
	JobID      int64 // the job whose upload held the case
}

// Suite is one suite of the test report: the cases of one job group.
type Suite struct {
	Name string
	// TotalTime sums the times of every case read, duplicates included,
	// also when SuiteError is set.
	TotalTime float64
	// The counts are of distinct cases per status; all 0 when SuiteError is
	// set. TotalCount is their sum.
	TotalCount, SuccessCount, FailedCount, SkippedCount, ErrorCount int
	// SuiteError is "" when none, else the last failure of the group's
	// uploads: "JUnit XML parsing failed: <parser message>" or "JUnit data
	// parsing failed: <message>".
	SuiteError string
	// Cases in GitLab's order: error, failed, success, skipped, each by
	// ExecutionTime descending (ties in upload order); empty (never nil)
	// when SuiteError is set.
	Cases []Case
	// BuildIDs are the group's job ids in the order of Build's blobs
	// (never nil).
	BuildIDs []int64
}

// Report is a pipeline's test report. Its totals are sums over Suites.
type Report struct {
	TotalTime                                                       float64
	TotalCount, SuccessCount, FailedCount, SkippedCount, ErrorCount int
	// Suites in the order their group first appears in Build's blobs
	// (never nil).
	Suites []Suite

	// jobs are the per-job results Summary adds up.
	jobs []jobSummary
}

// Blob is one job's stored JUnit upload.
type Blob struct {
	JobID   int64
	JobName string
	// Matrix is set for a parallel:matrix job: its suite is named by the
	// full job name rather than its group name (GitLab's
	// Ci::Build#test_suite_name).
	Matrix bool
	// Open returns the stored stream (gzip as uploaded, or plain XML).
	// Build closes it. To make Build honour a context, return a reader
	// that fails once the context is done.
	Open func() (io.ReadCloser, error)
}

// Limits bound the work of parsing one job's upload. Zero (or negative)
// fields take the defaults.
type Limits struct {
	// MaxBytes bounds the decompressed bytes read from one job's upload,
	// all its documents together (default 100 MiB). Past it the job's
	// suite gets "JUnit data parsing failed: The XML file must be less
	// than N MB." and the rest of the upload is not read.
	MaxBytes int64
	// MaxCases bounds the cases kept from one job's upload (default
	// 500,000). Past it the job's suite gets "JUnit data parsing failed:
	// number of test cases exceeded the limit of N".
	MaxCases int
}

// Default limits.
const (
	DefaultMaxBytes = 100 << 20
	DefaultMaxCases = 500_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxCases <= 0 {
		l.MaxCases = DefaultMaxCases
	}
	return l
}

// Build parses every blob and aggregates them into the pipeline's report.
// The caller passes the pipeline's latest jobs that uploaded a junit
// report, ordered by job id.
//
// Whatever is wrong with an upload's content — not gzip and not XML,
// corrupt gzip, malformed XML, past a limit — becomes its suite's
// SuiteError. Build returns an error only when a stream cannot be read: Open
// fails or the stream's Read does (storage trouble or a cancelled context),
// and then no report.
func Build(blobs []Blob, l Limits) (Report, error) {
	l = l.withDefaults()
	r := Report{Suites: []Suite{}}
	var groups []*suiteAcc
	byName := map[string]*suiteAcc{}
	for _, b := range blobs {
		name := b.JobName
		if !b.Matrix {
			name = GroupName(b.JobName)
		}
		job, err := parseJob(b, name, l)
		if err != nil {
			return Report{}, fmt.Errorf("read junit report of job %d: %w", b.JobID, err)
		}

		// GitLab keeps per job what the job's own suite counted (its
		// Ci::BuildReportResult); the summary adds those up.
		js := jobSummary{id: b.JobID, name: name, time: job.time, err: job.err}
		if job.err == "" {
			js.errored, js.failed, js.success, js.skipped = job.counts()
		}
		r.jobs = append(r.jobs, js)

		g := byName[name]
		if g == nil {
			g = &suiteAcc{name: name}
			byName[name] = g
			groups = append(groups, g)
		}
		g.addJob(job)
		g.buildIDs = append(g.buildIDs, b.JobID)
	}
	for _, g := range groups {
		s := g.suite()
		r.Suites = append(r.Suites, s)
		r.TotalTime += s.TotalTime
		r.TotalCount += s.TotalCount
		r.SuccessCount += s.SuccessCount
		r.FailedCount += s.FailedCount
		r.SkippedCount += s.SkippedCount
		r.ErrorCount += s.ErrorCount
	}
	return r, nil
}

// suiteAcc gathers the cases of one suite: per status, one case per key.
type suiteAcc struct {
	name     string
	time     float64
	err      string
	buildIDs []int64
	buckets  [len(statusOrder)]struct {
		at    map[string]int // key → index in cases
		cases []Case
	}
}

func (a *suiteAcc) addJob(j jobResult) {
	for _, c := range j.cases {
		b := &a.buckets[statusIndex(c.Status)]
		if b.at == nil {
			b.at = map[string]int{}
		}
		if i, ok := b.at[c.key]; ok {
			b.cases[i] = c.Case
		} else {
			b.at[c.key] = len(b.cases)
			b.cases = append(b.cases, c.Case)
		}
	}
	a.time += j.time
	if j.err != "" {
		a.err = j.err
	}
}

func (a *suiteAcc) suite() Suite {
	s := Suite{
		Name:       a.name,
		TotalTime:  a.time,
		SuiteError: a.err,
		Cases:      []Case{},
		BuildIDs:   append([]int64{}, a.buildIDs...),
	}
	if a.err != "" {
		return s
	}
	s.Cases = make([]Case, 0, len(a.buckets[0].cases)+len(a.buckets[1].cases)+len(a.buckets[2].cases)+len(a.buckets[3].cases))
	for i := range a.buckets {
		cases := a.buckets[i].cases
		// Sort positions rather than the (large) cases; ties keep their
		// order.
		at := make([]int, len(cases))
		for j := range at {
			at[j] = j
		}
		slices.SortFunc(at, func(x, y int) int {
			return cmp.Or(cmp.Compare(cases[y].ExecutionTime, cases[x].ExecutionTime), cmp.Compare(x, y))
		})
		for _, j := range at {
			s.Cases = append(s.Cases, cases[j])
		}
	}
	s.ErrorCount, s.FailedCount, s.SuccessCount, s.SkippedCount = a.counts()
	s.TotalCount = s.ErrorCount + s.FailedCount + s.SuccessCount + s.SkippedCount
	return s
}

// counts returns the distinct cases per status in statusOrder; all 0 with
// an error.
func (a *suiteAcc) counts() (errored, failed, success, skipped int) {
	if a.err != "" {
		return 0, 0, 0, 0
	}
	return len(a.buckets[0].cases), len(a.buckets[1].cases), len(a.buckets[2].cases), len(a.buckets[3].cases)
}

// counts returns the job's distinct cases per status in statusOrder, as
// the job's suite alone would count them.
func (j jobResult) counts() (errored, failed, success, skipped int) {
	var keys [len(statusOrder)]map[string]bool
	for _, c := range j.cases {
		i := statusIndex(c.Status)
		if keys[i] == nil {
			keys[i] = map[string]bool{}
		}
		keys[i][c.key] = true
	}
	return len(keys[0]), len(keys[1]), len(keys[2]), len(keys[3])
}

func statusIndex(status string) int {
	return slices.Index(statusOrder[:], status)
}

// Summary is the pipeline's test report summary.
type Summary struct {
	Total SummaryTotal
	// Suites in the order their group first appears in Build's blobs
	// (never nil).
	Suites []SuiteSummary
}

// SummaryTotal is the summary's total: sums over every job.
type SummaryTotal struct {
	Time                                   float64
	Count, Success, Failed, Skipped, Error int
	// SuiteError is the first job's suite error, in Build's blob order;
	// "" when none.
	SuiteError string
}

// SuiteSummary is one suite of the summary.
type SuiteSummary struct {
	Name                                                            string
	TotalTime                                                       float64
	TotalCount, SuccessCount, FailedCount, SkippedCount, ErrorCount int
	BuildIDs                                                        []int64 // never nil
	// SuiteError is the first of the group's jobs' errors; "" when none.
	SuiteError string
}

// jobSummary is what GitLab stores for a job when it finishes
// (Ci::BuildReportResult): its own suite's counters, parsed alone.
type jobSummary struct {
	id                                int64
	name                              string
	time                              float64
	success, failed, skipped, errored int
	err                               string
}

// Summary returns the summary of a report Build returned (GitLab's
// TestReportSummary). It adds up each job's own counters: each job's
// cases are deduplicated within the job only, and a job's error zeroes
// only that job's counts, so a suite's counts can differ from the
// report's where jobs of a group overlap or one of them failed.
func (r Report) Summary() Summary {
	s := Summary{Suites: []SuiteSummary{}}
	at := map[string]int{}
	for _, j := range r.jobs {
		i, ok := at[j.name]
		if !ok {
			i = len(s.Suites)
			at[j.name] = i
			s.Suites = append(s.Suites, SuiteSummary{Name: j.name, BuildIDs: []int64{}})
		}
		g := &s.Suites[i]
		g.TotalTime += j.time
		g.SuccessCount += j.success
		g.FailedCount += j.failed
		g.SkippedCount += j.skipped
		g.ErrorCount += j.errored
		g.TotalCount += j.success + j.failed + j.skipped + j.errored
		g.BuildIDs = append(g.BuildIDs, j.id)
		if g.SuiteError == "" {
			g.SuiteError = j.err
		}

		t := &s.Total
		t.Time += j.time
		t.Success += j.success
		t.Failed += j.failed
		t.Skipped += j.skipped
		t.Error += j.errored
		t.Count += j.success + j.failed + j.skipped + j.errored
		if t.SuiteError == "" {
			t.SuiteError = j.err
		}
	}
	return s
}
