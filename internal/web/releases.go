package web

import (
	"html/template"
	"net/http"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/releases"
)

// releasesPerPage is the length of the releases list's pages.
const releasesPerPage = 20

// releaseItem is a release as its page and the list show it.
type releaseItem struct {
	Name, Tag, URL, TagURL string
	Description            template.HTML
	Author, AuthorURL      string
	Released, ReleasedAgo  string
	Commit                 *commitItem
	Links                  []releaseLinkItem
	Milestones             []string
}

type releaseLinkItem struct {
	Name, URL, Type string
}

// releasesBody is the data of the release pages.
type releasesBody struct {
	projectHead
	Release    releaseItem
	Releases   []releaseItem
	Page       int
	Prev, Next string
}

func (h *Handler) releaseItemOf(v releases.View) releaseItem {
	p := v.Project
	base := "/" + p.FullPath() + "/-/"
	it := releaseItem{Name: v.Name, Tag: v.Tag, URL: base + "releases/" + urlPathEscape(v.Tag), TagURL: base + "tree/" + escapePath(v.Tag),
		Released: v.ReleasedAt.UTC().Format("2006-01-02T15:04:05Z"), ReleasedAgo: ago(v.ReleasedAt)}
	if it.Name == "" {
		it.Name = v.Tag
	}
	if v.Description != "" {
		it.Description = renderMarkdown([]byte(v.Description), p.FullPath(), v.Tag, "")
	}
	if v.Author != nil {
		it.Author, it.AuthorURL = v.Author.Name, "/"+v.Author.Username
	}
	if v.Commit != nil {
		c := commitItemOf(p, *v.Commit)
		it.Commit = &c
	}
	for _, l := range v.Links {
		it.Links = append(it.Links, releaseLinkItem{Name: l.Name, URL: l.URL, Type: l.LinkType})
	}
	if v.CanReadMilestones {
		for _, m := range v.Milestones {
			it.Milestones = append(it.Milestones, m.Title)
		}
	}
	return it
}

// release is /-/releases (the project's releases, newest first) and
// /-/releases/<tag> (one release: its notes rendered, commit, asset
// links and milestones), as the releases API lets the viewer read them.
func (h *Handler) release(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	v, ok := h.projectPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	body := releasesBody{projectHead: head(v)}
	list := "/" + p.FullPath() + "/-/releases"
	// A release closed to the viewer (the project's releases feature) is
	// what fail makes of it; a missing one is a 404 for anyone.
	relFail := func(err error) {
		if isKind(err, model.KindForbidden) || isKind(err, model.KindUnauthorized) {
			h.fail(w, r, a, err)
			return
		}
		h.failIn(w, r, a, err)
	}
	if rest == "" {
		n, ok := h.pageNumber(w, r, a)
		if !ok {
			return
		}
		vs, info, err := h.Releases.List(r.Context(), a, p.FullPath(), releases.ListInput{}, model.Page{Number: n, PerPage: releasesPerPage})
		if err != nil {
			relFail(err)
			return
		}
		for _, rv := range vs {
			body.Releases = append(body.Releases, h.releaseItemOf(rv))
		}
		body.Page = n
		body.Prev, body.Next = pager(r, n, info.HasMore)
		h.render(w, r, a, http.StatusOK, "releases", view{Title: "Releases · " + p.FullName(), Crumbs: refPageCrumbs(p, "Releases"), Body: body})
		return
	}
	if len(rest) > releases.MaxTagName || strings.HasPrefix(rest, "/") {
		h.notFound(w, r, a)
		return
	}
	rv, err := h.Releases.Get(r.Context(), a, p.FullPath(), rest)
	if err != nil {
		relFail(err)
		return
	}
	body.Release = h.releaseItemOf(rv)
	h.render(w, r, a, http.StatusOK, "release", view{Title: body.Release.Name + " · Releases · " + p.FullName(),
		Crumbs: append(projectCrumbs(p), crumb{Name: "Releases", URL: list}, crumb{Name: body.Release.Name}), Body: body})
}
