package endpoint

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseParams_sources(t *testing.T) {
	r := httptest.NewRequest("PUT", "/x?a=query&b=query&list[]=1&list[]=2", strings.NewReader(`{"b":"json","n":3,"t":true,"z":null,"arr":["x","y"],"h":{"k":"v"}}`))
	r.Header.Set("Content-Type", "application/json")
	p, err := parseQuery(r)
	if err == nil {
		err = p.readBody(r, 1<<20)
	}
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.String("a"); v != "query" {
		t.Errorf("a = %q", v)
	}
	if v, _ := p.String("b"); v != "json" {
		t.Errorf("b = %q; the body wins over the query", v)
	}
	if n, ok := p.Int("n"); !ok || n != 3 {
		t.Errorf("n = %d", n)
	}
	if b, ok := p.Bool("t"); !ok || !b {
		t.Errorf("t = %v", b)
	}
	if !p.Has("z") || !p.IsNull("z") {
		t.Error("null not recorded")
	}
	if l, _ := p.Strings("list"); strings.Join(l, ",") != "1,2" {
		t.Errorf("list = %v", l)
	}
	if l, _ := p.Strings("arr"); strings.Join(l, ",") != "x,y" {
		t.Errorf("arr = %v", l)
	}
	if h := p.Hash("h"); h["k"] != "v" {
		t.Errorf("hash = %v", h)
	}
	// Lists and hashes, for parameters of a single value.
	for key, want := range map[string]bool{"list": true, "arr": true, "h": true, "a": false, "b": false, "n": false, "z": false, "absent": false} {
		if got := p.IsList(key); got != want {
			t.Errorf("IsList(%q) = %v; want %v", key, got, want)
		}
	}
	if err := p.Err(); err != nil {
		t.Error(err)
	}
}

// TestParams_isListFollowsTheLastSource: a body's single value replaces a
// query string's list, and a repeated plain key is no list.
func TestParams_isListFollowsTheLastSource(t *testing.T) {
	r := httptest.NewRequest("POST", "/x?a[]=1&a[]=2&b=1&b=2", strings.NewReader("a=3"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	p, err := parseQuery(r)
	if err == nil {
		err = p.readBody(r, 1<<20)
	}
	if err != nil {
		t.Fatal(err)
	}
	if p.IsList("a") || p.IsList("b") {
		t.Errorf("IsList(a) = %v, IsList(b) = %v; want false, false", p.IsList("a"), p.IsList("b"))
	}
}

func TestParams_validation(t *testing.T) {
	r := httptest.NewRequest("POST", "/x?n=x&b=maybe&e=red", strings.NewReader("a=1"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	p, err := parseQuery(r)
	if err == nil {
		err = p.readBody(r, 1<<20)
	}
	if err != nil {
		t.Fatal(err)
	}
	p.Require("email", "name")
	p.Int("n")
	p.Bool("b")
	p.Enum("e", "blue")
	p.AtLeastOneOf("x", "y")
	p.AllOrNoneOf("a", "q")
	want := "email is missing, name is missing, n is invalid, b is invalid, e does not have a valid value, x, y are missing, at least one parameter must be provided, a, q provide all or none of parameters"
	if err := p.Err(); err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"true": true, "1": true, "YES": true, "on": true, "t": true, "false": false, "0": false, "Off": false, "n": false} {
		if got, ok := ParseBool(in); !ok || got != want {
			t.Errorf("ParseBool(%q) = %v, %v", in, got, ok)
		}
	}
	if _, ok := ParseBool("maybe"); ok {
		t.Error("maybe accepted")
	}
}

func TestParseTime(t *testing.T) {
	for _, in := range []string{"2026-01-02", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123+02:00", "2026-01-02T03:04:05"} {
		if _, err := ParseTime(in); err != nil {
			t.Errorf("ParseTime(%q): %v", in, err)
		}
	}
	if _, err := ParseTime("yesterday"); err == nil {
		t.Error("yesterday accepted")
	}
}

func FuzzParseParams(f *testing.F) {
	f.Add("application/json", `{"a":[1,{"b":null}],"c":{"d":{"e":true}}}`, "x=1&y[]=2")
	f.Add("application/x-www-form-urlencoded", "a=%zz&b=2", "")
	f.Add("multipart/form-data; boundary=X", "--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--X--\r\n", "")
	f.Fuzz(func(t *testing.T, ct, body, query string) {
		r := httptest.NewRequest("POST", "/x", strings.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", ct)
		p, err := parseQuery(r)
		if err == nil {
			err = p.readBody(r, 1<<16)
		}
		if err != nil {
			return
		}
		for _, k := range p.Keys() {
			p.String(k)
			p.Int(k)
			p.Bool(k)
			p.Strings(k)
			p.Time(k)
			p.Hash(k)
		}
		_ = p.Err()
	})
}

func TestParseParams_invalidUTF8(t *testing.T) {
	r := httptest.NewRequest("POST", "/x?ok=1", strings.NewReader("name=%ff%fe&good=yes"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	p, err := parseQuery(r)
	if err == nil {
		err = p.readBody(r, 1<<20)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Err(); err == nil || err.Error() != "name is invalid" {
		t.Errorf("err = %v; want name is invalid", err)
	}
}
