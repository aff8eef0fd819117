package badges

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	vals := map[string]string{
		"project_path": "g/sub/p", "project_title": "My Project", "project_name": "p", "project_id": "7",
		"project_namespace": "g/sub/p", "group_name": "g/sub", "gitlab_server": "gitlab.example.com",
		"default_branch": "main", "commit_sha": "0123abc", "latest_tag": "v1.0", "recursive": "%{project_id}",
	}
	value := func(name string) (string, bool) { v, ok := vals[name]; return v, ok }
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"https://example.com/plain", "https://example.com/plain"},
		{"https://x/%{project_path}/-/commits/%{default_branch}", "https://x/g/sub/p/-/commits/main"},
		{"https://x/%{project_id}/%{project_id}", "https://x/7/7"},
		{"https://x/%{project_title}", "https://x/My Project"},
		{"https://x/%{project_namespace}/%{group_name}", "https://x/g/sub/p/g/sub"},
		{"https://%{gitlab_server}/%{commit_sha}?t=%{latest_tag}", "https://gitlab.example.com/0123abc?t=v1.0"},
		// Escaped spellings, as GitLab's replacer accepts them.
		{"https://x/%25%7Bproject_id%7D", "https://x/7"},
		{"https://x/%{project_id%7D", "https://x/7"},
		{"https://x/%25%7Bproject_id}", "https://x/7"},
		// Lower-case escapes and unknown names stay.
		{"https://x/%25%7bproject_id%7d", "https://x/%25%7bproject_id%7d"},
		{"https://x/%{unknown}", "https://x/%{unknown}"},
		{"https://x/%{recursive}", "https://x/%{recursive}"},
		{"https://x/%{ project_id }", "https://x/%{ project_id }"},
		{"https://x/{project_id}", "https://x/{project_id}"},
		// A placeholder without a value stays as written.
		{"https://x/%{gitlab_pages_domain}/%{project_id}", "https://x/%{gitlab_pages_domain}/7"},
		// project_name is a prefix of project_namespace.
		{"https://x/%{project_namespace}", "https://x/g/sub/p"},
		{"%{project_id}%{project_id}", "77"},
		{"%%{project_id}}", "%7}"},
	} {
		if got := Render(tc.in, value); got != tc.want {
			t.Errorf("Render(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestRender_valuesNotRescanned(t *testing.T) {
	got := Render("%{project_path}", func(string) (string, bool) { return "%{project_id}", true })
	if got != "%{project_id}" {
		t.Errorf("got %q; want %q", got, "%{project_id}")
	}
}

func TestNames(t *testing.T) {
	got := strings.Join(Names("%{commit_sha}/%{project_id}/%25%7Bcommit_sha%7D/%{nope}"), ",")
	if got != "commit_sha,project_id" {
		t.Errorf("got %q; want %q", got, "commit_sha,project_id")
	}
}

func TestCheckURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", MaxURLLength)
	for _, tc := range []struct{ in, want, msg string }{
		{"https://example.com/badge.svg", "https://example.com/badge.svg", ""},
		{"  http://example.com  ", "http://example.com", ""},
		{"HTTPS://example.com", "HTTPS://example.com", ""},
		{"http://localhost:8080/x", "http://localhost:8080/x", ""},
		{"http://user:pw@[::1]:80/x?q#f", "http://user:pw@[::1]:80/x?q#f", ""},
		{"https://example.com/%{project_path}/badges/%{default_branch}/pipeline.svg", "https://example.com/%{project_path}/badges/%{default_branch}/pipeline.svg", ""},
		{"", "", "must be a valid URL"},
		{"   ", "", "must be a valid URL"},
		{"ftp://example.com", "ftp://example.com", "is blocked: Only allowed schemes are http, https"},
		{"javascript:alert(1)", "javascript:alert(1)", "is blocked: Only allowed schemes are http, https"},
		{"example.com/x", "example.com/x", "is blocked: Only allowed schemes are http, https"},
		{"1http://x", "1http://x", "is blocked: Only allowed schemes are http, https"},
		{"http:example.com", "http:example.com", "is blocked: URI is invalid"},
		{"http://", "http://", "is blocked: URI is invalid"},
		{"http:///path", "http:///path", "is blocked: URI is invalid"},
		{"http://exa mple.com", "http://exa mple.com", "is blocked: URI is invalid"},
		{"http://example.com:8x/", "http://example.com:8x/", "is blocked: URI is invalid"},
		{"http://[::1/", "http://[::1/", "is blocked: URI is invalid"},
		{"http://x/\x00", "http://x/\x00", "is blocked: URI is invalid"},
		{long, long, "is too long (maximum is 2048 characters)"},
	} {
		got, msg := CheckURL(tc.in)
		if got != tc.want || msg != tc.msg {
			t.Errorf("CheckURL(%q) = %q, %q; want %q, %q", tc.in, got, msg, tc.want, tc.msg)
		}
	}
}

func TestTraversalIDs(t *testing.T) {
	for in, want := range map[string]string{"": "", "1/": "1", "1/5/9/": "1,5,9", "x/2/": "2"} {
		var parts []string
		for _, id := range traversalIDs(in) {
			parts = append(parts, itoa(id))
		}
		if got := strings.Join(parts, ","); got != want {
			t.Errorf("traversalIDs(%q) = %q; want %q", in, got, want)
		}
	}
}
