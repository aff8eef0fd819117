package testreport

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// gz compresses each document as its own gzip member, as the runner does
// when several files match artifacts:reports:junit.
func gz(t testing.TB, docs ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, d := range docs {
		w := gzip.NewWriter(&buf)
		if _, err := io.WriteString(w, d); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func blob(id int64, name string, data []byte) Blob {
	return Blob{JobID: id, JobName: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

func sample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func str(s string) *string { return &s }

// build runs Build and fails the test on an error.
func build(t *testing.T, l Limits, blobs ...Blob) Report {
	t.Helper()
	r, err := Build(blobs, l)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return r
}

// one builds the report of one job and returns its only suite.
func one(t *testing.T, data []byte) Suite {
	t.Helper()
	r := build(t, Limits{}, blob(7, "test", data))
	if len(r.Suites) != 1 {
		t.Fatalf("got %d suites; want 1", len(r.Suites))
	}
	return r.Suites[0]
}

func showCases(cs []Case) string {
	var b strings.Builder
	for _, c := range cs {
		out, trace := "<nil>", "<nil>"
		if c.SystemOutput != nil {
			out = fmt.Sprintf("%q", *c.SystemOutput)
		}
		if c.StackTrace != nil {
			trace = fmt.Sprintf("%q", *c.StackTrace)
		}
		fmt.Fprintf(&b, "\n  {%s %q classname=%q file=%q time=%v out=%s trace=%s attachment=%q job=%d}",
			c.Status, c.Name, c.Classname, c.File, c.ExecutionTime, out, trace, c.Attachment, c.JobID)
	}
	return b.String()
}

func wantCases(t *testing.T, got, want []Case) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cases:%s\nwant:%s", showCases(got), showCases(want))
	}
}

func wantCounts(t *testing.T, s Suite, total, success, failed, skipped, errored int) {
	t.Helper()
	got := [5]int{s.TotalCount, s.SuccessCount, s.FailedCount, s.SkippedCount, s.ErrorCount}
	if want := [5]int{total, success, failed, skipped, errored}; got != want {
		t.Errorf("counts (total, success, failed, skipped, error) = %v; want %v", got, want)
	}
}

func wantTime(t *testing.T, got, want float64) {
	t.Helper()
	if d := got - want; d > 1e-9 || d < -1e-9 {
		t.Errorf("total time = %v; want %v", got, want)
	}
}

// Real reports of common tools, each uploaded gzipped by one job.
func TestBuild_samples(t *testing.T) {
	for _, tc := range []struct {
		file                                    string
		total, success, failed, skipped, errors int
		time                                    float64
		cases                                   []Case
	}{{
		file: "pytest.xml", total: 5, success: 2, failed: 1, skipped: 1, errors: 1, time: 0.316,
		cases: []Case{
			{Status: StatusError, Name: "test_read", Classname: "tests.test_io", ExecutionTime: 0.003, JobID: 7,
				SystemOutput: str("@pytest.fixture\n    def data():\n>       return open(\"data.csv\")\nE       FileNotFoundError: [Errno 2] No such file or directory: 'data.csv'\n\ntests/test_io.py:5: FileNotFoundError")},
			{Status: StatusFailed, Name: "test_div", Classname: "tests.test_math", ExecutionTime: 0.002, JobID: 7,
				SystemOutput: str("def test_div():\n>       assert 1 / 0 == 0\nE       ZeroDivisionError: division by zero\n\ntests/test_math.py:7: ZeroDivisionError")},
			// A passing case's output is not shown.
			{Status: StatusSuccess, Name: "test_print", Classname: "tests.test_io", ExecutionTime: 0.31, JobID: 7},
			{Status: StatusSuccess, Name: "test_add", Classname: "tests.test_math", ExecutionTime: 0.001, JobID: 7},
			{Status: StatusSkipped, Name: "test_later", Classname: "tests.test_math", JobID: 7,
				SystemOutput: str("/builds/app/tests/test_math.py:10: not ready")},
		},
	}, {
		file: "jest.xml", total: 4, success: 2, failed: 1, skipped: 1, time: 0.018,
		cases: []Case{
			{Status: StatusFailed, Name: "Calculator divides by zero", Classname: "Calculator divides by zero", ExecutionTime: 0.004, JobID: 7,
				SystemOutput: str("Error: expect(received).toThrow()\n\nReceived function did not throw\n    at Object.toThrow (/builds/web/src/calc.test.js:14:33)")},
			{Status: StatusSuccess, Name: "Parser reads numbers", Classname: "Parser reads numbers", ExecutionTime: 0.011, JobID: 7},
			{Status: StatusSuccess, Name: "Calculator adds two numbers", Classname: "Calculator adds two numbers", ExecutionTime: 0.003, JobID: 7},
			{Status: StatusSkipped, Name: "Calculator rounds", Classname: "Calculator rounds", JobID: 7},
		},
	}, {
		file: "go-junit-report.xml", total: 3, success: 1, failed: 1, skipped: 1, time: 0.01,
		cases: []Case{
			{Status: StatusFailed, Name: "TestTotal", Classname: "example.com/shop/cart", ExecutionTime: 0.01, JobID: 7,
				SystemOutput: str("    cart_test.go:31: total = 9; want 10")},
			{Status: StatusSuccess, Name: "TestAdd", Classname: "example.com/shop/cart", JobID: 7},
			{Status: StatusSkipped, Name: "TestRemote", Classname: "example.com/shop/cart", JobID: 7,
				SystemOutput: str("    cart_test.go:40: needs network")},
		},
	}, {
		file: "rspec.xml", total: 3, success: 1, failed: 1, skipped: 1, time: 0.032,
		cases: []Case{
			{Status: StatusFailed, Name: "User saves", Classname: "spec.models.user_spec", File: "./spec/models/user_spec.rb", ExecutionTime: 0.02, JobID: 7,
				SystemOutput: str("Failure/Error: expect(user.save).to be(true)\n\n  expected true\n       got false\n./spec/models/user_spec.rb:8:in `block (2 levels) in <top (required)>'" +
					"\n\nSystem Out:\n\n[[ATTACHMENT|tmp/capybara/user_saves.png]]"),
				Attachment: "tmp/capybara/user_saves.png"},
			{Status: StatusSuccess, Name: "User validates the name", Classname: "spec.models.user_spec", File: "./spec/models/user_spec.rb", ExecutionTime: 0.012, JobID: 7},
			{Status: StatusSkipped, Name: "User is pending", Classname: "spec.models.user_spec", File: "./spec/models/user_spec.rb", JobID: 7},
		},
	}, {
		// PHPUnit nests suites.
		file: "phpunit.xml", total: 3, success: 2, failed: 1, time: 0.041,
		cases: []Case{
			{Status: StatusFailed, Name: "testSplit", Classname: "App.Tests.MoneyTest", File: "/builds/app/tests/MoneyTest.php", ExecutionTime: 0.02, JobID: 7,
				SystemOutput: str("App\\Tests\\MoneyTest::testSplit\nFailed asserting that 33 matches expected 34.\n\n/builds/app/tests/MoneyTest.php:23")},
			{Status: StatusSuccess, Name: "testRound with data set #0", Classname: "App.Tests.MoneyTest", File: "/builds/app/tests/MoneyTest.php", ExecutionTime: 0.011, JobID: 7},
			{Status: StatusSuccess, Name: "testAdd", Classname: "App.Tests.MoneyTest", File: "/builds/app/tests/MoneyTest.php", ExecutionTime: 0.01, JobID: 7},
		},
	}} {
		t.Run(tc.file, func(t *testing.T) {
			r := build(t, Limits{}, blob(7, "test", gz(t, sample(t, tc.file))))
			if len(r.Suites) != 1 {
				t.Fatalf("got %d suites; want 1", len(r.Suites))
			}
			s := r.Suites[0]
			if s.Name != "test" || s.SuiteError != "" || !reflect.DeepEqual(s.BuildIDs, []int64{7}) {
				t.Errorf("suite %q error %q builds %v; want \"test\", no error, [7]", s.Name, s.SuiteError, s.BuildIDs)
			}
			wantCounts(t, s, tc.total, tc.success, tc.failed, tc.skipped, tc.errors)
			wantTime(t, s.TotalTime, tc.time)
			wantCases(t, s.Cases, tc.cases)
			if r.TotalCount != tc.total || r.SuccessCount != tc.success || r.FailedCount != tc.failed ||
				r.SkippedCount != tc.skipped || r.ErrorCount != tc.errors {
				t.Errorf("report counts %d/%d/%d/%d/%d; want the suite's", r.TotalCount, r.SuccessCount, r.FailedCount, r.SkippedCount, r.ErrorCount)
			}
			wantTime(t, r.TotalTime, tc.time)
		})
	}
}

// Which elements hold cases, and documents without any.
func TestBuild_documentShapes(t *testing.T) {
	pass := func(name string) Case { return Case{Status: StatusSuccess, Name: name, JobID: 7} }
	for _, tc := range []struct {
		name, xml string
		want      []Case
	}{
		{"testsuite root", `<testsuite name="s"><testcase name="a"/><testcase name="b"/></testsuite>`,
			[]Case{pass("a"), pass("b")}},
		{"testsuites root", `<testsuites><testsuite><testcase name="a"/></testsuite><testsuite><testcase name="b"/></testsuite></testsuites>`,
			[]Case{pass("a"), pass("b")}},
		{"nested testsuites", `<testsuites><testsuite><testsuite><testsuite><testcase name="deep"/></testsuite></testsuite><testcase name="top"/></testsuite></testsuites>`,
			[]Case{pass("deep"), pass("top")}},
		{"testcase directly in testsuites", `<testsuites name="all"><testcase name="a"/></testsuites>`,
			[]Case{pass("a")}},
		{"testsuites below the root ignored", `<testsuite><testsuites><testsuite><testcase name="lost"/></testsuite></testsuites><testcase name="kept"/></testsuite>`,
			[]Case{pass("kept")}},
		{"other root ignored", `<report><testsuite><testcase name="lost"/></testsuite></report>`, []Case{}},
		{"testcase root ignored", `<testcase name="lost"/>`, []Case{}},
		{"testcase outside suites ignored", `<testsuite><properties><testcase name="lost"/></properties></testsuite>`, []Case{}},
		{"testcase in testcase ignored", `<testsuite><testcase name="a"><testcase name="lost"/></testcase></testsuite>`, []Case{pass("a")}},
		{"bare testcase dropped", `<testsuite><testcase/><testcase></testcase><testcase name="a"/></testsuite>`, []Case{pass("a")}},
		{"testcase with only a child kept", `<testsuite><testcase><properties/></testcase></testsuite>`, []Case{pass("(No name)")}},
		{"empty name kept", `<testsuite><testcase name=""/></testsuite>`, []Case{pass("")}},
		{"no testcases", `<testsuites><testsuite/></testsuites>`, []Case{}},
		{"empty file", ``, []Case{}},
		{"blank file", " \n\t ", []Case{}},
		{"declaration, comments and namespaces", "\ufeff<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- made by a tool -->\n<j:testsuites xmlns:j=\"urn:j\"><j:testsuite><j:testcase name=\"a\"/></j:testsuite></j:testsuites>\n<!-- end -->\n",
			[]Case{pass("a")}},
		{"latin-1", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><testsuite><testcase name=\"caf\xe9\"/></testsuite>",
			[]Case{pass("café")}},
		{"time as Ruby reads it", `<testsuite><testcase name="a" time="1.5s"/><testcase name="b" time="1,5"/><testcase name="c" time="abc"/><testcase name="d" time="NaN"/><testcase name="e" time="1e999"/></testsuite>`,
			[]Case{
				{Status: StatusSuccess, Name: "a", ExecutionTime: 1.5, JobID: 7},
				{Status: StatusSuccess, Name: "b", ExecutionTime: 1, JobID: 7},
				pass("c"), pass("d"), pass("e"),
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := one(t, []byte(tc.xml))
			if s.SuiteError != "" {
				t.Fatalf("suite error %q", s.SuiteError)
			}
			wantCases(t, s.Cases, tc.want)
			wantCounts(t, s, len(tc.want), len(tc.want), 0, 0, 0)
		})
	}
}

// What lands in system_output, and attachments
// (GitLab's Junit#create_test_case).
func TestBuild_caseOutput(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Case
	}{
		{"failure text", `<failure message="short">long text</failure>`,
			Case{Status: StatusFailed, SystemOutput: str("long text")}},
		{"failure message when text blank", "<failure message=\"short\" type=\"E\">\n  </failure>",
			Case{Status: StatusFailed, SystemOutput: str("short")}},
		{"empty failure", `<failure/>`,
			Case{Status: StatusFailed, SystemOutput: str("")}},
		{"empty failure with system-err", `<failure></failure><system-err>Some failure</system-err>`,
			Case{Status: StatusFailed, SystemOutput: str("System Err:\n\nSome failure")}},
		{"failure, system-out and system-err", `<failure>Some failure</failure><system-out>This is the system output</system-out><system-err>This is the system err</system-err>`,
			Case{Status: StatusFailed, SystemOutput: str("Some failure\n\nSystem Out:\n\nThis is the system output\n\nSystem Err:\n\nThis is the system err")}},
		{"empty system-out", `<failure>f</failure><system-out/>`,
			Case{Status: StatusFailed, SystemOutput: str("f\n\nSystem Out:\n\n")}},
		{"two failures", `<failure>one</failure><failure>two</failure>`,
			Case{Status: StatusFailed, SystemOutput: str("one\n\ntwo")}},
		{"failure text without nested elements", `<failure>own <b>nested</b>text</failure>`,
			Case{Status: StatusFailed, SystemOutput: str("own text")}},
		{"failure beats error and skipped", `<skipped/><error>e</error><failure>f</failure>`,
			Case{Status: StatusFailed, SystemOutput: str("f")}},
		{"error", `<error>Some error</error><system-out>out</system-out>`,
			Case{Status: StatusError, SystemOutput: str("Some error\n\nSystem Out:\n\nout")}},
		{"error beats skipped", `<skipped/><error message="m"/>`,
			Case{Status: StatusError, SystemOutput: str("m")}},
		{"skipped", `<skipped/>`, Case{Status: StatusSkipped}},
		{"skipped empty pair", `<skipped></skipped>`, Case{Status: StatusSkipped}},
		{"skipped text", `<skipped>why</skipped><system-out>not shown</system-out>`,
			Case{Status: StatusSkipped, SystemOutput: str("why")}},
		{"skipped message", `<skipped message="why"/>`,
			Case{Status: StatusSkipped, SystemOutput: str("why")}},
		{"unknown child", `<foo>Some foo</foo>`, Case{Status: StatusSuccess}},
		{"success output hidden", `<system-out>out</system-out><system-err>err</system-err>`, Case{Status: StatusSuccess}},
		{"cdata and entities", `<failure><![CDATA[a < b]]> &amp; c</failure>`,
			Case{Status: StatusFailed, SystemOutput: str("a < b & c")}},
		{"attachment of a failure", "<failure>f</failure><system-out>\n[[ATTACHMENT|some/path.png]]\n[[ATTACHMENT|other.html]]\n</system-out>",
			Case{Status: StatusFailed, Attachment: "some/path.png",
				SystemOutput: str("f\n\nSystem Out:\n\n\n[[ATTACHMENT|some/path.png]]\n[[ATTACHMENT|other.html]]\n")}},
		{"attachment of an error", `<error>e</error><system-out>[[ATTACHMENT|shot.png]]</system-out>`,
			Case{Status: StatusError, Attachment: "shot.png", SystemOutput: str("e\n\nSystem Out:\n\n[[ATTACHMENT|shot.png]]")}},
		{"attachment after many openings", `<failure>f</failure><system-out>` + strings.Repeat("[[ATTACHMENT|", 2000) + `some/path.png]]</system-out>`,
			Case{Status: StatusFailed, Attachment: "some/path.png",
				SystemOutput: str("f\n\nSystem Out:\n\n" + strings.Repeat("[[ATTACHMENT|", 2000) + "some/path.png]]")}},
		{"not an attachment tag", `<failure>f</failure><system-out>[[attachment]some/path.png]]</system-out>`,
			Case{Status: StatusFailed, SystemOutput: str("f\n\nSystem Out:\n\n[[attachment]some/path.png]]")}},
		{"no attachment for success", `<system-out>[[ATTACHMENT|shot.png]]</system-out>`, Case{Status: StatusSuccess}},
		{"system_out spelling", `<failure>f</failure><system_out>o</system_out>`,
			Case{Status: StatusFailed, SystemOutput: str("f\n\nSystem Out:\n\no")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := one(t, []byte(`<testsuite name="Math"><testcase classname="Calculator" name="sumTest1" time="0.01">`+tc.body+`</testcase></testsuite>`))
			want := tc.want
			want.Name, want.Classname, want.ExecutionTime, want.JobID = "sumTest1", "Calculator", 0.01, 7
			wantCases(t, s.Cases, []Case{want})
		})
	}
}

// Bad content becomes the suite's error, with counts 0 and no cases.
func TestBuild_malformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"unclosed tag (GitLab's example)", []byte("<testsuite>\n  <testcase classname='Calculator' name='sumTest1' time='0.01'></testcase>\n  <testcase classname='Calculator' name='sumTest2' time='0.02'></testcase\n</testsuite>\n"),
			"JUnit XML parsing failed: XML syntax error on line 4: invalid characters between </testcase and >"},
		{"mismatched end", []byte(`<testsuite><testcase name="a"></testsuite>`),
			"JUnit XML parsing failed: XML syntax error on line 1: element <testcase> closed by </testsuite>"},
		{"truncated", []byte(`<testsuite><testcase name="a"/>`),
			"JUnit XML parsing failed: XML syntax error on line 1: unexpected EOF"},
		{"two roots", []byte("<testsuite><testcase name=\"a\"/></testsuite>\n<testsuite/>"),
			"JUnit XML parsing failed: XML syntax error on line 2: extra content at the end of the document"},
		{"text before the root", []byte(`garbage<testsuite/>`),
			"JUnit XML parsing failed: XML syntax error on line 1: text outside the root element"},
		{"not XML", []byte(`{"testsuite":"abc"}`),
			"JUnit XML parsing failed: XML syntax error on line 1: text outside the root element"},
		{"no root", []byte(`<?xml version="1.0"?><!-- nothing -->`),
			"JUnit XML parsing failed: XML syntax error on line 1: no root element"},
		{"undefined entity", []byte(`<testsuite><testcase name="a&nbsp;b"/></testsuite>`),
			"JUnit XML parsing failed: XML syntax error on line 1: invalid character entity &nbsp;"},
		{"control character", []byte("<testsuite><testcase name=\"a\"><failure>\x1b[31m</failure></testcase></testsuite>"),
			"JUnit XML parsing failed: XML syntax error on line 1: illegal character code U+001B"},
		{"unsupported encoding", []byte(`<?xml version="1.0" encoding="EBCDIC"?><testsuite/>`),
			`JUnit XML parsing failed: xml: opening charset "EBCDIC": unsupported encoding`},
		{"too deep", []byte(strings.Repeat("<testsuite>", maxDepth+1)),
			"JUnit XML parsing failed: XML syntax error on line 1: excessive depth in document: 2048"},
		{"gzip header only", []byte("\x1f\x8b\x08"),
			"JUnit data parsing failed: unexpected EOF"},
		{"bad gzip header", []byte("\x1f\x8bnot gzip at all"),
			"JUnit data parsing failed: gzip: invalid header"},
		{"corrupt gzip data", corrupt(gz(t, `<testsuite><testcase name="a"/></testsuite>`)),
			"JUnit data parsing failed: flate: corrupt input before offset 1"},
		{"truncated gzip", truncated(gz(t, `<testsuite><testcase name="a"/></testsuite>`)),
			"JUnit data parsing failed: unexpected EOF"},
		{"bad checksum", badChecksum(gz(t, `<testsuite><testcase name="a"/></testsuite>`)),
			"JUnit data parsing failed: gzip: invalid checksum"},
		{"garbage after the last member", append(gz(t, `<testsuite><testcase name="a"/></testsuite>`), "junk after the gzip stream"...),
			"JUnit data parsing failed: gzip: invalid header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := one(t, tc.data)
			if s.SuiteError != tc.want {
				t.Errorf("suite error\n %q\nwant\n %q", s.SuiteError, tc.want)
			}
			wantCounts(t, s, 0, 0, 0, 0, 0)
			if s.Cases == nil || len(s.Cases) != 0 {
				t.Errorf("cases %v; want empty, not nil", s.Cases)
			}
		})
	}
}

