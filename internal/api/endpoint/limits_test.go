package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"quarry/internal/model"
)

func TestCheckJSON(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	array := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]" }
	object := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"k` + itoa(i) + `":0`)
		}
		return b.String() + "}"
	}
	for _, c := range []struct {
		name, body, err string
	}{
		{"empty object", `{}`, ""},
		{"scalars", `{"a":1,"b":"x","c":true,"d":null,"e":-1.5e3}`, ""},
		{"depth at the limit", `{"a":` + nest(MaxJSONDepth-1) + `}`, ""},
		{"depth past the limit", `{"a":` + nest(MaxJSONDepth) + `}`, msgJSONDepth},
		{"deep topics", `{"name":"x","topics":` + nest(200) + `}`, msgJSONDepth},
		{"brackets inside strings", `{"a":"` + strings.Repeat("[{", 100) + `"}`, ""},
		{"escaped quote", `{"a":"\"[[[[","b":1}`, ""},
		{"array at the limit", `{"a":` + array(MaxJSONArray) + `}`, ""},
		{"array past the limit", `{"a":` + array(MaxJSONArray+1) + `}`, msgJSONArray},
		{"array of strings past the limit", `{"a":[` + strings.TrimSuffix(strings.Repeat(`"x",`, MaxJSONArray+1), ",") + `]}`, msgJSONArray},
		// An object's entries are a key and a value each: one as wide as
		// the object limit is past the total already, as in GitLab.
		{"wide object", object(MaxJSONTotal/2 - 1), ""},
		{"object past the limits", object(MaxJSONObject + 1), msgJSONTotal},
		// Two arrays under the per-array limit, past the total: keys and
		// values count alike.
		{"total past the limit", `{"a":` + array(MaxJSONArray) + `,"b":` + array(MaxJSONArray) + `}`, msgJSONTotal},
		{"nested objects in arrays", `{"actions":[{"action":"create","file_path":"a"},{"action":"delete","file_path":"b"}]}`, ""},
		{"malformed is left to the decoder", `{"a":[1,2`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkJSON([]byte(c.body))
			got := ""
			if err != nil {
				var me *model.Error
				if !errors.As(err, &me) || me.Kind != model.KindParam {
					t.Fatalf("error %#v; want a parameter error", err)
				}
				got = me.Message
			}
			if got != c.err {
				t.Errorf("got %q; want %q", got, c.err)
			}
		})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// FuzzCheckJSON: the walk never panics, and well-formed JSON within the
// limits (what encoding/json decodes without trouble at this size) passes.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"]"}]}`, `[[[`, `"\\"`, `{"a":"\"}`, `]]]}}}`, `{"a":[],"b":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := checkJSON(b)
		if len(b) > 1000 || !json.Valid(b) {
			return
		}
		if err != nil && depthOf(b) < MaxJSONDepth {
			t.Fatalf("checkJSON(%q) = %v on valid JSON of depth %d", b, err, depthOf(b))
		}
	})
}

// depthOf is the nesting depth of valid JSON, by decoding it.
func depthOf(b []byte) int {
	var v any
	_ = json.Unmarshal(b, &v)
	var depth func(v any) int
	depth = func(v any) int {
		d := 0
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				d = max(d, depth(e))
			}
			return d + 1
		case map[string]any:
			for _, e := range x {
				d = max(d, depth(e))
			}
			return d + 1
		}
		return 0
	}
	return depth(v)
}

// watchedBody records whether anyone read it.
type watchedBody struct {
	io.Reader
	read bool
}

func (w *watchedBody) Read(p []byte) (int, error) {
	w.read = true
	return w.Reader.Read(p)
}

func (w *watchedBody) Close() error { return nil }

// The caller is known before the body is read: bad or missing header
// credentials are answered without a byte of the body read; a body that
// may carry the credential is read only up to MaxUnknownCallerBody.
func TestSite_authenticatesBeforeReadingBody(t *testing.T) {
	big := `{"name":"` + strings.Repeat("x", 200<<10) + `"}`
	small := `{"name":"x"}`
	for _, c := range []struct {
		name     string
		auth     Auth
		header   map[string]string
		body     string
		length   int64 // Content-Length (-1: unknown)
		status   int
		wantRead bool
	}{
		{"no token, large body", Token, nil, big, int64(len(big)), 401, false},
		{"no token, large body of unknown length", Token, nil, big, -1, 401, true},
		{"bad token, large body", Token, map[string]string{"Private-Token": "nope"}, big, int64(len(big)), 403, false},
		{"bad token, small body", Token, map[string]string{"Private-Token": "nope"}, small, int64(len(small)), 403, false},
		{"good token, small body", Token, map[string]string{"Private-Token": "pat"}, small, int64(len(small)), 200, true},
		{"token in a small body", Token, nil, `{"private_token":"pat"}`, 23, 200, true},
		{"runner token in a large body", RunnerToken, nil, big, int64(len(big)), 413, false},
		{"no auth, large body", NoAuth, nil, big, int64(len(big)), 413, false},
		{"good token, body past the parsed limit", Token, map[string]string{"Private-Token": "pat"}, big, int64(len(big)), 413, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testSite()
			s.MaxParsed = 100 << 10
			body := &watchedBody{Reader: strings.NewReader(c.body)}
			r := httptest.NewRequest("POST", "/x", nil)
			r.Body, r.ContentLength = body, c.length
			r.Header.Set("Content-Type", "application/json")
			for k, v := range c.header {
				r.Header.Set(k, v)
			}
			w := serve(t, s, Row("POST", "/x", c.auth, ScopeAPI, Parsed, whoami), r)
			if w.Code != c.status {
				t.Errorf("status %d %s; want %d", w.Code, w.Body, c.status)
			}
			if body.read != c.wantRead {
				t.Errorf("body read %v; want %v", body.read, c.wantRead)
			}
		})
	}
}

// A row carrying content takes what its content setting allows, and only
// from a known caller.
func TestSite_contentRows(t *testing.T) {
	s := testSite()
	s.MaxParsed = 2 << 10
	s.ContentLimit = func(_ context.Context, kind Content) (int64, error) {
		if kind != ContentWikiPage {
			t.Errorf("content kind %q", kind)
		}
		return 30 << 10, nil
	}
	rt := Row("POST", "/x", Token, ScopeAPI, Carrying(ContentWikiPage), whoami)
	post := func(size int, token string) int {
		r := httptest.NewRequest("POST", "/x", strings.NewReader(`{"content":"`+strings.Repeat("x", size)+`"}`))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("Private-Token", token)
		}
		return serve(t, s, rt, r).Code
	}
	if got := post(20<<10, "pat"); got != http.StatusOK {
		t.Errorf("content within its limit: %d", got)
	}
	if got := post(60<<10, "pat"); got != http.StatusRequestEntityTooLarge {
		t.Errorf("content past its limit: %d", got)
	}
	if got := post(20<<10, ""); got != http.StatusUnauthorized {
		t.Errorf("content from an unknown caller: %d", got)
	}
}

// A list parameter whose elements are arrays or objects is no list of
// strings.
func TestParams_nestedListIsInvalid(t *testing.T) {
	r := httptest.NewRequest("POST", "/x", strings.NewReader(`{"topics":[["a"]],"tags":["a","b"],"actions":[{"action":"create"}]}`))
	r.Header.Set("Content-Type", "application/json")
	p, err := parseQuery(r)
	if err == nil {
		err = p.readBody(r, 1<<20)
	}
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := p.Strings("tags"); !ok || strings.Join(v, ",") != "a,b" {
		t.Errorf("tags %v", v)
	}
	if objs := p.Objects("actions"); len(objs) != 1 {
		t.Errorf("actions %v", objs)
	}
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	p.Strings("topics")
	if err := p.Err(); err == nil || err.Error() != "topics is invalid" {
		t.Errorf("nested topics: %v", err)
	}
}
