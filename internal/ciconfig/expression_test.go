package ciconfig

import (
	"strings"
	"testing"
)

func TestExpression_evaluate(t *testing.T) {
	vars := map[string]string{
		"BRANCH":  "main",
		"EMPTY":   "",
		"SPACES":  "  ",
		"TAG":     "v1.2.3",
		"PATTERN": "/^v\\d+/",
		"PLAIN":   "feature/login",
		"SLASHED": `/^feature\/.*$/`,
		"UPPER":   "MAIN",
	}
	for _, c := range []struct {
		expr string
		want bool
	}{
		{"$BRANCH", true},
		{"${BRANCH}", true},
		{"$MISSING", false},
		{"$EMPTY", false},
		{"$SPACES", false}, // blank: Ruby's present? is false
		{`$BRANCH == "main"`, true},
		{`$BRANCH == 'main'`, true},
		{`"main" == $BRANCH`, true},
		{`$BRANCH != "main"`, false},
		{`$BRANCH == "dev"`, false},
		{`$MISSING == null`, true},
		{`$EMPTY == null`, false},
		{`$EMPTY == ""`, true},
		{`$MISSING != null`, false},
		{`null == null`, true},
		{`$BRANCH == $UPPER`, false},
		{`$TAG =~ /^v\d+\.\d+/`, true},
		{`$TAG !~ /^v\d+\.\d+/`, false},
		{`$UPPER =~ /main/`, false},
		{`$UPPER =~ /main/i`, true},
		{`$TAG =~ /xy/`, false},
		{`$MISSING =~ /^$/`, true},
		{`$TAG =~ $PATTERN`, true},
		{`$PLAIN =~ $SLASHED`, true},
		{`$PLAIN =~ /^feature\/.*$/`, true},
		{`"login" =~ $PLAIN`, true}, // not a regexp: contained in it
		{`"logout" =~ $PLAIN`, false},
		{`$TAG =~ $MISSING`, false},
		{`$TAG !~ $MISSING`, true},
		{`$BRANCH && $TAG`, true},
		{`$BRANCH && $MISSING`, false},
		{`$MISSING || $TAG`, true},
		{`$EMPTY || $TAG`, false}, // "" is truthy in Ruby, so || returns it, and it is blank
		{`$EMPTY && $TAG`, true},
		{`$MISSING && $TAG || $BRANCH`, true},
		{`$BRANCH || $MISSING && $EMPTY`, true}, // && binds tighter
		{`($BRANCH || $MISSING) && $EMPTY`, false},
		{`$BRANCH == "main" && ($TAG =~ /^v1/ || $MISSING)`, true},
		{`(($BRANCH == "main"))`, true},
		{`/regex/`, true},
		{`"text"`, true},
		{`null`, false},
		{`== $BRANCH "main"`, true}, // GitLab's shunting-yard accepts prefix operators
	} {
		e, err := ParseExpression(c.expr)
		if err != nil {
			t.Errorf("ParseExpression(%q): %v", c.expr, err)
			continue
		}
		if got := e.Evaluate(vars); got != c.want {
			t.Errorf("Evaluate(%q) = %v; want %v", c.expr, got, c.want)
		}
	}
}

func TestExpression_syntax(t *testing.T) {
	for _, c := range []struct{ expr, err string }{
		{"", "Empty expression"},
		{"   ", "Empty expression"},
		{"$A ==", "Invalid operand"},
		{"== $A", "Invalid operand"},
		{"$A $B", "Unreachable nodes in parse tree"},
		{"($A", "Unprocessable token found in parse tree"},
		{"$A)", "Unmatched parenthesis"},
		{"()", "Empty parse tree"},
		{"$A = $B", "Unknown lexeme found!"},
		{"$A == main", "Unknown lexeme found!"},
		{"$A === $B", "Unknown lexeme found!"},
		{`$A =~ /((/`, "Invalid regular expression!"},
		{`$A =~ /a/x`, "Unknown lexeme found!"},
		{`$A =~ /a/`, "Unknown lexeme found!"}, // GitLab's lexer wants two characters between slashes
		{`"unterminated`, "Unknown lexeme found!"},
		{strings.Repeat("$A && ", 49) + "($A)", "Too many tokens!"},
	} {
		_, err := ParseExpression(c.expr)
		ce, ok := err.(*Error)
		if !ok || ce.Message != c.err || ce.Reason != ReasonConfig {
			t.Errorf("ParseExpression(%q) = %v; want %q", c.expr, err, c.err)
		}
	}
	if _, err := ParseExpression(strings.Repeat("$A && ", 48) + "$A"); err != nil {
		t.Errorf("99 tokens: %v", err)
	}
}
