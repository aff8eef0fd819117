package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"quarry/internal/api"
	"quarry/internal/api/endpoint"
	"quarry/internal/apitest"
)

// sample fills a row's wildcards with values that route (what they name
// need not exist: routing answers before any lookup).
func sample(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case s == "{file_path}":
			segs[i] = "README.md"
		case s == "{$}":
			segs[i] = "" // the path ends with its slash
		case strings.HasPrefix(s, "{"):
			segs[i] = "1"
		}
	}
	return strings.Join(segs, "/")
}

// rowsMatching lists the rows whose path template matches a concrete path.
func rowsMatching(rows []endpoint.Route, path string) []endpoint.Route {
	segs := strings.Split(path, "/")
	var out []endpoint.Route
	for _, rt := range rows {
		tmpl := strings.Split(rt.Path, "/")
		if last := tmpl[len(tmpl)-1]; strings.HasSuffix(last, "...}") && len(segs) >= len(tmpl) {
			// A rest wildcard takes every segment from its place on.
			segs := append(segs[:len(tmpl)-1:len(tmpl)-1], strings.Join(segs[len(tmpl)-1:], "/"))
			if matchesTemplate(tmpl, segs) {
				out = append(out, rt)
			}
			continue
		}
		if len(tmpl) != len(segs) {
			continue
		}
		ok := true
		for i, s := range tmpl {
			if (!strings.HasPrefix(s, "{") || s == "{$}") && strings.TrimSuffix(s, "{$}") != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, rt)
		}
	}
	return out
}

// matchesTemplate reports whether segs fit a row's segments (literals
// equal, wildcards anything).
func matchesTemplate(tmpl, segs []string) bool {
	for i, s := range tmpl {
		if !strings.HasPrefix(s, "{") && s != segs[i] {
			return false
		}
	}
	return true
}

func TestRouting_unknownPathsAndMethods(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		rows := s.App.Handler.(*api.Server).Table()
		// Every prefix of every row, with an unknown segment after it, is a
		// 404 with Grape's body, whatever the method.
		prefixes := map[string]bool{}
		for _, rt := range rows {
			segs := strings.Split(sample(rt.Path), "/")
			for n := 2; n <= len(segs); n++ {
				prefixes[strings.Join(segs[:n], "/")] = true
			}
		}
		checked := 0
		for prefix := range prefixes {
			unknown := prefix + "/no-such-endpoint"
			if len(rowsMatching(rows, unknown)) > 0 {
				continue // a wildcard takes the segment; the row answers
			}
			for _, method := range []string{"GET", "POST"} {
				r := s.Do(t, apitest.Request{Method: method, Path: unknown, Token: s.RootToken})
				if r.Status != http.StatusNotFound || string(r.Body) != `{"error":"404 Not Found"}` {
					t.Errorf("%s %s: %d %s; want 404 {\"error\":\"404 Not Found\"}", method, unknown, r.Status, r.Body)
				}
			}
			checked++
		}
		if checked < 40 {
			t.Errorf("only %d prefixes checked", checked)
		}
		// The catch-all of old: nothing answers GET /projects/:id/<unknown>
		// but a 404, even for a project that exists.
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "real"}}).Want(t, http.StatusCreated).JSON(t, &p)
		s.Get(t, "/projects/"+itoa(p.ID)+"/frobnicate", s.RootToken).Want(t, http.StatusNotFound).WantBody(t, `{"error":"404 Not Found"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/frobnicate", Token: s.RootToken}).Want(t, http.StatusNotFound)

		// Every row's path asked with a method no row serves there is a 405
		// naming the methods that are.
		for _, rt := range rows {
			path := sample(rt.Path)
			var allowed []string
			for _, m := range rowsMatching(rows, path) {
				allowed = append(allowed, m.Method)
			}
			method := ""
			for _, m := range []string{"PATCH", "PUT", "DELETE", "POST"} {
				if !slices.Contains(allowed, m) {
					method = m
					break
				}
			}
			r := s.Do(t, apitest.Request{Method: method, Path: path, Token: s.RootToken})
			if r.Status != http.StatusMethodNotAllowed || string(r.Body) != `{"error":"405 Not Allowed"}` {
				t.Errorf("%s %s: %d %s; want 405", method, path, r.Status, r.Body)
				continue
			}
			for _, m := range allowed {
				if !strings.Contains(r.Header.Get("Allow"), m) {
					t.Errorf("%s %s: Allow %q lacks %s", method, path, r.Header.Get("Allow"), m)
				}
			}
		}
	})
}
