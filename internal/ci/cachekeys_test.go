package ci

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/git/gittest"
)

func TestCacheScope_suffixed(t *testing.T) {
	one, seven := int64(1), int64(7)
	for _, tc := range []struct {
		name         string
		sc           cacheScope
		key          string
		fallback     []string
		unprotect    bool
		want         string
		wantFallback []string
	}{
		{name: "not separated, never cleared", sc: cacheScope{}, key: "k", want: "k", wantFallback: []string{}},
		{name: "not separated, protected ignored", sc: cacheScope{Protected: true}, key: "k", want: "k", wantFallback: []string{}},
		{name: "not separated, cleared", sc: cacheScope{Index: &one}, key: "k", fallback: []string{"a"}, want: "k-1", wantFallback: []string{"a-1"}},
		{name: "unprotected ref", sc: cacheScope{Separated: true}, key: "k", want: "k-non_protected", wantFallback: []string{}},
		{name: "protected ref", sc: cacheScope{Separated: true, Protected: true}, key: "k", want: "k-protected", wantFallback: []string{}},
		{name: "protected ref, unprotect", sc: cacheScope{Separated: true, Protected: true}, key: "k", unprotect: true,
			want: "k-non_protected", wantFallback: []string{}},
		{name: "unprotected ref, unprotect", sc: cacheScope{Separated: true}, key: "k", unprotect: true, want: "k-non_protected",
			wantFallback: []string{}},
		{name: "index before protection", sc: cacheScope{Separated: true, Protected: true, Index: &seven}, key: "$CI_COMMIT_REF_SLUG",
			fallback: []string{"main", "$CI_DEFAULT_BRANCH"}, want: "$CI_COMMIT_REF_SLUG-7-protected",
			wantFallback: []string{"main-7-protected", "$CI_DEFAULT_BRANCH-7-protected"}},
		{name: "fallback keys unprotected", sc: cacheScope{Separated: true, Index: &one}, key: "default", fallback: []string{"x"},
			want: "default-1-non_protected", wantFallback: []string{"x-1-non_protected"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]string(nil), tc.fallback...)
			got, gotFallback := tc.sc.suffixed(tc.key, tc.fallback, tc.unprotect)
			if got != tc.want || !reflect.DeepEqual(gotFallback, tc.wantFallback) {
				t.Errorf("suffixed = %q %q; want %q %q", got, gotFallback, tc.want, tc.wantFallback)
			}
			if !reflect.DeepEqual(tc.fallback, in) {
				t.Errorf("fallback keys changed in place: %q", tc.fallback)
			}
		})
	}
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestFilesKey(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	for _, tc := range []struct {
		name     string
		prefix   string
		position int
		ids      []string
		want     string
	}{
		{name: "nothing found", position: 0, want: "0-default"},
		{name: "nothing found, prefix", prefix: "ruby", want: "ruby-default"},
		{name: "one id", position: 2, ids: []string{a}, want: "2-" + sha1Hex(a)},
		{name: "sorted", prefix: "p", ids: []string{b, a}, want: "p-" + sha1Hex(a+"-"+b)},
		{name: "distinct", prefix: "p", ids: []string{a, b, a}, want: "p-" + sha1Hex(a+"-"+b)},
		{name: "blanks dropped", prefix: "$CI_JOB_NAME", ids: []string{"", a}, want: "$CI_JOB_NAME-" + sha1Hex(a)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := filesKey(tc.prefix, tc.position, tc.ids); got != tc.want {
				t.Errorf("filesKey = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestWildcardPattern(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"*.lock", "Gemfile.lock", true},
		{"*.lock", "sub/Gemfile.lock", false},
		{"**/*.lock", "sub/deep/Gemfile.lock", true},
		{"**.lock", "sub/Gemfile.lock", true},
		{"sub/*.json", "sub/package.json", true},
		{"sub/*.json", "sub/x/package.json", false},
		{"a.b*", "axb", false},
		{"(x)*", "(x)y", true},
	} {
		re, err := wildcardPattern(tc.glob)
		if err != nil {
			t.Fatalf("%q: %v", tc.glob, err)
		}
		if got := re.MatchString(tc.path); got != tc.want {
			t.Errorf("%q matches %q = %v; want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

func TestKeyFileIDs(t *testing.T) {
	dir := t.TempDir()
	runner, err := git.NewRunner("", filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitrepo.NewStorages(runner, map[string]string{"default": filepath.Join(dir, "repos")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	path := gittest.InitRepo(t, filepath.Join(dir, "repos", "p.git"))
	c1 := gittest.Commit(t, path, gittest.Files{"Gemfile.lock": "v1", "go.sum": "s1", "sub/a.lock": "a", "dir/x": "x"})
	c2 := gittest.Commit(t, path, gittest.Files{"go.sum": "s2"}, gittest.Parents(c1))
	c3 := gittest.Commit(t, path, gittest.Files{"README": "r"}, gittest.Parents(c2))
	repo, err := st.Open("default", "p.git")
	if err != nil {
		t.Fatal(err)
	}
	blob := func(rev string) string { return strings.TrimSpace(gittest.Run(t, path, nil, "rev-parse", rev)) }
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		commit  string
		files   []string
		commits bool
		want    []string
	}{
		{name: "contents", commit: c3, files: []string{"Gemfile.lock", "go.sum"}, want: []string{blob(c3 + ":Gemfile.lock"), blob(c3 + ":go.sum")}},
		{name: "missing file left out", commit: c3, files: []string{"nope", "go.sum"}, want: []string{blob(c3 + ":go.sum")}},
		{name: "directory left out", commit: c3, files: []string{"dir"}, want: nil},
		{name: "hostile path left out", commit: c3, files: []string{"go.sum\ninfo HEAD"}, want: nil},
		{name: "wildcard", commit: c3, files: []string{"**.lock"}, want: []string{blob(c3 + ":Gemfile.lock"), blob(c3 + ":sub/a.lock")}},
		{name: "last commits", commit: c3, files: []string{"Gemfile.lock", "go.sum"}, commits: true, want: []string{c1, c2}},
		{name: "last commits, missing", commit: c3, files: []string{"nope"}, commits: true, want: nil},
		{name: "last commit at an older commit", commit: c1, files: []string{"go.sum"}, commits: true, want: []string{c1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := keyFileIDs(ctx, repo, git.ObjectID(tc.commit), tc.files, tc.commits)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ids = %q; want %q", got, tc.want)
			}
		})
	}
	if a, b := filesDigest([]string{blob(c1 + ":go.sum")}), filesDigest([]string{blob(c3 + ":go.sum")}); a == b {
		t.Errorf("digest did not change with go.sum's content: %s", a)
	}
}

func FuzzWildcardPattern(f *testing.F) {
	for _, s := range []string{"*.lock", "**/*.json", "a.b", "(x)[y]{z}\\", "**", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, glob string) {
		re, err := wildcardPattern(glob)
		if !utf8.ValidString(glob) {
			if err == nil {
				t.Fatalf("%q: not UTF-8, yet compiled", glob)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", glob, err)
		}
		if !strings.Contains(glob, "*") && !re.MatchString(glob) {
			t.Errorf("%q does not match itself", glob)
		}
	})
}