func corrupt(b []byte) []byte {
	b = bytes.Clone(b)
	b[10] = 0xff // first byte of the deflate data: a reserved block type
	return b
}

func truncated(b []byte) []byte { return bytes.Clone(b[:len(b)-12]) }

func badChecksum(b []byte) []byte {
	b = bytes.Clone(b)
	b[len(b)-8] ^= 0xff
	return b
}

// Several gzip members are documents of their own; one bad document fails
// the suite but the others are still read (their time counts).
func TestBuild_gzipMembers(t *testing.T) {
	a := `<testsuite><testcase name="a" time="1"/></testsuite>`
	b := `<?xml version="1.0"?><testsuites><testsuite><testcase name="b" time="2"><failure>x</failure></testcase></testsuite></testsuites>`

	s := one(t, gz(t, a, b, ""))
	wantCounts(t, s, 2, 1, 1, 0, 0)
	wantTime(t, s.TotalTime, 3)

	s = one(t, gz(t, a, `<testsuite><testcase name="bad" time="5">`, b))
	if want := "JUnit XML parsing failed: XML syntax error on line 1: unexpected EOF"; s.SuiteError != want {
		t.Errorf("suite error %q; want %q", s.SuiteError, want)
	}
	wantCounts(t, s, 0, 0, 0, 0, 0)
	wantTime(t, s.TotalTime, 3) // a and b, not the broken document's case

	// The last error wins.
	s = one(t, gz(t, `<a>`, `<b></c>`))
	if want := "JUnit XML parsing failed: XML syntax error on line 1: element <b> closed by </c>"; s.SuiteError != want {
		t.Errorf("suite error %q; want %q", s.SuiteError, want)
	}

	// Plain XML is one document.
	s = one(t, []byte(a))
	wantCounts(t, s, 1, 1, 0, 0, 0)
}

