package badges

import (
	"regexp"
	"strings"
)

// Placeholders are the names a badge URL may hold as "%{name}", in
// GitLab's order (app/models/badge.rb, PLACEHOLDERS).
var Placeholders = []string{
	"project_path", "project_title", "project_name", "project_id", "project_namespace", "group_name",
	"gitlab_server", "gitlab_pages_domain", "default_branch", "commit_sha", "latest_tag",
}

// placeholder matches "%{name}" and its URL-escaped spellings, as
// GitLab's StringPlaceholderReplacer does: the opening "{" may be written
// "25%7B" (an escaped "%" before an escaped "{") and the closing "}" as
// "%7D".
var placeholder = regexp.MustCompile(`%(\{|25%7B)(` + strings.Join(Placeholders, "|") + `)(\}|%7D)`)

// Render replaces the placeholders of url with their values. value is
// asked once per placeholder found, by name; a placeholder whose value is
// unknown (ok false) stays as written. Values are inserted as they are,
// never scanned again for placeholders, and not escaped (GitLab inserts
// them verbatim).
func Render(url string, value func(name string) (v string, ok bool)) string {
	if url == "" || !strings.Contains(url, "%") {
		return url
	}
	return placeholder.ReplaceAllStringFunc(url, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[2]
		if v, ok := value(name); ok {
			return v
		}
		return m
	})
}

// Names returns the distinct placeholder names url holds, in order of
// first appearance.
func Names(url string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(url, -1) {
		if !contains(out, m[2]) {
			out = append(out, m[2])
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
