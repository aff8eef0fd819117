package web

import (
	"html/template"
	"strconv"
	"strings"

	"quarry/internal/model"
)

// The rendered head of project pages ("project_head_html") is cached
// (pageCache) by everything it shows, so an entry is never stale: the
// template is executed on headData, which holds only that, and a
// template that came to print anything else would fail to execute rather
// than be cached under a key that misses it.

// headData is what the head of a project page shows.
type headData struct {
	Project  headProject
	Topics   []string
	URL      string
	ReadCode bool
	Wiki     bool
	// Issues shows the Issues tab with OpenIssues.
	Issues     bool
	OpenIssues int
}

type headProject struct {
	Name, Description, DefaultBranch string
	Visibility                       model.Visibility
	StarCount, ForksCount            int
}

// key names d unambiguously (each string with its length).
func (d headData) key() string {
	var b strings.Builder
	str := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	p := d.Project
	str(p.Name)
	str(p.Description)
	str(p.DefaultBranch)
	str(string(p.Visibility))
	str(strconv.Itoa(p.StarCount))
	str(strconv.Itoa(p.ForksCount))
	str(d.URL)
	str(strconv.FormatBool(d.ReadCode))
	str(strconv.FormatBool(d.Wiki))
	str(strconv.FormatBool(d.Issues))
	str(strconv.Itoa(d.OpenIssues))
	str(strconv.Itoa(len(d.Topics)))
	for _, t := range d.Topics {
		str(t)
	}
	return b.String()
}

// withHead is ph with its head rendered (from the cache when there).
func (h *Handler) withHead(ph projectHead) (projectHead, error) {
	p := ph.Project
	d := headData{Project: headProject{Name: p.Name, Description: p.Description, DefaultBranch: p.DefaultBranch,
		Visibility: p.Visibility, StarCount: p.StarCount, ForksCount: p.ForksCount},
		Topics: ph.Topics, URL: ph.URL, ReadCode: ph.ReadCode, Wiki: ph.Wiki,
		Issues: ph.Issues, OpenIssues: ph.OpenIssues}
	key := d.key()
	if html, ok := cacheGet[template.HTML](h.cache, kindHead, key); ok {
		ph.HeadHTML = html
		return ph, nil
	}
	html, err := h.renderPart("project", "project_head_html", d)
	if err != nil {
		return ph, err
	}
	cachePut(h.cache, kindHead, key, html, len(html))
	ph.HeadHTML = html
	return ph, nil
}
