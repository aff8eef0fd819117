package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/ci"
)

// capiJUnit stores a gzipped JUnit document as a job's junit artifact.
func capiJUnit(t *testing.T, s *apitest.Server, jobID int64, xml string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(xml)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := engine(s).StoreArtifact(ctx(t), jobID, ci.ArtifactInput{FileType: "junit", Format: "gzip", FileName: "junit.xml.gz",
		Limit: 1 << 20}, &buf)
	if err != nil {
		t.Fatalf("store the junit report of job %d: %v", jobID, err)
	}
}

const capiReportConfig = capiNoPush + `
rspec: {script: [x], parallel: 2}
lint: {script: [x]}
broken: {script: [x]}
`

const (
	capiRspec1 = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="users">
    <testcase classname="spec.user" name="creates a user" file="spec/user_spec.rb" time="0.5"/>
    <testcase classname="spec.user" name="rejects a bad email" time="0.25"><failure>expected true, got false</failure></testcase>
  </testsuite>
</testsuites>`
	capiRspec2 = `<testsuite name="projects">
  <testcase classname="spec.project" name="archives" time="1.25"/>
  <testcase classname="spec.project" name="waits" time="0"><skipped/></testcase>
  <testcase classname="spec.project" name="blows up" time="0.125"><error>RuntimeError: boom</error></testcase>
</testsuite>`
	capiLint   = `<testsuite name="lint"><testcase classname="lint" name="style" time="2"/></testsuite>`
	capiBroken = `<testsuite><testcase name="a"></testsuite>`
)

// TestCIReports_empty: a pipeline without JUnit reports has zeros and no
// suites in both forms.
func TestCIReports_empty(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "noreports", map[string]string{".gitlab-ci.yml": capiReportConfig})
		pl := p.createPipeline(t, "main")
		run(t, s, p.job(t, pl.ID, "lint").ID, succeed)
		base := fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, pl.ID)
		s.Get(t, base+"/test_report", owner.Token).Want(t, http.StatusOK).WantBody(t, `{"total_time":0,"total_count":0,
			"success_count":0,"failed_count":0,"skipped_count":0,"error_count":0,"test_suites":[]}`)
		s.Get(t, base+"/test_report_summary", owner.Token).Want(t, http.StatusOK).WantBody(t, `{"total":{"time":0,"count":0,
			"success":0,"failed":0,"skipped":0,"error":0,"suite_error":null},"test_suites":[]}`)
		for _, sub := range []string{"/test_report", "/test_report_summary"} {
			s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d%s", p.ID, s.AbsentID(t), sub), owner.Token).Want(t, http.StatusNotFound).
				WantBody(t, `{"message":"404 Pipeline Not Found"}`)
			s.Get(t, base+sub, "").Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		}
	})
}

// TestCIReports_junit: the JUnit reports of the pipeline's latest jobs:
// the two parallel rspec jobs merge into one suite, lint is its own, a
// malformed document is a suite with suite_error and nothing counted;
// exact counts, times, statuses and cases, and the summary's build_ids.
// A retried job's report no longer counts.
func TestCIReports_junit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		reporter := s.NewUser(t, "reporter")
		p := newCIProject(t, s, owner, "reports", map[string]string{".gitlab-ci.yml": capiReportConfig})
		capiAddMember(t, s, owner.Token, p.ID, reporter.ID, 20)
		pl := p.createPipeline(t, "main")
		r1, r2 := p.job(t, pl.ID, "rspec 1/2").ID, p.job(t, pl.ID, "rspec 2/2").ID
		lint, broken := p.job(t, pl.ID, "lint").ID, p.job(t, pl.ID, "broken").ID
		for id, doc := range map[int64]string{r1: capiRspec1, r2: capiRspec2, lint: capiLint, broken: capiBroken} {
			if _, err := engine(s).Start(ctx(t), id); err != nil {
				t.Fatal(err)
			}
			capiJUnit(t, s, id, doc)
		}
		for _, id := range []int64{r1, r2, lint, broken} {
			o := succeed
			if id == r1 || id == r2 {
				o = fail
			}
			if _, err := engine(s).Finish(ctx(t), id, o); err != nil {
				t.Fatal(err)
			}
		}
		base := fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, pl.ID)

		var rep struct {
			TotalTime    float64 `json:"total_time"`
			TotalCount   int     `json:"total_count"`
			SuccessCount int     `json:"success_count"`
			FailedCount  int     `json:"failed_count"`
			SkippedCount int     `json:"skipped_count"`
			ErrorCount   int     `json:"error_count"`
			TestSuites   []struct {
				Name         string           `json:"name"`
				TotalTime    float64          `json:"total_time"`
				TotalCount   int              `json:"total_count"`
				SuccessCount int              `json:"success_count"`
				FailedCount  int              `json:"failed_count"`
				SkippedCount int              `json:"skipped_count"`
				ErrorCount   int              `json:"error_count"`
				SuiteError   *string          `json:"suite_error"`
				TestCases    []map[string]any `json:"test_cases"`
			} `json:"test_suites"`
		}
		s.Get(t, base+"/test_report", reporter.Token).Want(t, http.StatusOK).JSON(t, &rep)
		if got := fmt.Sprintf("%v %d %d %d %d %d", rep.TotalTime, rep.TotalCount, rep.SuccessCount, rep.FailedCount, rep.SkippedCount,
			rep.ErrorCount); got != "4.125 6 3 1 1 1" {
			t.Errorf("report totals (time count success failed skipped error) %s; want 4.125 6 3 1 1 1", got)
		}
		suites := map[string]int{}
		for i, su := range rep.TestSuites {
			suites[su.Name] = i
		}
		if len(suites) != 3 || len(rep.TestSuites) != 3 {
			t.Fatalf("suites %v; want rspec, lint and broken", suites)
		}
		for name, want := range map[string]string{"rspec": "2.125 5 2 1 1 1", "lint": "2 1 1 0 0 0", "broken": "0 0 0 0 0 0"} {
			i, ok := suites[name]
			if !ok {
				t.Errorf("no suite %s in %v", name, suites)
				continue
			}
			su := rep.TestSuites[i]
			got := fmt.Sprintf("%v %d %d %d %d %d", su.TotalTime, su.TotalCount, su.SuccessCount, su.FailedCount, su.SkippedCount, su.ErrorCount)
			if got != want {
				t.Errorf("suite %s: %s; want %s", name, got, want)
			}
			if (su.SuiteError != nil) != (name == "broken") {
				t.Errorf("suite %s: suite_error %v", name, su.SuiteError)
			}
		}
		brokenSuite := rep.TestSuites[suites["broken"]]
		if brokenSuite.SuiteError == nil || !strings.HasPrefix(*brokenSuite.SuiteError, "JUnit XML parsing failed: ") || len(brokenSuite.TestCases) != 0 {
			t.Errorf("broken suite %+v", brokenSuite)
		}
		// rspec's cases: errors, failures, successes (slowest first),
		// skipped.
		var cases []string
		for _, c := range rep.TestSuites[suites["rspec"]].TestCases {
			capiWantTypes(t, "test case", c, map[string]string{"status": "string", "name": "string", "classname": "string",
				"execution_time": "number", "system_output": "string|null", "stack_trace": "null"})
			cases = append(cases, fmt.Sprintf("%v:%v:%v:%v:%v:%v", c["status"], c["classname"], c["name"], c["execution_time"],
				c["system_output"], c["file"]))
		}
		if got := strings.Join(cases, "\n"); got != strings.Join([]string{
			"error:spec.project:blows up:0.125:RuntimeError: boom:<nil>",
			"failed:spec.user:rejects a bad email:0.25:expected true, got false:<nil>",
			"success:spec.project:archives:1.25:<nil>:<nil>",
			"success:spec.user:creates a user:0.5:<nil>:spec/user_spec.rb",
			"skipped:spec.project:waits:0:<nil>:<nil>",
		}, "\n") {
			t.Errorf("rspec cases:\n%s", got)
		}

		// The summary: per suite, with the jobs that made it.
		var sum struct {
			Total      map[string]any   `json:"total"`
			TestSuites []map[string]any `json:"test_suites"`
		}
		s.Get(t, base+"/test_report_summary", reporter.Token).Want(t, http.StatusOK).JSON(t, &sum)
		capiWantFields(t, "summary total", sum.Total, map[string]any{"time": 4.125, "count": float64(6), "success": float64(3),
			"failed": float64(1), "skipped": float64(1), "error": float64(1), "suite_error": *brokenSuite.SuiteError})
		bySuite := map[string]map[string]any{}
		for _, su := range sum.TestSuites {
			bySuite[su["name"].(string)] = su
		}
		if len(bySuite) != 3 {
			t.Fatalf("summary suites %v", sum.TestSuites)
		}
		for name, want := range map[string]map[string]any{
			"rspec": {"total_time": 2.125, "total_count": float64(5), "success_count": float64(2), "failed_count": float64(1),
				"skipped_count": float64(1), "error_count": float64(1), "build_ids": fmt.Sprint([]any{float64(r1), float64(r2)}), "suite_error": nil},
			"lint": {"total_time": float64(2), "total_count": float64(1), "success_count": float64(1), "failed_count": float64(0),
				"skipped_count": float64(0), "error_count": float64(0), "build_ids": fmt.Sprint([]any{float64(lint)}), "suite_error": nil},
			"broken": {"total_time": float64(0), "total_count": float64(0), "success_count": float64(0), "failed_count": float64(0),
				"skipped_count": float64(0), "error_count": float64(0), "build_ids": fmt.Sprint([]any{float64(broken)}),
				"suite_error": *brokenSuite.SuiteError},
		} {
			got := bySuite[name]
			if got == nil {
				t.Errorf("no summary suite %s", name)
				continue
			}
			if ids, ok := got["build_ids"].([]any); ok {
				got["build_ids"] = fmt.Sprint(ids)
			}
			capiWantFields(t, "summary suite "+name, got, want)
		}

		// The official client reads both.
		c := s.Client(t, owner.Token)
		tr, _, err := c.Pipelines.GetPipelineTestReport(p.ID, pl.ID)
		if err != nil || tr.TotalCount != 6 || len(tr.TestSuites) != 3 {
			t.Errorf("client test report %+v, %v", tr, err)
		}
		ts, _, err := c.Pipelines.GetPipelineTestReportSummary(p.ID, pl.ID)
		if err != nil || ts.Total.Count != 6 || len(ts.TestSuites) != 3 {
			t.Errorf("client summary %+v, %v", ts, err)
		}

		// A retried job's report drops out with it.
		capiJobAction(t, p, owner.Token, r1, "retry", nil).Want(t, http.StatusCreated)
		s.Get(t, base+"/test_report", owner.Token).Want(t, http.StatusOK).JSON(t, &rep)
		if rep.TotalCount != 4 || len(rep.TestSuites) != 3 || rep.TestSuites[suites["rspec"]].TotalCount != 3 {
			t.Errorf("after retrying rspec 1/2: %d cases in %d suites", rep.TotalCount, len(rep.TestSuites))
		}
		s.Get(t, base+"/test_report_summary", owner.Token).Want(t, http.StatusOK).JSON(t, &sum)
		for _, su := range sum.TestSuites {
			if su["name"] == "rspec" && fmt.Sprint(su["build_ids"]) != fmt.Sprint([]any{float64(r2)}) {
				t.Errorf("rspec build_ids after the retry %v; want [%d]", su["build_ids"], r2)
			}
		}
	})
}
