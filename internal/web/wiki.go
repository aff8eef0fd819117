package web

import (
	"html"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/projects"
	"quarry/internal/wikis"
)

// wikiHome is the page /-/wikis opens when it exists.
const wikiHome = "home"

// maxWikiSlug bounds a page's slug in a path.
const maxWikiSlug = 1024

// wikiVersionsPerPage is the length of a page's history's pages.
const wikiVersionsPerPage = 20

// maxWikiListed is how many pages the pages list shows.
const maxWikiListed = 1000

// wikiTab reports whether a project's wiki is open to the viewer of v, as
// auth's read_wiki decides once the project is seen: "disabled" to no
// one, "private" to its members (and administrators, who may administer
// it), else to whoever sees the project.
func wikiTab(v projects.View) bool {
	switch v.Project.Settings.WikiAccessLevel {
	case "disabled":
		return false
	case "private":
		return v.Access >= model.Guest || v.CanAdmin
	}
	return true
}

// wikiPageItem is a page as the pages list shows it.
type wikiPageItem struct {
	Title, Slug, Format, URL string
}

// wikiBody is the data of a wiki page, the pages list and a page's
// history.
type wikiBody struct {
	projectHead
	WikiURL  string // "/<project>/-/wikis"
	Page     wikiPageItem
	Content  template.HTML
	Version  string // the version shown, "" for the latest
	Latest   *wikiVersion
	Pages    []wikiPageItem
	More     bool
	Versions []wikiVersion
	PageNo   int
	Prev     string
	Next     string
}

// wikiVersion is a commit of a page's history.
type wikiVersion struct {
	ID, Short, Title, Author, URL string
	When, Ago                     string
}

// wiki is /-/wikis/…: the home page (or the pages list when there is no
// home page), /-/wikis/pages, /-/wikis/<slug> (?version_id= an older
// version) and /-/wikis/<slug>/history. The wiki's access level decides
// as the API's: a wiki closed to the viewer is a 404 for a signed-in user
// and a sign-in for an anonymous visitor.
func (h *Handler) wiki(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	v, ok := h.projectPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	o := model.OwnerRef{Ref: p.FullPath()}
	base := "/" + p.FullPath() + "/-/wikis"
	body := wikiBody{projectHead: head(v), WikiURL: base}
	rest = strings.TrimSuffix(rest, "/")
	if len(rest) > maxWikiSlug {
		h.notFound(w, r, a)
		return
	}
	switch {
	case rest == "":
		_, err := h.Wikis.Get(r.Context(), a, o, wikiHome, "", false)
		switch {
		case err == nil:
			http.Redirect(w, r, base+"/"+wikiHome, http.StatusFound)
		case isKind(err, model.KindNotFound):
			http.Redirect(w, r, base+"/pages", http.StatusFound)
		default:
			h.wikiFail(w, r, a, err)
		}
	case rest == "pages":
		h.wikiPages(w, r, a, o, body)
	case strings.HasSuffix(rest, "/history"):
		h.wikiHistory(w, r, a, o, strings.TrimSuffix(rest, "/history"), body)
	default:
		h.wikiPage(w, r, a, o, rest, body)
	}
}

// wikiFail answers an error of the wikis service inside a project the
// actor sees: a wiki closed to them is what fail makes of it (a sign-in
// for the anonymous), a missing page a 404 for anyone.
func (h *Handler) wikiFail(w http.ResponseWriter, r *http.Request, a auth.Actor, err error) {
	if isKind(err, model.KindForbidden) || isKind(err, model.KindUnauthorized) {
		h.fail(w, r, a, err)
		return
	}
	h.failIn(w, r, a, err)
}

func wikiItem(base string, pg wikis.Page) wikiPageItem {
	return wikiPageItem{Title: pg.Title, Slug: pg.Slug, Format: pg.Format, URL: base + "/" + escapePath(pg.Slug)}
}

func wikiCrumbs(p model.Project, base string, last ...crumb) []crumb {
	return append(append(projectCrumbs(p), crumb{Name: "Wiki", URL: base + "/pages"}), last...)
}

// wikiPage shows a page rendered: Markdown as the API renders it, other
// formats as text; ?version_id= shows an older version.
func (h *Handler) wikiPage(w http.ResponseWriter, r *http.Request, a auth.Actor, o model.OwnerRef, slug string, body wikiBody) {
	version := r.URL.Query().Get("version_id")
	if len(version) > 64 {
		h.notFound(w, r, a)
		return
	}
	pg, err := h.Wikis.Get(r.Context(), a, o, slug, version, false)
	if isKind(err, model.KindNotFound) && version == "" && path.Ext(slug) != "" {
		// No page: a file of the wiki (an attachment), as GitLab serves
		// them at the same paths.
		f, rd, ferr := h.Wikis.OpenFile(r.Context(), a, o, slug)
		if ferr == nil {
			defer rd.Close()
			h.writeRaw(w, r, a, f.Name, f.Size, f.BlobID, rd)
			return
		}
		if !isKind(ferr, model.KindNotFound) {
			err = ferr
		}
	}
	if err != nil {
		h.wikiFail(w, r, a, err)
		return
	}
	body.Page = wikiItem(body.WikiURL, pg)
	body.Version = version
	body.Content = renderWiki(pg, body.WikiURL)
	vs, _, err := h.Wikis.Versions(r.Context(), a, o, pg.Slug, model.Page{Number: 1, PerPage: 1})
	switch {
	case err == nil && len(vs) > 0:
		lv := versionItem(body.Page.URL, vs[0])
		body.Latest = &lv
	case err != nil && !isKind(err, model.KindNotFound):
		// An older version of a page since renamed or removed has no
		// latest version: anything else is an error.
		h.wikiFail(w, r, a, err)
		return
	}
	p := body.Project
	h.render(w, r, a, http.StatusOK, "wiki", view{Title: pg.Title + " · Wiki · " + p.FullName(),
		Crumbs: wikiCrumbs(p, body.WikiURL, crumb{Name: pg.Title}), Body: body})
}

