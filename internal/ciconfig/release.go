package ciconfig

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Release is a job's release: keyword (GitLab's Entry::Release). Values
// are as written: $VARIABLES are expanded when the job runs (by the
// shell that runs release-cli, or by Quarry's runner).
type Release struct {
	TagName     string `json:"tag_name"`
	TagMessage  string `json:"tag_message,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description"`
	// Ref is the commit, branch or tag the tag is made from when it does
	// not exist ("": release-cli's default, $CI_COMMIT_SHA).
	Ref        string `json:"ref,omitempty"`
	ReleasedAt string `json:"released_at,omitempty"` // ISO 8601, as written
	// Milestones are titles (milestones: a string or a list of strings).
	Milestones []string      `json:"milestones,omitempty"`
	Links      []ReleaseLink `json:"links,omitempty"` // assets:links
}

// ReleaseLink is one release:assets:links entry. Its JSON is the
// --assets-link value of release-cli, fields in GitLab's order.
type ReleaseLink struct {
	Name            string `json:"name"`
	URL             string `json:"url"`
	Filepath        string `json:"filepath,omitempty"`
	DirectAssetPath string `json:"direct_asset_path,omitempty"`
	LinkType        string `json:"link_type,omitempty"`
}

var (
	releaseKeys   = []string{"tag_name", "tag_message", "name", "description", "ref", "released_at", "milestones", "assets"}
	linkKeys      = []string{"name", "url", "filepath", "direct_asset_path", "link_type"}
	linkTypes     = []string{"other", "runbook", "image", "package"}
	reReleaseTime = regexp.MustCompile(`^\d{4}-\d\d-\d\d(?:[Tt ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:[Zz]|[-+]\d\d(?::?\d\d)?)?)?$`)
	reShortSHA    = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)
)

// decodeRelease validates release: in GitLab's order: the entry's own
// checks (keys, tag_name, tag_message, description, milestones,
// released_at, ref), then assets:, then each link.
func decodeRelease(loc string, v any) (*Release, error) {
	m, ok := v.(*mapping)
	if !ok {
		return nil, entryError(loc, "config should be a hash")
	}
	if err := allowedKeys(loc, m, releaseKeys...); err != nil {
		return nil, err
	}
	val := func(k string) any { x, _ := m.get(k); return x }
	r := &Release{}
	var err error
	if r.TagName, err = requiredString(loc, "tag name", val("tag_name")); err != nil {
		return nil, err
	}
	if tm := val("tag_message"); !blank(tm) {
		if r.TagMessage, err = stringValue(loc, "tag message", tm); err != nil {
			return nil, err
		}
	}
	if r.Description, err = requiredString(loc, "description", val("description")); err != nil {
		return nil, err
	}
	if ms := val("milestones"); !blank(ms) {
		if r.Milestones, err = stringsOrString(loc, "milestones", ms); err != nil {
			return nil, err
		}
	}
	if at := val("released_at"); at != nil && at != false {
		s, ok := at.(string)
		if !ok || !validReleaseTime(s) {
			return nil, entryError(loc, "released at must be a valid datetime")
		}
		r.ReleasedAt = s
	}
	if ref := val("ref"); ref != nil && ref != false {
		s, ok := ref.(string)
		if !ok || !(reShortSHA.MatchString(s) || validGitRef(s)) {
			return nil, entryError(loc, "ref must be a valid ref")
		}
		r.Ref = s
	}
	if a := val("assets"); a != nil {
		if r.Links, err = decodeAssets(loc+":assets", a); err != nil {
			return nil, err
		}
	}
	if n := val("name"); n != nil {
		r.Name = rubyString(n)
	}
	return r, nil
}

// requiredString is GitLab's `type: String, presence: true`: the type
// check speaks first.
func requiredString(loc, attr string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", entryError(loc, attr+" should be a string")
	}
	if strings.TrimSpace(s) == "" {
		return "", entryError(loc, attr+" can't be blank")
	}
	return s, nil
}

