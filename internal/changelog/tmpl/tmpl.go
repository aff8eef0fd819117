// Package tmpl is the changelog template language.
//
//	{{ selector }}                    prints a value (nothing for a missing one)
//	{% if selector %}…{% else %}…{% end %}
//	{% each selector %}…{% end %}     the element becomes the scope; `it` is it
//
// A selector is steps joined by dots: names look up map keys, integers
// index arrays; a missing step makes the whole value missing. A value is
// true when it is a non-empty string, array or map, or anything else but
// nil and false. A statement tag swallows one newline right after it; a
// backslash at the end of a line joins the next line; a lone "{" is text.
// Loops nest at most four deep.
package tmpl

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxLoops is how deep each statements may nest.
const MaxLoops = 4

// Error is a template that cannot be parsed; Line is 1-based.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Template is a parsed template.
type Template struct{ nodes []node }

type node interface{}

type textNode struct{ text string }

type printNode struct{ sel selector }

type ifNode struct {
	sel       selector
	then, els []node
}

type eachNode struct {
	sel  selector
	body []node
}

// selector is a path of steps; a step is a name or an index.
type selector []step

type step struct {
	name  string
	index int
	isIdx bool
}

// Parse reads a template.
func Parse(src string) (*Template, error) {
	p := &parser{src: src, line: 1}
	nodes, term, err := p.parseBlock(0)
	if err != nil {
		return nil, err
	}
	if term != "" {
		return nil, &Error{p.line, fmt.Sprintf("unexpected {%% %s %%} outside a block", term)}
	}
	return &Template{nodes: nodes}, nil
}

type parser struct {
	src  string
	pos  int
	line int
}

// parseBlock reads nodes until the end of input or a terminating
// statement (else, end), which it returns.
func (p *parser) parseBlock(loops int) ([]node, string, error) {
	var nodes []node
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			nodes = append(nodes, textNode{text.String()})
			text.Reset()
		}
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\\' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n':
			p.pos += 2
			p.line++
		case c == '{' && strings.HasPrefix(p.src[p.pos:], "{{"):
			flush()
			start := p.line
			inner, err := p.tagBody("{{", "}}")
			if err != nil {
				return nil, "", err
			}
			sel, err := parseSelector(strings.TrimSpace(inner))
			if err != nil {
				return nil, "", &Error{start, err.Error()}
			}
			nodes = append(nodes, printNode{sel})
		case c == '{' && strings.HasPrefix(p.src[p.pos:], "{%"):
			flush()
			start := p.line
			inner, err := p.tagBody("{%", "%}")
			if err != nil {
				return nil, "", err
			}
			// A statement swallows the newline right after it.
			if p.pos < len(p.src) && p.src[p.pos] == '\n' {
				p.pos++
				p.line++
			}
			stmt := strings.TrimSpace(inner)
			word, arg := stmt, ""
			if i := strings.IndexAny(stmt, " \t"); i >= 0 {
				word, arg = stmt[:i], strings.TrimSpace(stmt[i:])
			}
			switch word {
			case "end", "else":
				if arg != "" {
					return nil, "", &Error{start, fmt.Sprintf("unexpected %q after %s", arg, word)}
				}
				return nodes, word, nil
			case "if":
				sel, err := p.argument(start, word, arg)
				if err != nil {
					return nil, "", err
				}
				n := ifNode{sel: sel}
				body, term, err := p.parseBlock(loops)
				if err != nil {
					return nil, "", err
				}
				n.then = body
				if term == "else" {
					if n.els, term, err = p.parseBlock(loops); err != nil {
						return nil, "", err
					}
				}
				if term != "end" {
					return nil, "", &Error{start, "the if statement is not closed with {% end %}"}
				}
				nodes = append(nodes, n)
			case "each":
				if loops >= MaxLoops {
					return nil, "", &Error{start, fmt.Sprintf("You can only nest up to %d loops", MaxLoops)}
				}
				sel, err := p.argument(start, word, arg)
				if err != nil {
					return nil, "", err
				}
				body, term, err := p.parseBlock(loops + 1)
				if err != nil {
					return nil, "", err
				}
				if term != "end" {
					if term == "else" {
						return nil, "", &Error{start, "each statements take no else"}
					}
					return nil, "", &Error{start, "the each statement is not closed with {% end %}"}
				}
				nodes = append(nodes, eachNode{sel: sel, body: body})
			case "":
				return nil, "", &Error{start, "empty statement"}
			default:
				return nil, "", &Error{start, fmt.Sprintf("unknown statement %q", word)}
			}
		default:
			if c == '\n' {
				p.line++
			}
			text.WriteByte(c)
			p.pos++
		}
	}
	flush()
	return nodes, "", nil
}

