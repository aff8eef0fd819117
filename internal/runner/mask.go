package runner

import (
	"bytes"
	"io"
	"sort"
)

// maskText replaces every masked value in a job's log.
const maskText = "[MASKED]"

// masker is a writer that replaces each occurrence of its secrets by
// "[MASKED]" before passing the text on, also when a secret is split
// across writes: it holds back the bytes that may begin a secret (at most
// the longest secret's length minus one) until more output decides, or
// Close. At one position the longest secret wins; the output does not
// depend on how the input was cut into writes.
//
// A masker is not safe for concurrent use.
type masker struct {
	out     io.Writer
	secrets [][]byte // longest first
	first   [256]bool
	maxLen  int
	pending []byte
	scratch []byte
}

// newMasker masks values (empty ones and duplicates left out) in what it
// writes to out.
func newMasker(out io.Writer, values []string) *masker {
	m := &masker{out: out}
	seen := map[string]bool{}
	for _, v := range values {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		m.secrets = append(m.secrets, []byte(v))
		m.first[v[0]] = true
		m.maxLen = max(m.maxLen, len(v))
	}
	sort.SliceStable(m.secrets, func(i, j int) bool { return len(m.secrets[i]) > len(m.secrets[j]) })
	return m
}

// Write masks p (with what earlier writes held back) and passes on all it
// can decide.
func (m *masker) Write(p []byte) (int, error) {
	if len(m.secrets) == 0 {
		return len(p), m.emit(p)
	}
	buf := p
	if len(m.pending) > 0 {
		buf = append(m.pending, p...)
	}
	rest, err := m.process(buf, false)
	m.pending = append(m.pending[:0:0], rest...)
	return len(p), err
}

// Close passes on what was held back: at the end, no secret can complete.
func (m *masker) Close() error {
	if len(m.pending) == 0 {
		return nil
	}
	_, err := m.process(m.pending, true)
	m.pending = nil
	return err
}

// process masks buf and writes the decided part; it returns the tail that
// may still begin a secret (empty when final).
func (m *masker) process(buf []byte, final bool) ([]byte, error) {
	out := m.scratch[:0]
	plain := 0 // start of the text not yet copied to out
	i := 0
	for i < len(buf) {
		if !m.first[buf[i]] {
			i++
			continue
		}
		rest := buf[i:]
		full, partial := 0, false
		for _, s := range m.secrets {
			if len(rest) >= len(s) {
				if full == 0 && bytes.Equal(rest[:len(s)], s) {
					full = len(s)
				}
			} else if !final && bytes.HasPrefix(s, rest) {
				// A secret longer than what we have may still match
				// here: wait for more.
				partial = true
				break
			}
		}
		if partial {
			out = append(out, buf[plain:i]...)
			m.scratch = out
			return buf[i:], m.emit(out)
		}
		if full > 0 {
			out = append(out, buf[plain:i]...)
			out = append(out, maskText...)
			i += full
			plain = i
			continue
		}
		i++
	}
	out = append(out, buf[plain:]...)
	m.scratch = out
	return nil, m.emit(out)
}

func (m *masker) emit(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := m.out.Write(b)
	return err
}