// wikiPages lists the wiki's pages by path.
func (h *Handler) wikiPages(w http.ResponseWriter, r *http.Request, a auth.Actor, o model.OwnerRef, body wikiBody) {
	list, err := h.Wikis.List(r.Context(), a, o, false)
	if err != nil {
		h.wikiFail(w, r, a, err)
		return
	}
	if len(list) > maxWikiListed {
		list, body.More = list[:maxWikiListed], true
	}
	for _, pg := range list {
		body.Pages = append(body.Pages, wikiItem(body.WikiURL, pg))
	}
	p := body.Project
	h.render(w, r, a, http.StatusOK, "wiki_pages", view{Title: "Pages · Wiki · " + p.FullName(),
		Crumbs: wikiCrumbs(p, body.WikiURL, crumb{Name: "Pages"}), Body: body})
}

// wikiHistory lists the versions of a page, newest first, each linking
// to the page at that version.
func (h *Handler) wikiHistory(w http.ResponseWriter, r *http.Request, a auth.Actor, o model.OwnerRef, slug string, body wikiBody) {
	n, ok := h.pageNumber(w, r, a)
	if !ok {
		return
	}
	pg, err := h.Wikis.Get(r.Context(), a, o, slug, "", false)
	if err != nil {
		h.wikiFail(w, r, a, err)
		return
	}
	body.Page = wikiItem(body.WikiURL, pg)
	vs, info, err := h.Wikis.Versions(r.Context(), a, o, pg.Slug, model.Page{Number: n, PerPage: wikiVersionsPerPage})
	if err != nil {
		h.wikiFail(w, r, a, err)
		return
	}
	for _, v := range vs {
		body.Versions = append(body.Versions, versionItem(body.Page.URL, v))
	}
	body.PageNo = n
	body.Prev, body.Next = pager(r, n, info.HasMore)
	p := body.Project
	h.render(w, r, a, http.StatusOK, "wiki_history", view{Title: "History · " + pg.Title + " · Wiki · " + p.FullName(),
		Crumbs: wikiCrumbs(p, body.WikiURL, crumb{Name: pg.Title, URL: body.Page.URL}, crumb{Name: "History"}), Body: body})
}

func versionItem(pageURL string, v wikis.Version) wikiVersion {
	return wikiVersion{ID: v.ID, Short: v.ID[:min(8, len(v.ID))], Title: v.Title, Author: v.AuthorName,
		URL: pageURL + "?version_id=" + url.QueryEscape(v.ID), When: v.When.UTC().Format("2006-01-02T15:04:05Z"), Ago: ago(v.When)}
}

// renderWiki renders a page as the API's render_html does (sanitised),
// with its relative links made the wiki's: a link or an image names a
// page or a file of the wiki, taken from the page's folder.
func renderWiki(pg wikis.Page, base string) template.HTML {
	out := wikis.RenderHTML(pg.Format, pg.Content)
	if pg.Format != "markdown" {
		return template.HTML(out) //nolint:gosec // escaped text in <pre>
	}
	dir := path.Dir(pg.Slug)
	if dir == "." {
		dir = ""
	}
	out = relativeAttr.ReplaceAllStringFunc(out, func(m string) string {
		sub := relativeAttr.FindStringSubmatch(m)
		attr, val := sub[1], html.UnescapeString(sub[2])
		if val == "" || strings.HasPrefix(val, "/") || strings.HasPrefix(val, "#") || strings.Contains(strings.SplitN(val, "/", 2)[0], ":") {
			return m // absolute, a fragment of this page, or with a scheme
		}
		rest := ""
		if i := strings.IndexAny(val, "?#"); i >= 0 {
			val, rest = val[:i], val[i:]
		}
		val, err := url.PathUnescape(val)
		if err != nil {
			return m
		}
		target := path.Join("/", dir, val)[1:] // never above the wiki's root
		u := base
		if target != "" {
			u += "/" + escapePath(target)
		}
		return attr + `="` + html.EscapeString(u+rest) + `"`
	})
	// The output is bluemonday's, with URLs of this site escaped in.
	return template.HTML(out) //nolint:gosec
}
