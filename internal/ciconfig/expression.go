package ciconfig

import (
	"regexp"
	"strings"
)

// Expression is a rules:if or only:variables expression: variables
// ($VAR, ${VAR}), 'strings' and "strings", /regular expressions/ with
// i, s, m or U flags, null, the operators == != =~ !~ (binding tighter
// than &&, which binds tighter than ||) and parentheses.
//
// It is read as GitLab reads it (a lexer of at most 99 tokens and a
// shunting-yard parser, which accepts what GitLab accepts) and
// evaluated with GitLab's (Ruby's) values: && and || return one of their
// operands, a missing variable is null, and the result is true when it
// is present (not null, false, or blank). Regular expressions are RE2,
// so no input can make matching slow.
type Expression struct{ root exprNode }

// maxExprTokens: GitLab's lexer reads at most MAX_TOKENS - 1 (99).
const maxExprTokens = 99

// ParseExpression reads an expression; a syntax error is an *Error.
func ParseExpression(s string) (*Expression, error) {
	toks, err := lexExpression(s)
	if err != nil {
		return nil, err
	}
	root, err := parseExpression(toks)
	if err != nil {
		return nil, err
	}
	return &Expression{root: root}, nil
}

// Evaluate reports whether the expression holds for the variables.
func (e *Expression) Evaluate(vars map[string]string) bool {
	return e.root.eval(vars).present()
}

type tokenKind int

const (
	tokValue tokenKind = iota
	tokOperator
	tokOpen
	tokClose
)

type token struct {
	kind tokenKind
	text string   // operator, or the variable's name
	node exprNode // for values
}

var (
	reExprSpace    = regexp.MustCompile(`^\s+`)
	reExprVariable = regexp.MustCompile(`^\$(?:(\w+)|\{(\w+)\})`)
	reExprString   = regexp.MustCompile(`^(?:"([^\n]*?)"|'([^\n]*?)')`)
	reExprPattern  = regexp.MustCompile(`^/(?:[^/]|\\/)+[^\\]/[ismU]*`)
	exprOperators  = []string{"==", "=~", "!=", "!~", "&&", "||"}
)

func exprSyntaxError(msg string) *Error {
	return configError("%s", msg)
}

func lexExpression(s string) ([]token, error) {
	var toks []token
	for range maxExprTokens + 1 {
		s = s[len(reExprSpace.FindString(s)):]
		if s == "" {
			if len(toks) == 0 {
				return nil, exprSyntaxError("Empty expression")
			}
			return toks, nil
		}
		var t token
		var n int
		switch m := reExprVariable.FindStringSubmatch(s); {
		case s[0] == '(':
			t, n = token{kind: tokOpen}, 1
		case s[0] == ')':
			t, n = token{kind: tokClose}, 1
		case m != nil:
			t, n = token{kind: tokValue, node: varNode(m[1] + m[2])}, len(m[0])
		default:
			if m := reExprString.FindStringSubmatch(s); m != nil {
				t, n = token{kind: tokValue, node: stringNode(m[1] + m[2])}, len(m[0])
			} else if p := reExprPattern.FindString(s); p != "" {
				re, err := rubyRegexp(strings.ReplaceAll(p, `\/`, "/"))
				if err != nil {
					return nil, exprSyntaxError("Invalid regular expression!")
				}
				t, n = token{kind: tokValue, node: patternNode{re}}, len(p)
			} else if strings.HasPrefix(s, "null") {
				t, n = token{kind: tokValue, node: nullNode{}}, 4
			} else {
				for _, op := range exprOperators {
					if strings.HasPrefix(s, op) {
						t, n = token{kind: tokOperator, text: op}, 2
						break
					}
				}
			}
		}
		if n == 0 {
			return nil, exprSyntaxError("Unknown lexeme found!")
		}
		if len(toks) == maxExprTokens {
			break
		}
		toks = append(toks, t)
		s = s[n:]
	}
	return nil, exprSyntaxError("Too many tokens!")
}

// precedence of operators: lower binds tighter; a parenthesis is above
// every operator, so that none consumes it.
func precedence(t token) int {
	switch t.kind {
	case tokOpen:
		return 901
	case tokClose:
		return 900
	}
	switch t.text {
	case "&&":
		return 11
	case "||":
		return 12
	}
	return 10
}

