package runner

import (
	"path/filepath"
	"testing"
)

func TestBuild_cacheFile(t *testing.T) {
	b := &build{r: &runner{cfg: Config{CacheDir: "/c"}}, job: &job{JobInfo: jobInfo{ProjectID: 7}}}
	for _, tc := range []struct{ key, want string }{
		{"shared-protected", "/c/project-7/shared-protected/cache.zip"},
		{"main-1-non_protected", "/c/project-7/main-1-non_protected/cache.zip"},
		{"a/b", "/c/project-7/a/b/cache.zip"},
		{"", ""},
		{"..", ""},
		{"../other", ""},
		{"a/../../x", ""},
		{"/abs", ""},
		{"a//b", ""},
		{"a\\b", ""},
		{"a\x00b", ""},
	} {
		want := tc.want
		if want != "" {
			want = filepath.FromSlash(want)
		}
		if got := b.cacheFile(tc.key); got != want {
			t.Errorf("cacheFile(%q) = %q; want %q", tc.key, got, want)
		}
	}
}

func TestBuild_cachePolicy(t *testing.T) {
	b := &build{vars: map[string]string{"POLICY": "pull", "BAD": "sometimes"}}
	for _, tc := range []struct {
		policy         string
		pull, push, ok bool
	}{
		{"", true, true, true},
		{"pull-push", true, true, true},
		{"pull", true, false, true},
		{"push", false, true, true},
		{"$POLICY", true, false, true},
		{"$BAD", false, false, false},
		{"$UNSET", true, true, true},
	} {
		pull, push, ok := b.cachePolicy(cache{Policy: tc.policy})
		if pull != tc.pull || push != tc.push || ok != tc.ok {
			t.Errorf("cachePolicy(%q) = %v %v %v; want %v %v %v", tc.policy, pull, push, ok, tc.pull, tc.push, tc.ok)
		}
	}
}
