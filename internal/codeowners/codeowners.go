// Package codeowners reads GitLab's CODEOWNERS format and answers who owns
// a set of changed paths. It is pure: it does no I/O and imports only the
// standard library.
//
// A file is a list of lines:
//
//	# A comment: # only starts one at the start of a line.
//	* @default-owner
//	/docs/ @docs-team docs@example.com
//	path\ with\ spaces/ @group/subgroup
//	\#file_with_hash @user @@maintainer
//
//	# A section requiring 2 approvals, with default owners:
//	[Documentation][2] @docs-team
//	# Owned by the heading's default owners:
//	docs/
//	# An optional section:
//	^[Database] @db-team
//
// Entries before the first heading belong to the default section, named
// DefaultSection. Each section is judged on its own, and within a section
// the last entry matching a path decides its owners (see Match for the
// patterns, Classify for the owners).
package codeowners

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultSection is the name of the section holding the entries written
// before any section heading (GitLab's "codeowners").
const DefaultSection = "codeowners"

// Bounds of Parse. A file over MaxFileBytes, MaxEntries or MaxSections
// is invalid as a whole: Parse returns no sections for it, only a
// *LimitError, so it gives no owners (rather than the owners of the part
// that fit, which would depend on where the cut fell). The other bounds
// skip a line or stop reporting.
//
// MaxFileBytes is 1 MiB. GitLab sets no bound of its own on CODEOWNERS:
// it reads the blob as it reads any blob for display, at most 10 MiB
// (Gitlab::Git::Blob::MAX_DATA_DISPLAY_SIZE, lib/gitlab/git/blob.rb), and
// parses what it got. CheckSize tells a blob too large before it is read.
//
// MaxEntries is 10,000: at about 100 bytes a line (a path and two
// owners), a file at MaxFileBytes holds that many, and a file kept by
// hand seldom comes near it — past it, a file is a generated listing of
// single files, better written as directories and wildcards. The bound caps what
// matching can cost: an Index finds entries without wildcards by lookup,
// and tries at most MaxEntries others per changed path.
const (
	MaxFileBytes    = 1 << 20
	MaxEntries      = 10000
	MaxSections     = 1000
	maxLineBytes    = 16 << 10
	maxPatternBytes = 4096
	maxErrors       = 1000
	maxApprovals    = 1000
)

// LimitError says that a CODEOWNERS file is over one of Parse's bounds
// (MaxFileBytes, MaxEntries, MaxSections): the file is invalid and gives
// no owners.
type LimitError struct {
	Line int // the 1-based line that crossed the bound; 0 for the size
	Msg  string
}

