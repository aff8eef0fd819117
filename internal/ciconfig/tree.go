package ciconfig

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A value is what a YAML node becomes: nil, bool, int64, float64,
// string, *mapping, []any or *reference (a !reference tag not resolved
// yet). Values are never changed once built: anchors, merge keys,
// includes, extends and !reference share subtrees instead of copying
// them, which is what keeps hostile documents cheap.

// mapping is a YAML mapping with its keys in the order written (Ruby's
// Hash order, which GitLab's messages and job order follow).
type mapping struct {
	keys []string
	vals map[string]any
}

func newMapping(n int) *mapping { return &mapping{vals: make(map[string]any, n)} }

// set adds or replaces k while the mapping is being built; a replaced
// key keeps its first position, as in a Ruby Hash.
func (m *mapping) set(k string, v any) {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

func (m *mapping) get(k string) (any, bool) {
	if m == nil {
		return nil, false
	}
	v, ok := m.vals[k]
	return v, ok
}

func (m *mapping) has(k string) bool { _, ok := m.get(k); return ok }

func (m *mapping) len() int {
	if m == nil {
		return 0
	}
	return len(m.keys)
}

// without returns a copy of m without the keys.
func (m *mapping) without(keys ...string) *mapping {
	out := newMapping(m.len())
	for _, k := range m.keys {
		if !slices.Contains(keys, k) {
			out.set(k, m.vals[k])
		}
	}
	return out
}

func (m *mapping) clone(extra int) *mapping {
	out := &mapping{keys: make([]string, len(m.keys), len(m.keys)+extra), vals: make(map[string]any, len(m.keys)+extra)}
	copy(out.keys, m.keys)
	for k, v := range m.vals {
		out.vals[k] = v
	}
	return out
}

// deepMerge is ActiveSupport's Hash#deep_merge: over's keys win, hashes
// on both sides are merged, anything else (arrays too) is replaced. The
// cost, a key visited, is charged to b.
func deepMerge(base, over *mapping, b *budget) (*mapping, error) {
	if base.len() == 0 {
		return over, nil
	}
	if err := b.spend(base.len() + over.len()); err != nil {
		return nil, err
	}
	out := base.clone(over.len())
	for _, k := range over.keys {
		v := over.vals[k]
		if bm, ok := out.vals[k].(*mapping); ok {
			if om, ok := v.(*mapping); ok {
				merged, err := deepMerge(bm, om, b)
				if err != nil {
					return nil, err
				}
				v = merged
			}
		}
		out.set(k, v)
	}
	return out, nil
}

// budget bounds the work of turning a document into a configuration
// (merges, extends, references, decoding) so that a small document whose
// parts are reused many times cannot take unbounded time or memory.
type budget struct{ left int }

func (b *budget) spend(n int) error {
	b.left -= n
	if b.left < 0 {
		return configError(msgTooLong)
	}
	return nil
}

// blank is Ruby's blank?: nil, false, whitespace, empty collections.
func blank(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return strings.TrimSpace(v) == ""
	case []any:
		return len(v) == 0
	case *mapping:
		return v.len() == 0
	}
	return false
}

// rubyString is Ruby's to_s of a scalar, which GitLab applies to
// variable values and the like: 1.10 is "1.1", true is "true", nil "".
func rubyString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return rubyFloat(v)
	}
	return rubyInspect(v)
}

// rubyFloat formats like Ruby's Float#to_s: the shortest digits, in
// fixed notation when the decimal exponent is in -4..16, always with a
// fractional part ("1.0", "1.0e+16").
func rubyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	sign := ""
	if f < 0 || (f == 0 && math.Signbit(f)) {
		sign, f = "-", -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	decpt := x + 1
	switch {
	case decpt > 0 && decpt <= 16:
		if len(digits) <= decpt {
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		}
		return sign + digits[:decpt] + "." + digits[decpt:]
	case decpt <= 0 && decpt > -4:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	es := "+"
	if decpt-1 < 0 {
		es = "-"
	}
	return sign + digits[:1] + "." + frac + "e" + es + pad2(abs(decpt-1))
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// rubyInspect is Ruby's inspect, for the messages that quote a value
// (`!reference ["a", "b"] could not be found`).
func rubyInspect(v any) string {
	switch v := v.(type) {
	case nil:
		return "nil"
	case string:
		return rubyQuote(v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = rubyInspect(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *mapping:
		parts := make([]string, len(v.keys))
		for i, k := range v.keys {
			parts[i] = rubyQuote(k) + "=>" + rubyInspect(v.vals[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *reference:
		return rubyInspect(v.content)
	}
	return rubyString(v)
}

func rubyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	rs := []rune(s)
	for i, r := range rs {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\x1b':
			b.WriteString(`\e`)
		case '#': // Ruby escapes the starts of interpolation only
			if i+1 < len(rs) && (rs[i+1] == '{' || rs[i+1] == '$' || rs[i+1] == '@') {
				b.WriteByte('\\')
			}
			b.WriteByte('#')
		default:
			if r < 0x20 || r == 0x7f {
				b.WriteString(`\x` + strings.ToUpper(strconv.FormatInt(int64(r), 16)))
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// toJSON is ActiveSupport's to_json of a value, keys in order.
func toJSON(v any) string {
	switch v := v.(type) {
	case *mapping:
		parts := make([]string, len(v.keys))
		for i, k := range v.keys {
			parts[i] = toJSON(k) + ":" + toJSON(v.vals[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = toJSON(x)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case nil:
		return "null"
	case float64:
		return rubyFloat(v)
	case *reference:
		return toJSON(v.content)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// plain turns a value into plain Go values (map[string]any, []any,
// scalars) for Job.Kept and reports kept as written.
func plain(v any) any {
	switch v := v.(type) {
	case *mapping:
		out := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			out[k] = plain(v.vals[k])
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = plain(x)
		}
		return out
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return rubyFloat(v) // JSON has no such numbers
		}
	}
	return v
}
