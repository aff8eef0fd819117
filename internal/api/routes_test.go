package api

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/auth"
	"quarry/internal/model"
)

// table is the route table of a server without services: enough to read
// the rows, which hold method values and are never called here.
func table() []endpoint.Route {
	s := &Server{render: entity.New("http://quarry.test", nil)}
	return s.Table()
}

func TestTable_everyRowDeclared(t *testing.T) {
	rows := table()
	seen := map[string]bool{}
	for _, rt := range rows {
		if err := rt.Check(); err != nil {
			t.Error(err)
		}
		if !rt.Auth.Valid() || !rt.Body.Valid() {
			t.Errorf("%s: auth %s, body %s", rt.Pattern(), rt.Auth, rt.Body)
		}
		if seen[rt.Pattern()] {
			t.Errorf("%s: two rows", rt.Pattern())
		}
		seen[rt.Pattern()] = true
	}
}

var update = flag.Bool("update", false, "rewrite testdata/routes.txt from the table")

// TestTable_golden keeps the API's surface in testdata/routes.txt: a row
// added, lost or changed in auth or body mode shows in review. Run with
// -update after a deliberate change.
func TestTable_golden(t *testing.T) {
	var b strings.Builder
	for _, rt := range table() {
		kind := rt.Auth.String()
		if rt.JobTokens {
			kind += "+job"
		}
		fmt.Fprintf(&b, "%-7s %-72s %-8s %s\n", rt.Method, rt.Path, kind, rt.Body)
	}
	const golden = "testdata/routes.txt"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("route table differs from %s (run go test -run TestTable_golden -update ./internal/api/ and review the diff):\n%s", golden, got)
	}
}

func TestTable_noActionWildcards(t *testing.T) {
	for _, rt := range table() {
		for _, seg := range strings.Split(rt.Path, "/") {
			switch seg {
			case "{action}", "{verb}", "{op}", "{operation}", "{path...}":
				t.Errorf("%s hides endpoints behind %s", rt.Pattern(), seg)
			}
		}
	}
	// Check refuses such a row outright.
	bad := endpoint.Row("POST", "/projects/{id}/{action}", endpoint.Token, endpoint.ScopeAPI, endpoint.Parsed, func(*endpoint.Call) error { return nil })
	if bad.Check() == nil {
		t.Error("a {action} wildcard passed Check")
	}
	for _, r := range []endpoint.Route{
		{Method: "GET", Path: "/x", Scopes: endpoint.ScopeAPI, Body: endpoint.Parsed, Handle: bad.Handle},
		{Method: "GET", Path: "/x", Auth: endpoint.Public, Scopes: endpoint.ScopeAPI, Handle: bad.Handle},
		{Method: "GET", Path: "/x", Auth: endpoint.Public, Body: endpoint.Streamed(0), Handle: bad.Handle},
	} {
		if r.Check() == nil {
			t.Errorf("row without auth or body mode passed Check: %+v", r)
		}
	}
}

func TestTable_mounts(t *testing.T) {
	site := &endpoint.Site{Personal: personalStub{}, Jobs: personalStub{}, Runners: personalStub{}, Integrations: personalStub{},
		ContentLimit: func(context.Context, endpoint.Content) (int64, error) { return 1, nil }}
	if _, err := endpoint.NewMux(site, table(), shapes); err != nil {
		t.Fatal(err)
	}
	// Without the declared shape, ServeMux refuses the table: the shape is
	// needed, not decoration.
	if _, err := endpoint.NewMux(site, table(), nil); err == nil {
		t.Error("the table mounted without its shapes; drop the shape or explain the conflict")
	}
}

type personalStub struct{}

func (personalStub) Authenticate(context.Context, string) (auth.Actor, error) {
	return auth.Anonymous, model.Unauthorized("")
}

func (personalStub) Sudo(context.Context, auth.Actor, string) (auth.Actor, error) {
	return auth.Anonymous, model.Unauthorized("")
}