// A gzip bomb stops at MaxBytes, without inflating the rest.
func TestBuild_gzipBomb(t *testing.T) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, `<testsuite><testcase name="a"><system-out>`)
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for range 64 { // 64 MiB of output
		w.Write(chunk)
	}
	io.WriteString(w, `</system-out></testcase></testsuite>`)
	w.Close()
	compressed := buf.Len()

	var read int64
	b := Blob{JobID: 1, JobName: "bomb", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(&countingReader{r: bytes.NewReader(buf.Bytes()), n: &read}), nil
	}}
	start := time.Now()
	r := build(t, Limits{MaxBytes: 1 << 20}, b)
	s := r.Suites[0]
	if want := "JUnit data parsing failed: The XML file must be less than 1 MB."; s.SuiteError != want {
		t.Errorf("suite error %q; want %q", s.SuiteError, want)
	}
	if read > int64(compressed)/8 {
		t.Errorf("read %d of %d compressed bytes; want the read to stop early", read, compressed)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}

	// The budget is per job, over all its documents.
	doc := `<testsuite><testcase name="a"/></testsuite>`
	s = build(t, Limits{MaxBytes: int64(2 * len(doc))}, blob(1, "j", gz(t, doc, doc))).Suites[0]
	if s.SuiteError != "" {
		t.Errorf("two documents at the limit: suite error %q", s.SuiteError)
	}
	s = build(t, Limits{MaxBytes: int64(2*len(doc)) - 1}, blob(1, "j", gz(t, doc, doc))).Suites[0]
	if want := fmt.Sprintf("JUnit data parsing failed: The XML file must be less than %d bytes.", 2*len(doc)-1); s.SuiteError != want {
		t.Errorf("suite error %q; want %q", s.SuiteError, want)
	}
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func TestBuild_maxCases(t *testing.T) {
	doc := `<testsuite><testcase name="a"/><testcase name="b"/><testcase name="a"/></testsuite>`
	// Duplicates count against the limit, as in GitLab.
	s := build(t, Limits{MaxCases: 3}, blob(1, "j", []byte(doc))).Suites[0]
	if s.SuiteError != "" {
		t.Errorf("at the limit: suite error %q", s.SuiteError)
	}
	wantCounts(t, s, 2, 2, 0, 0, 0)

	s = build(t, Limits{MaxCases: 2}, blob(1, "j", []byte(doc))).Suites[0]
	if want := "JUnit data parsing failed: number of test cases exceeded the limit of 2"; s.SuiteError != want {
		t.Errorf("suite error %q; want %q", s.SuiteError, want)
	}
	wantCounts(t, s, 0, 0, 0, 0, 0)

	// The limit is per job, over all its documents.
	s = build(t, Limits{MaxCases: 5}, blob(1, "j", gz(t, doc, doc))).Suites[0]
	if want := "JUnit data parsing failed: number of test cases exceeded the limit of 5"; s.SuiteError != want {
		t.Errorf("suite error %q; want %q", s.SuiteError, want)
	}
}

