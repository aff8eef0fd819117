package testreport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds element nesting, as libxml2 does for GitLab with its
// "huge" option; it also bounds the decoder's own stack.
const maxDepth = 2048

var (
	errTooLarge     = errors.New("upload too large")
	errTooManyCases = errors.New("too many test cases")
)

// attachmentTag is GitLab's [[ATTACHMENT|path]] tag in <system-out>.
var attachmentTag = regexp.MustCompile(`\[\[ATTACHMENT\|([^\[\]|]+)\]\]`)

// keyedCase is a case with its deduplication key.
type keyedCase struct {
	Case
	key string
}

// jobResult is what one job's upload yields.
type jobResult struct {
	cases []keyedCase // of the documents read whole, in upload order
	time  float64     // the sum of their times
	err   string      // the last failure, "" when none
}

// parseJob reads one job's upload. suite names the job's suite (the key of
// cases whose <testsuite> has no name). The error is only an I/O failure of
// the stream; everything else lands in jobResult.err.
func parseJob(b Blob, suite string, l Limits) (jobResult, error) {
	if b.Open == nil {
		return jobResult{}, errors.New("no stream to open")
	}
	rc, err := b.Open()
	if err != nil {
		return jobResult{}, fmt.Errorf("open: %w", err)
	}
	defer rc.Close()

	p := &jobParser{jobID: b.JobID, suite: suite, limits: l, left: l.MaxBytes}
	src := &errReader{r: rc}
	br := bufio.NewReader(src)
	head, _ := br.Peek(2)
	if src.err != nil {
		return jobResult{}, src.err
	}
	if len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
		p.document(br, false)
		if src.err != nil {
			return jobResult{}, src.err
		}
		return p.out, nil
	}

	// Each gzip member is a document; Multistream(false) stops the reader
	// at a member's end, Reset moves it to the next one.
	zr, err := gzip.NewReader(br)
	for {
		if src.err != nil {
			return jobResult{}, src.err
		}
		if err == io.EOF {
			return p.out, nil
		}
		if err != nil {
			p.fail(dataFailure(err.Error()))
			return p.out, nil
		}
		zr.Multistream(false)
		if !p.document(zr, true) {
			if src.err != nil {
				return jobResult{}, src.err
			}
			return p.out, nil
		}
		err = zr.Reset(br)
	}
}

// jobParser reads the documents of one job's upload.
type jobParser struct {
	jobID  int64
	suite  string
	limits Limits
	left   int64 // decompressed bytes the job may still read
	out    jobResult
	buf    *bufio.Reader // reused by the job's documents
}

func (p *jobParser) fail(msg string) { p.out.err = msg }

func dataFailure(msg string) string { return "JUnit data parsing failed: " + msg }

func (p *jobParser) tooLarge() string {
	size := fmt.Sprintf("%d bytes", p.limits.MaxBytes)
	if p.limits.MaxBytes%(1<<20) == 0 {
		size = fmt.Sprintf("%d MB", p.limits.MaxBytes>>20)
	}
	return dataFailure("The XML file must be less than " + size + ".")
}

// document reads one document from r to its end and keeps its cases if it
// parses whole. gzipped says r is a gzip reader. It reports whether the
// next document may be read: not after a failure of the stream, the
// decompression or a limit.
func (p *jobParser) document(r io.Reader, gzipped bool) bool {
	var z *errReader
	if gzipped {
		z = &errReader{r: r}
		r = z
	}
	in := &budgetReader{r: r, left: &p.left}
	cases, time, err := p.parse(in)
	if err == nil {
		// Reach the member's end, where gzip checks its checksum.
		if _, err = io.Copy(io.Discard, in); err == nil {
			if p.out.cases == nil {
				p.out.cases = cases
			} else {
				p.out.cases = append(p.out.cases, cases...)
			}
			p.out.time += time
			return true
		}
	}
	switch {
	case errors.Is(err, errTooLarge):
		p.fail(p.tooLarge())
		return false
	case errors.Is(err, errTooManyCases):
		p.fail(dataFailure(fmt.Sprintf("number of test cases exceeded the limit of %d", p.limits.MaxCases)))
		return false
	case z != nil && z.err != nil:
		p.fail(dataFailure(z.err.Error()))
		return false
	case in.failed:
		// The stream failed under us: parseJob reports it.
		return false
	}
	p.fail("JUnit XML parsing failed: " + err.Error())
	// Skip the rest of the document; the next one is read on its own.
	if _, err := io.Copy(io.Discard, in); err != nil {
		switch {
		case errors.Is(err, errTooLarge):
			p.fail(p.tooLarge())
		case z != nil && z.err != nil:
			p.fail(dataFailure(z.err.Error()))
		}
		return false
	}
	return true
}

// frame is an open element.
type frame uint8

const (
	frameOther frame = iota // ignored, with all it holds
	frameSuite              // the root <testsuites>, or a <testsuite> reached through suites
	frameCase               // a <testcase> of a suite
	frameText               // a child of a case whose text the case uses
)