func (e *LimitError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// CheckSize returns a *LimitError when a file of size bytes is over
// MaxFileBytes, so that a caller knowing a blob's size need not read it.
func CheckSize(size int64) error {
	if size > MaxFileBytes {
		return &LimitError{Msg: fmt.Sprintf("file of %d bytes is larger than %d bytes; the file is ignored", size, MaxFileBytes)}
	}
	return nil
}

// File is a parsed CODEOWNERS file.
type File struct {
	// Sections in the order their names first appear; the default
	// section, when it has entries, is first. Headings with the same name
	// (compared case-insensitively) make one section.
	Sections []Section
}

// Section is a group of entries judged apart from the others.
type Section struct {
	// Name is as first written (DefaultSection for the unnamed one).
	Name string
	// Optional: every heading of the section starts with ^ (approvals
	// are not required); one required heading makes the section required.
	Optional bool
	// ApprovalsRequired is the number in [Name][n], the largest one when
	// the section has several headings; 1 when none is given.
	ApprovalsRequired int
	// DefaultOwners are the owners written on the section's headings,
	// deduplicated. They are already applied: an entry without owners
	// under a heading with default owners holds that heading's owners in
	// Entries.
	DefaultOwners []string
	// Entries in file order.
	Entries []Entry
}

// Entry is one pattern line.
type Entry struct {
	// Pattern is as written, escapes included (Match understands them).
	Pattern string
	// Owners are the well-formed owners as written, deduplicated; the
	// heading's default owners when the line names none (one slice
	// shared by the heading's entries: read it, do not change it).
	// Empty: the pattern clears ownership of the paths it matches (last
	// match wins).
	Owners []string
	// Line is the 1-based line number.
	Line int
}

// LineError is a problem of one line of a CODEOWNERS file: what was
// ignored or assumed there.
type LineError struct {
	Line int // 1-based
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse reads a CODEOWNERS file. A file over a bound (more than 1 MiB,
// 10,000 entries or 1,000 sections) is invalid as a whole: Parse returns
// no sections and one *LimitError. Otherwise each error it returns is a
// *LineError, and the line it names is skipped unless the message says
// what was assumed instead:
//
//   - a heading without a closing ] or without a name is skipped, and
//     the entries after it stay in the section before it;
//   - an approvals count that is not a positive integer counts as 1 (one
//     above 1000 as 1000), and a count on an optional heading is kept but
//     reported;
//   - malformed owners (text that is neither @name, @group/path, @@role
//     nor an e-mail, such as an inline "# comment") are dropped from the
//     line; an entry whose owners are all malformed is skipped;
//   - exclusions (!pattern) are not supported and are skipped, so the
//     paths they name keep their owners;
//   - a line longer than 16 KiB or a pattern longer than 4096 bytes is
//     skipped.
//
// Parse returns at most 1,000 line errors. A UTF-8 byte order mark and
// CRLF line ends are accepted. Its time is linear in the size of data.
func Parse(data []byte) (File, []error) {
	if err := CheckSize(int64(len(data))); err != nil {
		return File{}, []error{err}
	}
	p := parser{byName: map[string]int{}}
	p.sections = []Section{{Name: DefaultSection, ApprovalsRequired: 1}}
	p.byName[strings.ToLower(DefaultSection)] = 0
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	line := 0
	for len(data) > 0 {
		line++
		text := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if !p.line(line, string(bytes.TrimSuffix(text, []byte("\r")))) {
			return File{}, []error{p.limit}
		}
	}
	var f File
	for i, s := range p.sections {
		if i == 0 && len(s.Entries) == 0 && !p.defaultHeading {
			continue
		}
		f.Sections = append(f.Sections, s)
	}
	return f, p.errs
}

type parser struct {
	sections []Section
	byName   map[string]int // lower-cased name → index in sections
	current  int            // index of the section in force
	defaults []string       // default owners of the heading in force
	// defaultOwners: each section's DefaultOwners as it grows.
	defaultOwners []ownerList
	entries       int
	errs          []error
	limit         *LimitError // the bound the file crossed
	// defaultHeading: a heading named like the default section was
	// written, so that section is kept even without entries.
	defaultHeading bool
}

func (p *parser) errorf(line int, format string, args ...any) {
	switch {
	case len(p.errs) < maxErrors:
		p.errs = append(p.errs, &LineError{Line: line, Msg: fmt.Sprintf(format, args...)})
	case len(p.errs) == maxErrors:
		p.errs = append(p.errs, &LineError{Line: line, Msg: "too many errors; no more are reported"})
	}
}

// stop records the bound the file crossed at line: it is invalid.
func (p *parser) stop(line int, format string, args ...any) bool {
	p.limit = &LimitError{Line: line, Msg: fmt.Sprintf(format, args...) + "; the file is ignored"}
	return false
}

// line parses one line; false stops the parse.
func (p *parser) line(n int, text string) bool {
	if len(text) > maxLineBytes {
		p.errorf(n, "line longer than %d bytes", maxLineBytes)
		return true
	}
	trimmed := strings.TrimLeft(text, spaces)
	switch {
	case trimmed == "" || trimmed[0] == '#':
		return true
	case trimmed[0] == '[' || strings.HasPrefix(trimmed, "^["):
		return p.heading(n, trimmed)
	}
	return p.entry(n, trimmed)
}

// heading parses "^[Name][n] @owner…".
func (p *parser) heading(n int, text string) bool {
	optional := text[0] == '^'
	if optional {
		text = text[1:]
	}
	end := strings.IndexByte(text, ']')
	if end < 0 {
		p.errorf(n, "section heading %q has no closing ]; line ignored", clip(text))
		return true
	}
	name := strings.Trim(text[1:end], spaces)
	if name == "" {
		p.errorf(n, "section heading without a name; line ignored")
		return true
	}
	rest := text[end+1:]
	approvals, explicit := 1, false
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			p.errorf(n, "approvals count of section %q has no closing ]; line ignored", clip(name))
			return true
		}
		count := rest[1:end]
		rest = rest[end+1:]
		explicit = true
		approvals = p.approvals(n, name, count)
	}
	if optional && explicit {
		p.errorf(n, "optional section %q requires no approvals; its count is kept but not enforced", clip(name))
	}
	defaults, _ := p.owners(n, tokens(rest))

	key := strings.ToLower(name)
	i, ok := p.byName[key]
	if !ok {
		if len(p.sections) > MaxSections {
			return p.stop(n, "more than %d sections", MaxSections)
		}
		i = len(p.sections)
		p.byName[key] = i
		p.sections = append(p.sections, Section{Name: name, Optional: true})
	}
	if i == 0 {
		p.defaultHeading = true
	}
	s := &p.sections[i]
	if !optional {
		s.Optional = false
	}
	s.ApprovalsRequired = max(s.ApprovalsRequired, approvals)
	for len(p.defaultOwners) <= i {
		p.defaultOwners = append(p.defaultOwners, ownerList{})
	}
	d := &p.defaultOwners[i]
	for _, o := range defaults {
		d.add(o)
	}
	s.DefaultOwners = d.list
	p.current, p.defaults = i, slices.Clip(defaults)
	return true
}

// approvals reads the n of [Name][n].
func (p *parser) approvals(line int, section, count string) int {
	for _, c := range count {
		if c < '0' || c > '9' {
			p.errorf(line, "approvals count %q of section %q is not a number; 1 assumed", clip(count), clip(section))
			return 1
		}
	}
	v, err := strconv.Atoi(count)
	switch {
	case count == "" || v == 0 && err == nil:
		p.errorf(line, "approvals count of section %q is not positive; 1 assumed", clip(section))
		return 1
	case err != nil || v > maxApprovals:
		p.errorf(line, "approvals count of section %q is above %d; %d assumed", clip(section), maxApprovals, maxApprovals)
		return maxApprovals
	}
	return v
}

// entry parses "pattern owner…".
func (p *parser) entry(n int, text string) bool {
	toks := tokens(text)
	pattern := toks[0]
	if strings.HasPrefix(pattern, "!") {
		p.errorf(n, "exclusion %q is not supported; line ignored", clip(pattern))
		return true
	}
	if len(pattern) > maxPatternBytes {
		p.errorf(n, "pattern longer than %d bytes; line ignored", maxPatternBytes)
		return true
	}
	owners, malformed := p.owners(n, toks[1:])
	if len(owners) == 0 && malformed > 0 {
		p.errorf(n, "entry %q has no well-formed owner; line ignored", clip(pattern))
		return true
	}
	if len(toks) == 1 {
		owners = p.defaults // shared by the heading's entries; never appended to
	}
	if p.entries == MaxEntries {
		return p.stop(n, "more than %d entries", MaxEntries)
	}
	p.entries++
	s := &p.sections[p.current]
	s.Entries = append(s.Entries, Entry{Pattern: pattern, Owners: owners, Line: n})
	return true
}

// owners keeps the well-formed owners of toks, deduplicated, and reports
// the others (one error per line).
func (p *parser) owners(line int, toks []string) (owners []string, malformed int) {
	var bad []string
	var list ownerList
	for _, t := range toks {
		if kind, _ := Classify(t); kind == "" {
			malformed++
			if len(bad) < 5 {
				bad = append(bad, strconv.Quote(clip(t)))
			}
			continue
		}
		list.add(t)
	}
	if malformed > 0 {
		more := ""
		if malformed > len(bad) {
			more = fmt.Sprintf(" and %d more", malformed-len(bad))
		}
		p.errorf(line, "malformed owners ignored: %s%s", strings.Join(bad, " "), more)
	}
	return list.list, malformed
}

// ownerList is a list of owners without repeats, compared
// case-insensitively (as GitLab compares names and e-mails, and as
// strings.EqualFold does). Adding costs a comparison with each owner
// while the list is short, a map lookup once it is long.
type ownerList struct {
	list []string
	keys map[string]bool // foldKey of each owner, once the list is long
}

// add appends o unless the list has it; true when appended.
func (l *ownerList) add(o string) bool {
	const short = 16
	if l.keys == nil && len(l.list) < short {
		for _, have := range l.list {
			if strings.EqualFold(have, o) {
				return false
			}
		}
		l.list = append(l.list, o)
		return true
	}
	if l.keys == nil {
		l.keys = make(map[string]bool, 2*len(l.list))
		for _, have := range l.list {
			l.keys[foldKey(have)] = true
		}
	}
	k := foldKey(o)
	if l.keys[k] {
		return false
	}
	l.keys[k] = true
	l.list = append(l.list, o)
	return true
}

// foldKey is the same string for two strings that strings.EqualFold finds
// equal, and different strings otherwise: each character replaced by the
// smallest of the characters it folds to (for ASCII, the upper case).
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s)
	}
	var b strings.Builder
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b.WriteRune(low)
	}
	return b.String()
}

// spaces are the characters separating a pattern and its owners (Ruby's
// \s, as GitLab splits lines).
const spaces = " \t\v\f\r"

func isSpace(c byte) bool { return strings.IndexByte(spaces, c) >= 0 }

// tokens splits text at runs of whitespace not escaped by a backslash;
// tokens keep their escapes.
func tokens(text string) []string {
	var out []string
	start := -1
	for i := 0; i < len(text); i++ {
		c := text[i]
		if isSpace(c) {
			if start >= 0 {
				out = append(out, text[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
		if c == '\\' && i+1 < len(text) {
			i++ // the escaped byte, whitespace or not, is part of the token
		}
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