// A case is kept once per key (suite name, classname, name) and status;
// the later one wins, every one's time counts.
func TestBuild_duplicates(t *testing.T) {
	s := one(t, []byte(`<testsuites>
		<testsuite name="s">
			<testcase classname="c" name="n" file="first.rb" time="1"/>
			<testcase classname="c" name="n" file="second.rb" time="2"/>
			<testcase classname="c" name="n" time="4"><failure>f</failure></testcase>
			<testcase classname="c2" name="n" time="8"/>
		</testsuite>
		<testsuite name="other">
			<testcase classname="c" name="n" time="16"/>
		</testsuite>
		<testsuite>
			<testcase classname="c" name="n" time="32"/>
		</testsuite>
		<testsuite name="test">
			<testcase classname="c" name="n" time="64"/>
		</testsuite>
	</testsuites>`))
	wantTime(t, s.TotalTime, 127)
	// The nameless suite falls back to the job's suite name ("test"), so
	// its case and the one of <testsuite name="test"> are one.
	wantCounts(t, s, 5, 4, 1, 0, 0)
	wantCases(t, s.Cases, []Case{
		{Status: StatusFailed, Classname: "c", Name: "n", ExecutionTime: 4, SystemOutput: str("f"), JobID: 7},
		{Status: StatusSuccess, Classname: "c", Name: "n", ExecutionTime: 64, JobID: 7},
		{Status: StatusSuccess, Classname: "c", Name: "n", ExecutionTime: 16, JobID: 7},
		{Status: StatusSuccess, Classname: "c2", Name: "n", ExecutionTime: 8, JobID: 7},
		{Status: StatusSuccess, Classname: "c", Name: "n", File: "second.rb", ExecutionTime: 2, JobID: 7},
	})
}

