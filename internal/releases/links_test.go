package releases

import (
	"strings"
	"testing"

	"quarry/internal/model"
)

func TestCheckLink(t *testing.T) {
	ok := model.ReleaseLink{Name: "app", URL: "https://dl.test/app", LinkType: "other"}
	with := func(f func(l *model.ReleaseLink)) model.ReleaseLink { l := ok; f(&l); return l }
	for _, tc := range []struct {
		name  string
		link  model.ReleaseLink
		want  string
		param bool
	}{
		{"valid", ok, "", false},
		{"ftp", with(func(l *model.ReleaseLink) { l.URL = "ftp://dl.test/x" }), "", false},
		{"blank url", with(func(l *model.ReleaseLink) { l.URL = " " }), "Url can't be blank", false},
		{"no scheme", with(func(l *model.ReleaseLink) { l.URL = "dl.test/app" }), "Url is blocked: Only allowed schemes are http, https, ftp", false},
		{"javascript", with(func(l *model.ReleaseLink) { l.URL = "javascript:alert(1)" }), "Url is blocked: Only allowed schemes are http, https, ftp", false},
		{"no host", with(func(l *model.ReleaseLink) { l.URL = "https:///x" }), "Url is blocked: URI is invalid", false},
		{"bad escape", with(func(l *model.ReleaseLink) { l.URL = "https://x.test/%zz" }), "Url is blocked: URI is invalid", false},
		{"long url", with(func(l *model.ReleaseLink) { l.URL = "https://x.test/" + strings.Repeat("a", MaxLinkURL) }), "Url is too long (maximum is 2048 characters)", false},
		{"blank name", with(func(l *model.ReleaseLink) { l.Name = "" }), "Name can't be blank", false},
		{"long name", with(func(l *model.ReleaseLink) { l.Name = strings.Repeat("n", MaxLinkName+1) }), "Name is too long (maximum is 255 characters)", false},
		{"path", with(func(l *model.ReleaseLink) { l.Filepath = "/bin/app-1.0.tar" }), "", false},
		{"dot segments (GitLab's format allows them)", with(func(l *model.ReleaseLink) { l.Filepath = "/bin/../x" }), "", false},
		{"path ending in a dot", with(func(l *model.ReleaseLink) { l.Filepath = "/bin/app." }), "Filepath is in an invalid format", false},
		{"path with space", with(func(l *model.ReleaseLink) { l.Filepath = "/a b" }), "Filepath is in an invalid format", false},
		{"long path", with(func(l *model.ReleaseLink) { l.Filepath = "/" + strings.Repeat("a", MaxFilepath) }), "Filepath is too long (maximum is 128 characters)", false},
		{"type", with(func(l *model.ReleaseLink) { l.LinkType = "movie" }), "link_type does not have a valid value", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, param := CheckLink(tc.link)
			if got != tc.want || param != tc.param {
				t.Errorf("CheckLink = %q, %v; want %q, %v", got, param, tc.want, tc.param)
			}
		})
	}
}

func TestDuplicate(t *testing.T) {
	others := []model.ReleaseLink{{ID: 1, Name: "a", URL: "https://x/a", Filepath: "/a"}, {ID: 2, Name: "b", URL: "https://x/b"}}
	for _, tc := range []struct {
		link model.ReleaseLink
		want string
	}{
		{model.ReleaseLink{Name: "c", URL: "https://x/c"}, ""},
		{model.ReleaseLink{Name: "a", URL: "https://x/c"}, "Name"},
		{model.ReleaseLink{Name: "a", URL: "https://x/b"}, "Url"},
		{model.ReleaseLink{Name: "c", URL: "https://x/c", Filepath: "/a"}, "Filepath"},
		{model.ReleaseLink{ID: 1, Name: "a", URL: "https://x/a", Filepath: "/a"}, ""}, // itself
	} {
		if got := duplicate(tc.link, others); got != tc.want {
			t.Errorf("duplicate(%+v) = %q; want %q", tc.link, got, tc.want)
		}
	}
}

func FuzzCheckLink(f *testing.F) {
	f.Add("app", "https://dl.test/app", "/bin/app", "other")
	f.Add("", "javascript:x", "/a b", "movie")
	f.Add("x", "ftp://[::1]:21/x", "a/b.c", "image")
	f.Add("x", "http://%zz", "", "package")
	f.Fuzz(func(t *testing.T, name, url, path, typ string) {
		msg, param := CheckLink(model.ReleaseLink{Name: name, URL: url, Filepath: path, LinkType: typ})
		if param && msg == "" {
			t.Fatal("a parameter error without a message")
		}
		if msg == "" && (strings.TrimSpace(url) == "" || strings.TrimSpace(name) == "" || len(path) > 4*MaxFilepath) {
			t.Fatalf("accepted %q %q %q", name, url, path)
		}
	})
}