func decodeAssets(loc string, v any) ([]ReleaseLink, error) {
	m, ok := v.(*mapping)
	if !ok {
		return nil, entryError(loc, "config should be a hash")
	}
	if err := allowedKeys(loc, m, "links"); err != nil {
		return nil, err
	}
	raw, _ := m.get("links")
	l, isList := raw.([]any)
	for _, e := range l {
		if _, ok := e.(*mapping); !ok {
			isList = false
		}
	}
	if !isList && raw != nil {
		return nil, entryError(loc, "links should be an array of hashes")
	}
	if len(l) == 0 {
		return nil, entryError(loc, "links can't be blank")
	}
	out := make([]ReleaseLink, 0, len(l))
	for _, e := range l {
		lm := e.(*mapping)
		lloc := loc + ":links:link"
		if err := allowedKeys(lloc, lm, linkKeys...); err != nil {
			return nil, err
		}
		get := func(k string) any { x, _ := lm.get(k); return x }
		var link ReleaseLink
		var err error
		if link.Name, err = requiredString(lloc, "name", get("name")); err != nil {
			return nil, err
		}
		u := get("url")
		if blank(u) {
			return nil, entryError(lloc, "url can't be blank")
		}
		if link.URL, err = stringValue(lloc, "url", u); err != nil {
			return nil, err
		}
		// A URL naming a variable is checked when the job makes the
		// release (the Releases API's own link check); GitLab's
		// addressable_url check would refuse "$CI_PROJECT_URL/…" outright.
		if !strings.Contains(link.URL, "$") && !validLinkURL(link.URL) {
			return nil, entryError(lloc, "url is blocked: only allowed schemes are http, https")
		}
		for _, k := range []string{"filepath", "direct_asset_path"} {
			if x := get(k); x != nil {
				s, err := stringValue(lloc, humanize(k), x)
				if err != nil {
					return nil, err
				}
				if k == "filepath" {
					link.Filepath = s
				} else {
					link.DirectAssetPath = s
				}
			}
		}
		if lt := get("link_type"); lt != nil {
			if link.LinkType, err = oneOf(lloc, "link type", lt, linkTypes...); err != nil {
				return nil, err
			}
		}
		out = append(out, link)
	}
	return out, nil
}

// validLinkURL is an http or https URL with a host.
func validLinkURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validReleaseTime is what Ruby's DateTime.iso8601 takes in practice: a
// date, or a date and a time with optional seconds, fraction and zone.
func validReleaseTime(s string) bool {
	if !reReleaseTime.MatchString(s) {
		return false
	}
	_, err := time.Parse("2006-01-02", s[:10])
	return err == nil
}

// validGitRef is git check-ref-format's rules for a branch or tag name
// (GitLab's GitRefValidator), without a leading "-".
func validGitRef(name string) bool {
	if name == "" || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") ||
		strings.Contains(name, "//") || strings.Contains(name, "@{") || name == "@" {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// CLICommand is the release step's script line, as GitLab's Releaser
// writes it for release-cli: `release-cli create`, then --name,
// --description, --tag-name, --tag-message, --ref, --released-at (those
// set, each value in double quotes as written, so the shell expands its
// variables), one --milestone per milestone, and one --assets-link per
// link whose value is the link's JSON as a JSON string.
func (r *Release) CLICommand() string {
	var b strings.Builder
	b.WriteString("release-cli create")
	flag := func(name, v string) {
		if v != "" {
			b.WriteString(" --" + name + ` "` + v + `"`)
		}
	}
	flag("name", r.Name)
	flag("description", r.Description)
	flag("tag-name", r.TagName)
	flag("tag-message", r.TagMessage)
	flag("ref", r.Ref)
	flag("released-at", r.ReleasedAt)
	for _, m := range r.Milestones {
		b.WriteString(` --milestone "` + m + `"`)
	}
	for _, l := range r.Links {
		b.WriteString(" --assets-link " + rubyJSON(rubyJSON(l)))
	}
	return b.String()
}

// rubyJSON is Ruby's to_json of a value: no HTML escaping.
func rubyJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return `""`
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