func parseExpression(toks []token) (exprNode, error) {
	var output, ops []token
	consumes := func(t token) bool { return len(ops) > 0 && precedence(t) >= precedence(ops[len(ops)-1]) }
	for _, t := range toks {
		switch t.kind {
		case tokValue:
			output = append(output, t)
		case tokOperator, tokClose:
			for consumes(t) {
				output, ops = append(output, ops[len(ops)-1]), ops[:len(ops)-1]
			}
			if t.kind == tokOperator {
				ops = append(ops, t)
				continue
			}
			if len(ops) == 0 {
				return nil, exprSyntaxError("Unmatched parenthesis")
			}
			ops = ops[:len(ops)-1] // the opening parenthesis
		case tokOpen:
			ops = append(ops, t)
		}
	}
	for i := len(ops) - 1; i >= 0; i-- {
		output = append(output, ops[i])
	}
	var stack []exprNode
	for _, t := range output {
		switch t.kind {
		case tokValue:
			stack = append(stack, t.node)
		case tokOperator:
			if len(stack) < 2 {
				return nil, exprSyntaxError("Invalid operand")
			}
			left, right := stack[len(stack)-2], stack[len(stack)-1]
			stack = append(stack[:len(stack)-2], opNode{t.text, left, right})
		default:
			return nil, exprSyntaxError("Unprocessable token found in parse tree")
		}
	}
	switch {
	case len(stack) > 1:
		return nil, exprSyntaxError("Unreachable nodes in parse tree")
	case len(stack) == 0:
		return nil, exprSyntaxError("Empty parse tree")
	}
	return stack[0], nil
}

// rubyValue is what a node evaluates to: null, a boolean, a string or a
// regular expression.
type rubyValue struct {
	kind byte // 'n', 'b', 's', 'r'
	b    bool
	s    string
	re   *regexp.Regexp
}

var null = rubyValue{kind: 'n'}

// truthy is Ruby's truth: all but nil and false.
func (v rubyValue) truthy() bool { return v.kind != 'n' && (v.kind != 'b' || v.b) }

// present is Ruby's present?: truthy and, for a string, not blank.
func (v rubyValue) present() bool {
	return v.truthy() && (v.kind != 's' || strings.TrimSpace(v.s) != "")
}

func (v rubyValue) text() string {
	switch v.kind {
	case 'b':
		if v.b {
			return "true"
		}
		return "false"
	case 's':
		return v.s
	case 'r':
		return v.re.String()
	}
	return ""
}

func (v rubyValue) equal(w rubyValue) bool {
	if v.kind != w.kind {
		return false
	}
	switch v.kind {
	case 'b':
		return v.b == w.b
	case 's':
		return v.s == w.s
	case 'r':
		return v.re.String() == w.re.String()
	}
	return true
}

// matches is =~: a regular expression matches the text; a string that
// is not one (a variable's value) contains it, as Ruby's String#scan.
func (v rubyValue) matches(text rubyValue) bool {
	switch v.kind {
	case 'r':
		return v.re.MatchString(text.text())
	case 's':
		if re, err := rubyRegexp(strings.ReplaceAll(v.s, `\/`, "/")); err == nil {
			return re.MatchString(text.text())
		}
		return strings.Contains(v.s, text.text())
	}
	return false
}

var reRubySyntax = regexp.MustCompile(`(?m)^/(.*)/([ismU]*)$`)

// rubyRegexp compiles GitLab's /pattern/flags syntax as RE2.
func rubyRegexp(s string) (*regexp.Regexp, error) {
	m := reRubySyntax.FindStringSubmatch(s)
	if m == nil {
		return nil, exprSyntaxError("Invalid regular expression!")
	}
	if m[2] != "" {
		m[1] = "(?" + m[2] + ")" + m[1]
	}
	return regexp.Compile(m[1])
}

type exprNode interface {
	eval(vars map[string]string) rubyValue
}

type (
	varNode     string
	stringNode  string
	nullNode    struct{}
	patternNode struct{ re *regexp.Regexp }
	opNode      struct {
		op          string
		left, right exprNode
	}
)

func (n varNode) eval(vars map[string]string) rubyValue {
	if v, ok := vars[string(n)]; ok {
		return rubyValue{kind: 's', s: v}
	}
	return null
}

func (n stringNode) eval(map[string]string) rubyValue  { return rubyValue{kind: 's', s: string(n)} }
func (nullNode) eval(map[string]string) rubyValue      { return null }
func (n patternNode) eval(map[string]string) rubyValue { return rubyValue{kind: 'r', re: n.re} }

func (n opNode) eval(vars map[string]string) rubyValue {
	left := n.left.eval(vars)
	switch n.op {
	case "&&":
		if !left.truthy() {
			return left
		}
		return n.right.eval(vars)
	case "||":
		if left.truthy() {
			return left
		}
		return n.right.eval(vars)
	}
	right := n.right.eval(vars)
	var b bool
	switch n.op {
	case "==":
		b = left.equal(right)
	case "!=":
		b = !left.equal(right)
	case "=~":
		b = right.truthy() && right.matches(left)
	case "!~":
		b = !right.truthy() || !right.matches(left)
	}
	return rubyValue{kind: 'b', b: b}
}
