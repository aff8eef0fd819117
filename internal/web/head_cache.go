package web

import (
	"html/template"
	"strconv"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"

	"quarry/internal/model"
)

// heads caches the rendered head of project pages ("project_head_html")
// by everything it shows, so an entry is never stale: the template is
// executed on headData, which holds only that, and a template that came
// to print anything else would fail to execute rather than be cached
// under a key that misses it. What an entry holds is only a function of
// its key and the embedded templates, so every handler shares it.
var heads = newHeadCache()

const headEntries = 1024

type headCache struct {
	lru *lru.Cache[string, template.HTML]
}

func newHeadCache() *headCache {
	c, err := lru.New[string, template.HTML](headEntries)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &headCache{lru: c}
}

// headData is what the head of a project page shows.
type headData struct {
	Project  headProject
	Topics   []string
	URL      string
	ReadCode bool
	Wiki     bool
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
		Topics: ph.Topics, URL: ph.URL, ReadCode: ph.ReadCode, Wiki: ph.Wiki}
	key := d.key()
	if html, ok := heads.lru.Get(key); ok {
		ph.HeadHTML = html
		return ph, nil
	}
	html, err := h.renderPart("project", "project_head_html", d)
	if err != nil {
		return ph, err
	}
	heads.lru.Add(key, html)
	ph.HeadHTML = html
	return ph, nil
}
