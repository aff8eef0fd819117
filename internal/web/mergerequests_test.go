package web

import (
	"net/http"
	"strconv"
	"testing"

	"quarry/internal/model"
)

func TestParseIID(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"42", 42, true},
		{"999999999999999999", 999999999999999999, true},
		{"", 0, false},
		{"0", 0, false},
		{"01", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1.5", 0, false},
		{"x", 0, false},
		{"1e3", 0, false},
		{"9999999999999999999", 0, false},
	} {
		got, ok := parseIID(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseIID(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseIID(f *testing.F) {
	for _, s := range []string{"1", "0", "-3", "12x", "999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseIID(s)
		if !ok {
			return
		}
		if n <= 0 || strconv.FormatInt(n, 10) != s {
			t.Fatalf("parseIID(%q) = %d: not the canonical positive number", s, n)
		}
	})
}

func TestActionRefusal(t *testing.T) {
	for _, c := range []struct {
		action string
		err    *model.Error
		status int
		msg    string
	}{
		{"merge", &model.Error{Kind: model.KindUnauthorized}, http.StatusUnauthorized, "You are not allowed to merge this merge request."},
		{"close", model.Forbidden(""), http.StatusForbidden, "You are not allowed to close this merge request."},
		{"rebase", model.Forbidden("Cannot push to source branch"), http.StatusForbidden, "Cannot push to source branch"},
		{"merge", &model.Error{Kind: model.KindMethodNotAllowed, Message: "405 Method Not Allowed", Raw: true}, http.StatusMethodNotAllowed,
			"This merge request cannot be merged: it is not open, is a draft, waits for approvals or for its pipeline."},
		{"approve", model.Conflict("SHA does not match HEAD of source branch: abc"), http.StatusConflict, "SHA does not match HEAD of source branch: abc"},
		{"unapprove", model.RecordNotFound(), http.StatusNotFound, "You have not approved this merge request."},
		{"rebase", &model.Error{Kind: model.KindNotAcceptable, Message: "Rebase failed: the branches conflict; resolve them locally", Raw: true},
			http.StatusNotAcceptable, "Rebase failed: the branches conflict; resolve them locally"},
		{"merge", &model.Error{Kind: model.KindReadOnly, Message: "repository is read-only"}, http.StatusForbidden, "repository is read-only"},
	} {
		var me *model.Error
		if !asError(c.err, &me) {
			t.Fatalf("%v is not a model error", c.err)
		}
		if got := actionStatus(me.Kind); got != c.status {
			t.Errorf("%s %v: status %d; want %d", c.action, c.err, got, c.status)
		}
		if got := actionMessage(c.action, me); got != c.msg {
			t.Errorf("%s %v: message %q; want %q", c.action, c.err, got, c.msg)
		}
	}
}