// parse reads one XML document token by token and returns its cases and
// their summed time.
func (p *jobParser) parse(r io.Reader) ([]keyedCase, float64, error) {
	if p.buf == nil {
		p.buf = bufio.NewReader(r)
	} else {
		p.buf.Reset(r)
	}
	if bom, _ := p.buf.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		p.buf.Discard(3)
	}
	d := xml.NewDecoder(p.buf)
	d.CharsetReader = charsetReader

	var (
		cases    []keyedCase
		total    float64
		stack    []frame
		suites   []suiteName // names of the open suite frames
		tc       *caseBuilder
		text     *textBuilder
		root     bool // the root element has started
		rootDone bool // and ended
		markup   bool // a comment, processing instruction or directive was seen
	)
	syntax := func(msg string) error {
		line, _ := d.InputPos()
		return &xml.SyntaxError{Msg: msg, Line: line}
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if rootDone {
				return nil, 0, syntax("extra content at the end of the document")
			}
			if len(stack) >= maxDepth {
				return nil, 0, syntax(fmt.Sprintf("excessive depth in document: %d", maxDepth))
			}
			root = true
			f := frameOther
			name := t.Name.Local
			if len(stack) == 0 {
				if name == "testsuites" || name == "testsuite" {
					f = frameSuite
				}
			} else {
				switch parent := stack[len(stack)-1]; {
				case parent == frameSuite && name == "testsuite":
					f = frameSuite
				case parent == frameSuite && name == "testcase":
					f = frameCase
					tc = newCase(t.Attr, suites[len(suites)-1])
				case parent == frameCase:
					tc.children++
					if pt := partOf(name); pt != partNone {
						f = frameText
						message, hasMessage := attr(t.Attr, "message")
						text = &textBuilder{part: pt, message: message, hasMessage: hasMessage}
					}
				}
			}
			if f == frameSuite {
				suite, ok := attr(t.Attr, "name")
				suites = append(suites, suiteName{suite, ok})
			}
			stack = append(stack, f)
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch f {
			case frameSuite:
				suites = suites[:len(suites)-1]
			case frameText:
				tc.add(text)
				text = nil
			case frameCase:
				if c, ok := tc.build(p.suite, p.jobID); ok {
					if len(p.out.cases)+len(cases) >= p.limits.MaxCases {
						return nil, 0, errTooManyCases
					}
					cases = append(cases, c)
					total += c.ExecutionTime
				}
				tc = nil
			}
			if len(stack) == 0 {
				rootDone = true
			}
		case xml.CharData:
			switch {
			case len(stack) == 0:
				if len(bytes.Trim(t, " \t\r\n")) > 0 {
					return nil, 0, syntax("text outside the root element")
				}
			case stack[len(stack)-1] == frameText:
				text.b.Write(t)
			}
		default:
			markup = true
		}
	}
	if !root && markup {
		return nil, 0, syntax("no root element")
	}
	return cases, total, nil
}

// suiteName is a <testsuite>'s name attribute, if it has one.
type suiteName struct {
	name string
	ok   bool
}

// part says which child of a <testcase> a text belongs to.
type part uint8

const (
	partNone part = iota
	partFailure
	partError
	partSkipped
	partOut
	partErr
)

func partOf(element string) part {
	switch element {
	case "failure":
		return partFailure
	case "error":
		return partError
	case "skipped":
		return partSkipped
	// GitLab's hash conversion turns dashes into underscores, so both
	// spellings land on the same key.
	case "system-out", "system_out":
		return partOut
	case "system-err", "system_err":
		return partErr
	}
	return partNone
}

// textBuilder gathers the direct text of one child of a <testcase>.
type textBuilder struct {
	part       part
	b          strings.Builder
	message    string
	hasMessage bool
}

// caseBuilder gathers one <testcase>.
type caseBuilder struct {
	suite                    suiteName
	attrs, children          int
	name, classname, file    string
	hasName                  bool
	time                     float64
	has                      [partErr + 1]bool
	failed, errored, skipped []string // status texts, blank ones left out
	out, err                 []string // system-out and system-err texts
}

func newCase(attrs []xml.Attr, suite suiteName) *caseBuilder {
	c := &caseBuilder{suite: suite}
	for _, a := range attrs {
		if isNamespaceDecl(a) {
			continue
		}
		c.attrs++
		switch a.Name.Local {
		case "name":
			c.name, c.hasName = a.Value, true
		case "classname":
			c.classname = a.Value
		case "file":
			c.file = a.Value
		case "time":
			c.time = rubyFloat(a.Value)
		}
	}
	return c
}

