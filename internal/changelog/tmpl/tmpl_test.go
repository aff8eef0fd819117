package tmpl

import (
	"errors"
	"strings"
	"testing"
)

func TestExecute(t *testing.T) {
	data := map[string]any{
		"name":   "Ada",
		"empty":  "",
		"yes":    true,
		"no":     false,
		"n":      3,
		"list":   []any{"a", "b", "c"},
		"none":   []any{},
		"people": []any{map[string]any{"name": "x", "tags": []any{"t1", "t2"}}, map[string]any{"name": "y"}},
		"nested": map[string]any{"inner": map[string]any{"deep": "value"}},
		"matrix": []any{[]any{"00", "01"}, []any{"10", "11"}},
	}
	cases := []struct{ name, src, want string }{
		{"text", "plain text", "plain text"},
		{"print", "hi {{ name }}!", "hi Ada!"},
		{"print without spaces", "{{name}}", "Ada"},
		{"missing value", "[{{ nope }}][{{ nested.nope.deeper }}]", "[][]"},
		{"dots", "{{ nested.inner.deep }}", "value"},
		{"index", "{{ list.1 }} {{ matrix.1.0 }} {{ list.9 }}", "b 10 "},
		{"number and bool", "{{ n }} {{ yes }} {{ no }}", "3 true false"},
		{"if", "{% if yes %}y{% end %}{% if no %}n{% end %}", "y"},
		{"if else", "{% if empty %}full{% else %}empty{% end %}", "empty"},
		{"truthy", "{% if list %}L{% end %}{% if none %}N{% end %}{% if n %}3{% end %}{% if nope %}?{% end %}", "L3"},
		{"each", "{% each list %}<{{ it }}>{% end %}", "<a><b><c>"},
		{"each scope", "{% each people %}{{ name }}:{{ tags.1 }}:{{ list }};{% end %}", "x:t2:;y::;"},
		{"nested each", "{% each people %}{% each tags %}{{ it }} {% end %}{% end %}", "t1 t2 "},
		{"each of nothing", "{% each nope %}x{% end %}{% each name %}x{% end %}", ""},
		{"each over map pairs", "{% each nested %}{{ 0 }}={{ 1.deep }}{% end %}", "inner=value"},
		{"tags swallow one newline", "{% if yes %}\nA\n{% end %}\n\nB", "A\n\nB"},
		{"print keeps newline", "{{ name }}\nB", "Ada\nB"},
		{"backslash joins lines", "a\\\nb\\c", "ab\\c"},
		{"lone braces", "{ name } {x}", "{ name } {x}"},
		{"whitespace in tags", "{%   if\tyes   %}ok{%end%}", "ok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Parse(c.src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := tpl.Execute(data); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		src  string
		line int
		msg  string
	}{
		{"{% if x %}never closed", 1, "not closed"},
		{"a\nb\n{% each x %}\n{% else %}{% end %}", 3, "no else"},
		{"{% end %}", 1, "outside a block"},
		{"x\n{% bogus y %}", 2, "unknown statement"},
		{"x\n\n{{ a..b }}", 3, "invalid value"},
		{"{{ a b }}", 1, "invalid value"},
		{"{% if %}x{% end %}", 1, "needs a value"},
		{"{{ open", 1, "not closed"},
		{"{% each a %}{% each b %}{% each c %}{% each d %}{% each e %}{% end %}{% end %}{% end %}{% end %}{% end %}", 1, "You can only nest up to 4 loops"},
		{"{{ 12345678901 }}", 1, "invalid index"},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var te *Error
		if !errors.As(err, &te) {
			t.Errorf("%q: error %v", c.src, err)
			continue
		}
		if te.Line != c.line || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("%q: line %d %q, want line %d containing %q", c.src, te.Line, te.Msg, c.line, c.msg)
		}
	}
}

// FuzzParse: any input parses or fails with an *Error, never panics or
// hangs, and a parsed template renders.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"{% if a %}{{ b.0 }}{% else %}c{% end %}", "{% each x %}{{ it }}\\\n{% end %}", "{", "{{", "{%", "%}", "{% end %}", "a\\"} {
		f.Add(s)
	}
	data := map[string]any{"a": true, "x": []any{"1", map[string]any{"b": []any{"z"}}}}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) || te.Line < 1 {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		tpl.Execute(data)
	})
}