// tagBody consumes open…close and returns what is between.
func (p *parser) tagBody(open, close string) (string, error) {
	start := p.line
	rest := p.src[p.pos+len(open):]
	end := strings.Index(rest, close)
	if end < 0 {
		return "", &Error{start, fmt.Sprintf("%s is not closed with %s", open, close)}
	}
	inner := rest[:end]
	if strings.Contains(inner, "{{") || strings.Contains(inner, "{%") {
		return "", &Error{start, fmt.Sprintf("%s is not closed with %s", open, close)}
	}
	p.line += strings.Count(inner, "\n")
	p.pos += len(open) + end + len(close)
	return inner, nil
}

func (p *parser) argument(line int, word, arg string) (selector, error) {
	if arg == "" {
		return nil, &Error{line, fmt.Sprintf("%s needs a value to test", word)}
	}
	sel, err := parseSelector(arg)
	if err != nil {
		return nil, &Error{line, err.Error()}
	}
	return sel, nil
}

func parseSelector(s string) (selector, error) {
	if s == "" {
		return nil, fmt.Errorf("empty value")
	}
	var sel selector
	for _, part := range strings.Split(s, ".") {
		switch {
		case part == "":
			return nil, fmt.Errorf("invalid value %q", s)
		case isDigits(part):
			n, err := strconv.Atoi(part)
			if err != nil || len(part) > 10 { // past int (or 10 digits): invalid, never index 0
				return nil, fmt.Errorf("invalid index %q", part)
			}
			sel = append(sel, step{index: n, isIdx: true})
		case isName(part):
			sel = append(sel, step{name: part})
		default:
			return nil, fmt.Errorf("invalid value %q", s)
		}
	}
	return sel, nil
}

func isDigits(s string) bool { return strings.Trim(s, "0123456789") == "" }

func isName(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// Execute renders the template with data: maps (map[string]any), arrays
// ([]any), strings, booleans, numbers and nil.
func (t *Template) Execute(data any) string {
	var b strings.Builder
	render(&b, t.nodes, data)
	return b.String()
}

func render(b *strings.Builder, nodes []node, scope any) {
	for _, n := range nodes {
		switch n := n.(type) {
		case textNode:
			b.WriteString(n.text)
		case printNode:
			b.WriteString(toString(n.sel.eval(scope)))
		case ifNode:
			if Truthy(n.sel.eval(scope)) {
				render(b, n.then, scope)
			} else {
				render(b, n.els, scope)
			}
		case eachNode:
			for _, el := range elements(n.sel.eval(scope)) {
				render(b, n.body, el)
			}
		}
	}
}

func (sel selector) eval(scope any) any {
	v := scope
	for i, s := range sel {
		if !s.isIdx && s.name == "it" && i == 0 {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if s.isIdx {
				return nil
			}
			v = x[s.name]
		case []any:
			if !s.isIdx || s.index >= len(x) {
				return nil
			}
			v = x[s.index]
		default:
			return nil
		}
		if v == nil {
			return nil
		}
	}
	return v
}

// Truthy says whether a value counts as true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// elements are what each iterates: an array's items, a map's [key, value]
// pairs by key; nothing for anything else.
func elements(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = []any{k, x[k]}
		}
		return out
	}
	return nil
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
