package ciconfig

import (
	"bytes"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Bounds of one parsed document. GitLab refuses a document nested more
// than max_yaml_depth (100) levels or whose parsed size, aliases counted
// as often as they are used, is too big; both say msgTooBig.
const (
	maxDepth = 100
	maxNodes = 250_000
)

// reference is a !reference tag. path is nil when the tag is not a
// non-empty sequence of strings; content is what the tag holds, for the
// messages that quote it.
type reference struct {
	path    []string
	content any
}

// maxDocuments is GitLab's bound on the documents of a configuration
// file: a spec: header and the content.
const maxDocuments = 2

// parseDocuments reads every document of src (at most maxDocuments)
// into values. A document is walked as yaml.Node values, where an alias
// is a pointer to its anchor, so its size and depth are measured before
// anything is expanded: an alias bomb or a self-enclosing anchor is
// refused after a walk of its few nodes.
func parseDocuments(src []byte) (docs []any, err error) {
	defer func() {
		if recover() != nil { // the parser is third-party code; no input may crash Load
			docs, err = nil, configError(msgNotHash)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return docs, nil
		} else if err != nil {
			return nil, configError("%s", err.Error())
		}
		if len(docs) == maxDocuments {
			return nil, configError("The parsed YAML has too many documents")
		}
		v, err := convertDocument(&doc)
		if err != nil {
			return nil, err
		}
		docs = append(docs, v)
	}
}

// convertDocument measures and converts one parsed document.
func convertDocument(doc *yaml.Node) (any, error) {
	if len(doc.Content) == 0 {
		return nil, nil
	}
	m := measurer{sizes: map[*yaml.Node][2]int{}, open: map[*yaml.Node]bool{}}
	if _, err := m.measure(doc.Content[0], 0); err != nil {
		return nil, err
	}
	c := converter{done: map[*yaml.Node]any{}}
	return c.value(doc.Content[0])
}

// measurer computes the expanded size and the height of nodes, each
// node once.
type measurer struct {
	sizes map[*yaml.Node][2]int // size, height
	open  map[*yaml.Node]bool   // being measured: an alias to one is a cycle
}

func (m *measurer) measure(n *yaml.Node, level int) (int, error) {
	for n.Kind == yaml.AliasNode {
		if n = n.Alias; n == nil {
			return 0, configError(msgNotHash)
		}
	}
	if n.Kind == yaml.ScalarNode {
		return 1, nil
	}
	if level >= maxDepth {
		return 0, configError(msgTooBig)
	}
	if s, ok := m.sizes[n]; ok {
		if level+s[1] > maxDepth {
			return 0, configError(msgTooBig)
		}
		return s[0], nil
	}
	if m.open[n] {
		return 0, configError(msgTooBig) // infinite when expanded
	}
	m.open[n] = true
	size, height := 1, 1
	for _, c := range n.Content {
		s, err := m.measure(c, level+1)
		if err != nil {
			return 0, err
		}
		if size += s; size > maxNodes {
			return 0, configError(msgTooBig)
		}
		if h := m.sizes[deref(c)][1] + 1; h > height {
			height = h
		}
	}
	delete(m.open, n)
	m.sizes[n] = [2]int{size, height}
	return size, nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// converter turns nodes into values, each collection node once, so that
// the uses of an anchor share one value.
type converter struct{ done map[*yaml.Node]any }

func (c *converter) value(n *yaml.Node) (any, error) {
	n = deref(n)
	if v, ok := c.done[n]; ok {
		return v, nil
	}
	var v any
	var err error
	switch {
	case n.Tag == "!reference" && n.Style&yaml.TaggedStyle != 0:
		v, err = c.reference(n)
	case n.Kind == yaml.ScalarNode:
		return scalar(n)
	case n.Kind == yaml.SequenceNode:
		v, err = c.sequence(n)
	case n.Kind == yaml.MappingNode:
		v, err = c.mapping(n)
	}
	if err != nil {
		return nil, err
	}
	c.done[n] = v
	return v, nil
}

func (c *converter) sequence(n *yaml.Node) ([]any, error) {
	out := make([]any, len(n.Content))
	for i, e := range n.Content {
		v, err := c.value(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// mapping builds a mapping as Psych does, merge keys included: "<<"
// merges a mapping (or a list of them, the first one winning) over the
// keys so far, and is an ordinary key when what follows is not one.
func (c *converter) mapping(n *yaml.Node) (*mapping, error) {
	m := newMapping(len(n.Content) / 2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		k, err := c.value(kn)
		if err != nil {
			return nil, err
		}
		v, err := c.value(vn)
		if err != nil {
			return nil, err
		}
		key := rubyString(k)
		if key == "<<" && !(kn.Tag == "!!str" && kn.Style&yaml.TaggedStyle != 0) && merge(m, v) {
			continue
		}
		m.set(key, v)
	}
	return m, nil
}

// merge applies a merge key's value to m and reports whether it could.
func merge(m *mapping, v any) bool {
	switch v := v.(type) {
	case *mapping:
		for _, k := range v.keys {
			m.set(k, v.vals[k])
		}
		return true
	case []any:
		for _, e := range v {
			if _, ok := e.(*mapping); !ok {
				return false
			}
		}
		from := newMapping(0)
		for i := len(v) - 1; i >= 0; i-- {
			merge(from, v[i])
		}
		return merge(m, from)
	}
	return false
}

func (c *converter) reference(n *yaml.Node) (*reference, error) {
	var content any
	var err error
	switch n.Kind {
	case yaml.SequenceNode:
		content, err = c.sequence(n)
	case yaml.MappingNode:
		content, err = c.mapping(n)
	default:
		content = n.Value
	}
	if err != nil {
		return nil, err
	}
	r := &reference{content: content}
	if seq, ok := content.([]any); ok && len(seq) > 0 {
		path := make([]string, len(seq))
		for i, e := range seq {
			s, ok := e.(string)
			if !ok {
				return r, nil
			}
			path[i] = s
		}
		r.path = path
	}
	return r, nil
}

// scalar resolves a scalar as Psych (YAML 1.1) does: quoted and block
// scalars and !!str are strings; plain ones may be null, booleans
// (yes/no/on/off too), integers (octal, hex, binary, with _ and ,),
// sexagesimal integers, floats or symbols. Dates and times are refused
// as GitLab's safe_load refuses them.
func scalar(n *yaml.Node) (any, error) {
	tagged := n.Style&yaml.TaggedStyle != 0
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 ||
		(tagged && n.Tag == "!!str") {
		return n.Value, nil
	}
	return tokenize(n.Value)
}

var (
	reStringish = regexp.MustCompile(`^[^\d.:-]?[[:alpha:]_\s!@#$%\^&*(){}<>|/\\~;=]+`)
	reTime      = regexp.MustCompile(`^-?\d{4}-\d{1,2}-\d{1,2}(?:[Tt]|\s+)\d{1,2}:\d\d:\d\d(?:\.\d*)?(?:\s*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?$`)
	reDate      = regexp.MustCompile(`^\d{4}-(?:1[012]|0\d|\d)-(?:[12]\d|3[01]|0\d|\d)$`)
	reSexagInt  = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}$`)
	reFloat     = regexp.MustCompile(`^[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?$`)
	reInteger   = regexp.MustCompile(`^(?:[-+]?0b[0-1_,]+|[-+]?0[0-7_,]+|[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)|[-+]?0x[0-9a-fA-F_,]+)$`)
	reBoolTrue  = regexp.MustCompile(`(?i)^(yes|true|on)$`)
	reBoolFalse = regexp.MustCompile(`(?i)^(no|false|off)$`)
	reNull      = regexp.MustCompile(`(?i)^null$`)
)

func tokenize(s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	if reStringish.MatchString(s) || strings.Contains(s, "\n") {
		switch {
		case len(s) > 5 || !strings.ContainsAny(s[:1], "ytonfYTONF~"):
			return s, nil
		case s == "~" || reNull.MatchString(s):
			return nil, nil
		case reBoolTrue.MatchString(s):
			return true, nil
		case reBoolFalse.MatchString(s):
			return false, nil
		}
		return s, nil
	}
	switch {
	case reTime.MatchString(s):
		if validTime(s) {
			return nil, configError("Tried to load unspecified class: Time")
		}
		return s, nil
	case reDate.MatchString(s):
		if _, err := time.Parse("2006-1-2", s); err == nil {
			return nil, configError("Tried to load unspecified class: Date")
		}
		return s, nil
	case strings.EqualFold(strings.TrimPrefix(s, "+"), ".inf"):
		return math.Inf(1), nil
	case strings.EqualFold(s, "-.inf"):
		return math.Inf(-1), nil
	case strings.EqualFold(s, ".nan"):
		return math.NaN(), nil
	case len(s) > 1 && s[0] == ':':
		sym := s[1:]
		if len(sym) >= 2 && (sym[0] == '"' || sym[0] == '\'') && strings.LastIndexByte(sym, sym[0]) > 0 {
			sym = sym[1:strings.LastIndexByte(sym, sym[0])]
		}
		return sym, nil
	case reSexagInt.MatchString(s):
		return sexagesimal(s), nil
	case reFloat.MatchString(s):
		if s == "." || s == "-." || s == "+." {
			return s, nil
		}
		f, err := strconv.ParseFloat(strings.NewReplacer(",", "", "_", "").Replace(strings.Replace(s, ".e", "e", 1)), 64)
		if err != nil {
			f, _ = strconv.ParseFloat(strings.TrimSuffix(strings.NewReplacer(",", "", "_", "").Replace(s), "."), 64)
		}
		return f, nil
	case reInteger.MatchString(s):
		return integer(s), nil
	}
	return s, nil
}

// integer is Ruby's Integer() of a YAML 1.1 integer; one beyond int64
// stays the string written.
func integer(s string) any {
	t := strings.NewReplacer(",", "", "_", "").Replace(s)
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimLeft(t, "+-")
	base := 10
	switch {
	case strings.HasPrefix(t, "0x"):
		base, t = 16, t[2:]
	case strings.HasPrefix(t, "0b"):
		base, t = 2, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	u, err := strconv.ParseInt(t, base, 64)
	if err != nil {
		return s
	}
	if neg {
		u = -u
	}
	return u
}

// sexagesimal is a YAML 1.1 base-60 integer: 1:30 is 90.
func sexagesimal(s string) any {
	neg := strings.HasPrefix(s, "-")
	var total int64
	for _, part := range strings.Split(strings.TrimLeft(s, "+-"), ":") {
		n, err := strconv.ParseInt(strings.ReplaceAll(part, "_", ""), 10, 64)
		if err != nil || total > math.MaxInt64/60 {
			return s
		}
		total = total*60 + n
	}
	if neg {
		total = -total
	}
	return total
}

// validTime reports whether a timestamp names a real time (Psych keeps
// "2024-13-45 10:00:00" a string).
func validTime(s string) bool {
	date, rest, _ := strings.Cut(strings.TrimPrefix(s, "-"), " ")
	if i := strings.IndexAny(date, "Tt"); i >= 0 {
		date, rest = date[:i], date[i+1:]
	}
	if _, err := time.Parse("2006-1-2", date); err != nil {
		return false
	}
	clock := strings.TrimSpace(rest)
	if len(clock) < 7 {
		return false
	}
	h, err1 := strconv.Atoi(clock[:strings.IndexByte(clock, ':')])
	return err1 == nil && h < 24
}