func (c *caseBuilder) add(t *textBuilder) {
	c.has[t.part] = true
	s := t.b.String()
	switch t.part {
	case partOut:
		c.out = append(c.out, s)
		return
	case partErr:
		c.err = append(c.err, s)
		return
	}
	if strings.TrimSpace(s) == "" {
		s = ""
		if t.hasMessage {
			s = t.message
		}
	}
	if s == "" {
		return
	}
	switch t.part {
	case partFailure:
		c.failed = append(c.failed, s)
	case partError:
		c.errored = append(c.errored, s)
	case partSkipped:
		c.skipped = append(c.skipped, s)
	}
}

// build returns the case; false for a <testcase> with neither attributes
// nor child elements, which GitLab's hash conversion drops.
func (c *caseBuilder) build(defaultSuite string, jobID int64) (keyedCase, bool) {
	if c.attrs == 0 && c.children == 0 {
		return keyedCase{}, false
	}
	suite := defaultSuite
	if c.suite.ok {
		suite = c.suite.name
	}
	k := keyedCase{
		key: suite + "_" + c.classname + "_" + c.name,
		Case: Case{
			Name:          c.name,
			Classname:     c.classname,
			File:          c.file,
			ExecutionTime: c.time,
			JobID:         jobID,
		},
	}
	if !c.hasName {
		k.Name = "(No name)"
	}
	// The status text comes first, then the captured output.
	output := func(status []string) *string {
		parts := slices.Clone(status)
		if c.has[partOut] {
			parts = append(parts, "System Out:\n\n"+strings.Join(c.out, "\n\n"))
		}
		if c.has[partErr] {
			parts = append(parts, "System Err:\n\n"+strings.Join(c.err, "\n\n"))
		}
		s := strings.Join(parts, "\n\n")
		if m := attachmentTag.FindStringSubmatch(strings.Join(c.out, "\n\n")); m != nil {
			k.Attachment = m[1]
		}
		return &s
	}
	switch {
	case c.has[partFailure]:
		k.Status = StatusFailed
		k.SystemOutput = output(c.failed)
	case c.has[partError]:
		k.Status = StatusError
		k.SystemOutput = output(c.errored)
	case c.has[partSkipped]:
		k.Status = StatusSkipped
		if len(c.skipped) > 0 {
			s := strings.Join(c.skipped, "\n\n")
			k.SystemOutput = &s
		}
	default:
		k.Status = StatusSuccess
	}
	return k, true
}

// attr returns the last attribute with the local name (namespace
// declarations aside).
func attr(attrs []xml.Attr, local string) (string, bool) {
	for i := len(attrs) - 1; i >= 0; i-- {
		if attrs[i].Name.Local == local && !isNamespaceDecl(attrs[i]) {
			return attrs[i].Value, true
		}
	}
	return "", false
}

func isNamespaceDecl(a xml.Attr) bool {
	return a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns"
}

// rubyFloat reads s as Ruby's String#to_f does: leading whitespace, then
// the longest prefix that is a decimal number (underscores allowed between
// digits); 0 when there is none. Values out of range give 0, not ±Inf.
func rubyFloat(s string) float64 {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	var num []byte
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		num = append(num, s[i])
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) {
			switch {
			case isDigit(s[i]):
				num = append(num, s[i])
				n++
			case s[i] == '_' && n > 0 && i+1 < len(s) && isDigit(s[i+1]):
			default:
				return n
			}
			i++
		}
		return n
	}
	whole := digits()
	if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		num = append(num, '.')
		i++
		digits()
	} else if whole == 0 {
		return 0
	}
	if i+1 < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if s[j] == '+' || s[j] == '-' {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			num = append(num, s[i:j]...)
			i = j
			digits()
		}
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	return f
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// charsetReader decodes the single-byte encodings a JUnit file may declare
// besides UTF-8 (which encoding/xml reads itself).
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii":
		return &latin1Reader{r: r}, nil
	}
	return nil, errors.New("unsupported encoding")
}

// latin1Reader turns ISO-8859-1 into UTF-8.
type latin1Reader struct {
	r       io.Reader
	in, out []byte
	pending []byte // converted, not yet returned
	err     error
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(l.pending) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		n := max(len(p)/2, 1)
		if cap(l.in) < n {
			l.in = make([]byte, n)
		}
		n, l.err = l.r.Read(l.in[:n])
		l.out = l.out[:0]
		for _, c := range l.in[:n] {
			l.out = utf8.AppendRune(l.out, rune(c))
		}
		l.pending = l.out
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	if len(l.pending) == 0 && l.err != nil {
		return n, l.err
	}
	return n, nil
}

// errReader keeps the first failure of the reader under it (io.EOF is no
// failure).
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// budgetReader fails with errTooLarge once more than *left bytes were read
// through it (the budget is shared by a job's documents). failed records
// any other failure.
type budgetReader struct {
	r      io.Reader
	left   *int64
	failed bool
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if *b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > *b.left+1 {
		p = p[:*b.left+1]
	}
	n, err := b.r.Read(p)
	*b.left -= int64(n)
	if *b.left < 0 {
		return n - 1, errTooLarge
	}
	if err != nil && err != io.EOF {
		b.failed = true
	}
	return n, err
}
