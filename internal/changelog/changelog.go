// Package changelog generates release notes from commit trailers: which
// commits count, how they are grouped and rendered, and where a new
// section goes in an existing changelog file. The Service puts it to work
// on project repositories.
package changelog

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"quarry/internal/changelog/tmpl"
)

// DefaultTemplate renders a heading per category with its number of
// changes and a bullet per entry, or "No changes.".
const DefaultTemplate = `{% if categories %}
{% each categories %}
### {{ title }} ({% if single_change %}1 change{% else %}{{ count }} changes{% end %})

{% each entries %}
- [{{ title }}]({{ commit.web_url }})\
{% if author.credit %} by {{ author.reference }}{% end %}\
{% if merge_request %} ([merge request]({{ merge_request.web_url }})){% end %}

{% end %}

{% end %}
{% else %}
No changes.
{% end %}
`

// DefaultDateFormat is the strftime format of section dates.
const DefaultDateFormat = "%Y-%m-%d"

// Commit is what selection needs of a commit.
type Commit struct {
	ID          string
	Title       string
	Message     string
	AuthorEmail string
	Trailers    map[string][]string
}

var revertRe = regexp.MustCompile(`(?im)^This reverts commit (?P<sha>[0-9a-f]{40})`)

// Select keeps, from commits newest first, those carrying the trailer
// (name matched exactly); a commit reverted by a newer commit of the list
// is left out, and a revert itself counts only with its own trailer.
func Select(commits []Commit, trailer string) []Commit {
	reverted := map[string]bool{}
	var out []Commit
	for _, c := range commits {
		if reverted[c.ID] {
			continue
		}
		_, body, _ := strings.Cut(c.Message, "\n")
		for _, m := range revertRe.FindAllStringSubmatch(body, -1) {
			reverted[strings.ToLower(m[1])] = true
		}
		if vals := c.Trailers[trailer]; len(vals) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// Entry is one rendered change.
type Entry struct {
	Commit   Commit
	Category string // the trailer's value
	// CommitURL and CommitReference name the commit.
	CommitURL, CommitReference string
	// AuthorReference ("@user") is set when the author is a known user;
	// Credit says whether the notes credit them.
	AuthorReference string
	Credit          bool
	Contributor     bool
}

// Category is a display title and its entries, newest first.
type Category struct {
	Title   string
	Entries []Entry
}

// Group sorts entries into categories: first the mapped titles of
// mapping, in its order (empty ones dropped), then unmapped categories in
// the order they first appear.
func Group(entries []Entry, mapping []Mapping) []Category {
	titleOf := map[string]string{}
	var cats []*Category
	byTitle := map[string]*Category{}
	for _, m := range mapping {
		titleOf[m.Name] = m.Title
		if byTitle[m.Title] == nil {
			c := &Category{Title: m.Title}
			byTitle[m.Title] = c
			cats = append(cats, c)
		}
	}
	for _, e := range entries {
		title, ok := titleOf[e.Category]
		if !ok {
			title = e.Category
		}
		c := byTitle[title]
		if c == nil {
			c = &Category{Title: title}
			byTitle[title] = c
			cats = append(cats, c)
		}
		c.Entries = append(c.Entries, e)
	}
	out := []Category{}
	for _, c := range cats {
		if len(c.Entries) > 0 {
			out = append(out, *c)
		}
	}
	return out
}

// Render makes the section of a release: "## <version> (<date>)", a
// blank line, the template's output trimmed, and a blank line.
func Render(version string, date time.Time, cfg Config, cats []Category) (string, error) {
	t, err := tmpl.Parse(cfg.Template)
	if err != nil {
		return "", err
	}
	list := make([]any, len(cats))
	for i, c := range cats {
		entries := make([]any, len(c.Entries))
		for j, e := range c.Entries {
			trailers := map[string]any{}
			for k, vs := range e.Commit.Trailers {
				trailers[k] = vs[len(vs)-1]
			}
			entry := map[string]any{
				"title":  e.Commit.Title,
				"commit": map[string]any{"reference": e.CommitReference, "web_url": e.CommitURL, "trailers": trailers},
			}
			if e.AuthorReference != "" {
				entry["author"] = map[string]any{"reference": e.AuthorReference, "credit": e.Credit, "contributor": e.Contributor}
			}
			entries[j] = entry
		}
		list[i] = map[string]any{"title": c.Title, "count": len(c.Entries), "single_change": len(c.Entries) == 1, "entries": entries}
	}
	body := t.Execute(map[string]any{"categories": list})
	return fmt.Sprintf("## %s (%s)\n\n%s\n\n", version, Strftime(date, cfg.DateFormat), strings.TrimSpace(body)), nil
}

var releaseHeader = regexp.MustCompile(`(?m)^##\s+(\S+)`)

// Insert puts section into an existing changelog by version order: before
// the highest release lower than version, or at the end. A file that
// already has a section for version is left alone (changed is false).
func Insert(existing, version string, section string) (string, bool) {
	if regexp.MustCompile(`(?m)^##\s*` + regexp.QuoteMeta(version)).MatchString(existing) {
		return existing, false
	}
	if existing == "" {
		return section, true
	}
	target, ok := ParseVersion(version)
	if !ok {
		target = Version{Major: "0", Minor: "0", Patch: "0"}
	}
	insertAt := -1
	var best Version
	any := false
	for _, loc := range releaseHeader.FindAllStringSubmatchIndex(existing, -1) {
		name := existing[loc[2]:loc[3]]
		if strings.HasPrefix(name, "v") {
			continue // release headers are bare versions
		}
		v, ok := ParseVersion(name)
		if !ok {
			continue
		}
		any = true
		if Compare(v, target) < 0 && (insertAt < 0 || Compare(v, best) > 0) {
			insertAt, best = loc[0], v
		}
	}
	if insertAt >= 0 {
		return existing[:insertAt] + section + existing[insertAt:], true
	}
	out := existing
	if any {
		out += "\n"
	}
	return out + strings.TrimRight(section, " \t\n") + "\n", true
}