// Cases are listed error, failed, success, skipped, each slowest first,
// ties in upload order.
func TestBuild_order(t *testing.T) {
	s := one(t, []byte(`<testsuite>
		<testcase name="s1" time="1"><skipped/></testcase>
		<testcase name="ok1" time="1"/>
		<testcase name="f1" time="1"><failure/></testcase>
		<testcase name="e1" time="1"><error/></testcase>
		<testcase name="ok2" time="3"/>
		<testcase name="ok3" time="1"/>
		<testcase name="f2" time="2"><failure/></testcase>
		<testcase name="s2" time="0.5"><skipped/></testcase>
	</testsuite>`))
	var got []string
	for _, c := range s.Cases {
		got = append(got, c.Name)
	}
	if want := []string{"e1", "f2", "f1", "ok2", "ok1", "ok3", "s1", "s2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v; want %v", got, want)
	}
}

// Jobs of one group share a suite; parallel:matrix jobs keep their name.
func TestBuild_groups(t *testing.T) {
	doc := func(name string, time float64) []byte {
		return gz(t, fmt.Sprintf(`<testsuite><testcase classname="spec" name="%s" time="%v"/></testsuite>`, name, time))
	}
	matrix := func(b Blob) Blob { b.Matrix = true; return b }
	r := build(t, Limits{},
		blob(10, "rspec 1/2", doc("a", 1)),
		blob(11, "lint", doc("l", 0.5)),
		blob(12, "rspec 2/2", doc("b", 2)),
		matrix(blob(13, "test: [linux, amd64]", doc("t", 4))),
		matrix(blob(14, "test: [mac, arm64]", doc("t", 8))),
		blob(15, "build [linux]", doc("x", 16)), // not a matrix job: GitLab's group name
	)
	type suite struct {
		name  string
		count int
		time  float64
		ids   []int64
	}
	var got []suite
	for _, s := range r.Suites {
		got = append(got, suite{s.Name, s.TotalCount, s.TotalTime, s.BuildIDs})
	}
	want := []suite{
		{"rspec", 2, 3, []int64{10, 12}},
		{"lint", 1, 0.5, []int64{11}},
		{"test: [linux, amd64]", 1, 4, []int64{13}},
		{"test: [mac, arm64]", 1, 8, []int64{14}},
		{"build", 1, 16, []int64{15}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("suites\n %v\nwant\n %v", got, want)
	}
	if r.TotalCount != 6 || r.SuccessCount != 6 {
		t.Errorf("report counts %d/%d; want 6/6", r.TotalCount, r.SuccessCount)
	}
	wantTime(t, r.TotalTime, 31.5)
	// Cases of the merged suite keep their job.
	if jobs := []int64{r.Suites[0].Cases[0].JobID, r.Suites[0].Cases[1].JobID}; !reflect.DeepEqual(jobs, []int64{12, 10}) {
		t.Errorf("case jobs %v; want [12 10]", jobs)
	}
}

func TestBuild_noBlobs(t *testing.T) {
	r := build(t, Limits{})
	if r.Suites == nil || len(r.Suites) != 0 || r.TotalCount != 0 || r.TotalTime != 0 {
		t.Errorf("report %+v; want zeros and empty suites", r)
	}
	s := r.Summary()
	if s.Suites == nil || len(s.Suites) != 0 || s.Total != (SummaryTotal{}) {
		t.Errorf("summary %+v; want zeros and empty suites", s)
	}
}

// Only a stream that cannot be read makes Build fail.
func TestBuild_readFailures(t *testing.T) {
	errDisk := errors.New("disk on fire")
	good := blob(1, "ok", gz(t, `<testsuite><testcase name="a"/></testsuite>`))
	failing := func(data []byte, after int) Blob {
		return Blob{JobID: 2, JobName: "bad", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(io.MultiReader(bytes.NewReader(data[:after]), iotestErr{errDisk})), nil
		}}
	}
	big := gz(t, `<testsuite><testcase name="a"/>`+strings.Repeat(`<testcase name="b"/>`, 1000)+`</testsuite>`)
	plain := []byte(`<testsuite><testcase name="a"/></testsuite>`)
	for _, tc := range []struct {
		name string
		b    Blob
	}{
		{"open", Blob{JobID: 2, JobName: "bad", Open: func() (io.ReadCloser, error) { return nil, errDisk }}},
		{"first read", failing(nil, 0)},
		{"gzip header", failing(big, 5)},
		{"gzip data", failing(big, len(big)/2)},
		{"gzip trailer", failing(big, len(big)-4)},
		{"plain", failing(plain, 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build([]Blob{good, tc.b}, Limits{})
			if !errors.Is(err, errDisk) {
				t.Fatalf("error %v; want one wrapping %v", err, errDisk)
			}
			if !strings.Contains(err.Error(), "job 2") {
				t.Errorf("error %q does not name the job", err)
			}
		})
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// The summary adds up each job's own result (GitLab's
// Ci::BuildReportResult), the report merges the group's cases first.
func TestReport_Summary(t *testing.T) {
	same := `<testsuite><testcase classname="c" name="shared" time="1"/><testcase classname="c" name="%s" time="2"><failure/></testcase></testsuite>`
	r := build(t, Limits{},
		blob(1, "rspec 1/3", gz(t, fmt.Sprintf(same, "one"))),
		blob(2, "rspec 2/3", gz(t, fmt.Sprintf(same, "two"))),
		blob(3, "rspec 3/3", gz(t, `<testsuite><testcase name="x"`)),
		blob(4, "jest", gz(t, `<testsuite><testcase name="y" time="0.5"><skipped/></testcase><testcase name="z"><error/></testcase></testsuite>`)),
		blob(5, "lint", gz(t, `<oops>`)),
		blob(6, "lint", gz(t, `<also></bad>`)),
	)

	// The report: job 3's error voids the whole rspec suite.
	rspec := r.Suites[0]
	if want := "JUnit XML parsing failed: XML syntax error on line 1: unexpected EOF"; rspec.SuiteError != want {
		t.Errorf("rspec suite error %q; want %q", rspec.SuiteError, want)
	}
	wantCounts(t, rspec, 0, 0, 0, 0, 0)
	wantTime(t, rspec.TotalTime, 6)
	if r.TotalCount != 2 || r.SkippedCount != 1 || r.ErrorCount != 1 {
		t.Errorf("report counts %d/%d/%d; want 2/1/1", r.TotalCount, r.SkippedCount, r.ErrorCount)
	}
	wantTime(t, r.TotalTime, 6.5)
	if lint := r.Suites[2]; lint.SuiteError != "JUnit XML parsing failed: XML syntax error on line 1: element <also> closed by </bad>" {
		t.Errorf("lint suite error %q; want the last job's", lint.SuiteError)
	}

	s := r.Summary()
	want := Summary{
		Total: SummaryTotal{Time: 6.5, Count: 6, Success: 2, Failed: 2, Skipped: 1, Error: 1,
			SuiteError: "JUnit XML parsing failed: XML syntax error on line 1: unexpected EOF"},
		Suites: []SuiteSummary{
			// Each job counted alone: "shared" twice, job 3's error zeroes
			// job 3 only, the first error is the suite's.
			{Name: "rspec", TotalTime: 6, TotalCount: 4, SuccessCount: 2, FailedCount: 2, BuildIDs: []int64{1, 2, 3},
				SuiteError: "JUnit XML parsing failed: XML syntax error on line 1: unexpected EOF"},
			{Name: "jest", TotalTime: 0.5, TotalCount: 2, SkippedCount: 1, ErrorCount: 1, BuildIDs: []int64{4}},
			{Name: "lint", BuildIDs: []int64{5, 6},
				SuiteError: "JUnit XML parsing failed: XML syntax error on line 1: unexpected EOF"},
		},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("summary\n %+v\nwant\n %+v", s, want)
	}
}

func TestGroupName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"rspec", "rspec"},
		{"rspec 1/3", "rspec"},
		{"rspec 1:3", "rspec"},
		{"rspec 1 3", "rspec"},
		{`rspec 1\3`, "rspec"},
		{"rspec:1/3", "rspec"},
		{"rspec 10/10 ", "rspec"},
		{"rspec 1 / 3", "rspec"},
		{"rspec 1/3 2/4", "rspec"},
		{"rspec 1/3 2/4 3/5", "rspec"},
		{"rspec 1/3 2/4 3/5 4/6", "rspec 1/3"}, // at most three parts
		{"test: [a, b]", "test"},
		{"test: [a, b] 1/2", "test"},
		{"test [linux]", "test"},
		{"1/3 rspec", "1/3 rspec"},
		{"rspec 1/3 unit", "rspec 1/3 unit"},
		{"rspec1/3", "rspec1/3"},
		{"ruby 2.7 1/2", "ruby 2.7"},
		{"build 2024", "build 2024"},
		{"  spaced  ", "spaced"},
		{"", ""},
		{"1/2", "1/2"},
		{" 1/2", ""},
	} {
		if got := GroupName(tc.in); got != tc.want {
			t.Errorf("GroupName(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestRubyFloat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"", 0}, {"0.01", 0.01}, {"  2.5", 2.5}, {"1.5s", 1.5}, {"1,234.5", 1},
		{".5", 0.5}, {"-.5", -0.5}, {"5.", 5}, {"-3", -3}, {"+3", 3},
		{"1e3", 1000}, {"1.5E-1", 0.15}, {"1e", 1}, {"1e+", 1}, {"e5", 0},
		{"1_000.5", 1000.5}, {"1__0", 1}, {"_1", 0}, {"0x1A", 0},
		{"abc", 0}, {"NaN", 0}, {"Infinity", 0}, {"1e999", 0}, {"1.2.3", 1.2},
	} {
		if got := rubyFloat(tc.in); got != tc.want {
			t.Errorf("rubyFloat(%q) = %v; want %v", tc.in, got, tc.want)
		}
	}
}
