package web

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/projects"
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
	// EditURL is the release's edit form, for a viewer who may update
	// the release ("" otherwise).
	EditURL string
}

type releaseLinkItem struct {
	Name, URL, Type string
}

// releasesBody is the data of the release pages.
type releasesBody struct {
	projectHead
	Flash      string
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
	if v.Editable {
		it.EditURL = it.URL + "/edit"
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
	if tag, ok := editTag(r, rest); ok {
		h.releaseEditPage(w, r, a, v, tag)
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
	if c, err := r.Cookie(flashCookie); err == nil {
		body.Flash = releaseFlashes[c.Value]
		if body.Flash != "" {
			h.clearFlash(w)
			w.Header().Set("Cache-Control", "no-store")
		}
	}
	h.render(w, r, a, http.StatusOK, "release", view{Title: body.Release.Name + " · Releases · " + p.FullName(),
		Crumbs: append(projectCrumbs(p), crumb{Name: "Releases", URL: list}, crumb{Name: body.Release.Name}), Body: body})
}

// releaseFlashes are the messages the release page shows after its edit
// form was saved (the flash cookie holds the key, never request text).
var releaseFlashes = map[string]string{
	"release_updated": "The release was saved.",
}

// maxReleaseFormBytes bounds the edit form: the notes (the service's own
// bound) and room for the other fields.
const maxReleaseFormBytes = releases.MaxDescription + 64<<10

// releasedAtLayout is how the form shows released_at (UTC, to the
// second: an <input type="datetime-local" step="1">).
const releasedAtLayout = "2006-01-02T15:04:05"

// editTag tells whether rest (what follows /-/releases/) names a
// release's edit page, and of which tag: the path ends in "/edit" with a
// real slash (a tag "x/edit" is escaped, x%2Fedit, in the release's
// URLs, so its own page stays its own).
func editTag(r *http.Request, rest string) (string, bool) {
	tag, ok := strings.CutSuffix(rest, "/edit")
	if !ok || !strings.HasSuffix(r.URL.EscapedPath(), "/edit") {
		return "", false
	}
	return tag, true
}

// releaseEditBody is the data of a release's edit form.
type releaseEditBody struct {
	projectHead
	Release    releaseItem
	Action     string // where the form posts
	Alert      string // why the last save failed
	Name       string
	Notes      string
	ReleasedAt string
	// Milestones are shown (and saved) only for a viewer who reads the
	// project's milestones, as the API shows them; one empty field more
	// adds one.
	ShowMilestones bool
	Milestones     []string
	Links          []releaseEditLink
	NewLink        releaseLinkItem
	LinkTypes      []string
}

// releaseEditLink is an asset link of the form, with its remove box.
type releaseEditLink struct {
	ID     int64
	Name   string
	URL    string
	Type   string
	Remove bool
}

// releaseEditPage is /-/releases/<tag>/edit: the form of a release's
// title, notes, release date, milestones and asset links, for a viewer
// the releases service lets update it (its _links.edit_url). Anyone else
// who may read the release gets a 404 (a sign-in when anonymous), as
// GitLab hides the page.
func (h *Handler) releaseEditPage(w http.ResponseWriter, r *http.Request, a auth.Actor, pv projects.View, tag string) {
	rv, ok := h.editableRelease(w, r, a, pv, tag)
	if !ok {
		return
	}
	body := h.releaseEditOf(pv, rv)
	h.renderReleaseEdit(w, r, a, http.StatusOK, body)
}

// editableRelease reads the release of tag for its edit form and checks
// that a may update it; ok is false, and the page answered, otherwise.
func (h *Handler) editableRelease(w http.ResponseWriter, r *http.Request, a auth.Actor, pv projects.View, tag string) (releases.View, bool) {
	if tag == "" || len(tag) > releases.MaxTagName || strings.HasPrefix(tag, "/") {
		h.notFound(w, r, a)
		return releases.View{}, false
	}
	rv, err := h.Releases.Get(r.Context(), a, pv.Project.FullPath(), tag)
	if err != nil {
		if isKind(err, model.KindForbidden) || isKind(err, model.KindUnauthorized) {
			h.fail(w, r, a, err)
		} else {
			h.failIn(w, r, a, err)
		}
		return rv, false
	}
	if !rv.Editable {
		h.fail(w, r, a, model.Forbidden(""))
		return rv, false
	}
	return rv, true
}

func (h *Handler) releaseEditOf(pv projects.View, rv releases.View) releaseEditBody {
	it := h.releaseItemOf(rv)
	b := releaseEditBody{projectHead: head(pv), Release: it, Action: it.URL + "/edit", Name: rv.Name, Notes: rv.Description,
		ReleasedAt: rv.ReleasedAt.UTC().Format(releasedAtLayout), ShowMilestones: rv.CanReadMilestones,
		NewLink: releaseLinkItem{Type: "other"}, LinkTypes: model.ReleaseLinkTypes}
	if rv.CanReadMilestones {
		for _, m := range rv.Milestones {
			b.Milestones = append(b.Milestones, m.Title)
		}
	}
	for _, l := range rv.Links {
		b.Links = append(b.Links, releaseEditLink{ID: l.ID, Name: l.Name, URL: l.URL, Type: l.LinkType})
	}
	return b
}

func (h *Handler) renderReleaseEdit(w http.ResponseWriter, r *http.Request, a auth.Actor, status int, b releaseEditBody) {
	p := b.Project
	w.Header().Set("Cache-Control", "no-store")
	h.render(w, r, a, status, "release_edit", view{Title: "Edit " + b.Release.Name + " · Releases · " + p.FullName(),
		Crumbs: append(projectCrumbs(p), crumb{Name: "Releases", URL: "/" + p.FullPath() + "/-/releases"},
			crumb{Name: b.Release.Name, URL: b.Release.URL}, crumb{Name: "Edit"}),
		Body: b})
}

// releasePost saves a release's edit form (POST /-/releases/<tag>/edit)
// through the releases service, as PUT /projects/:id/releases/:tag_name
// and the asset links API would: the release's fields first, then the
// links checked for removal, then the new link. It reports whether the
// path was the form's.
func (h *Handler) releasePost(w http.ResponseWriter, r *http.Request, a auth.Actor) bool {
	full, action, ok := strings.Cut(strings.Trim(r.URL.Path, "/"), "/-/")
	if !ok {
		return false
	}
	rest, ok := strings.CutPrefix(action, "releases/")
	if !ok {
		return false
	}
	tag, ok := editTag(r, rest)
	if !ok {
		return false
	}
	if full == "" || strings.Contains(full, "//") || !strings.Contains(full, "/") {
		h.notFound(w, r, a)
		return true
	}
	if !a.SignedIn() {
		signInThen(w, r, "/"+full+"/-/releases/"+urlPathEscape(tag)+"/edit")
		return true
	}
	if !h.readForm(w, r, a, maxReleaseFormBytes) {
		return true
	}
	pv, ok := h.projectPage(w, r, a, full)
	if !ok {
		return true
	}
	rv, ok := h.editableRelease(w, r, a, pv, tag)
	if !ok {
		return true
	}
	f := r.PostForm
	body := h.releaseEditOf(pv, rv)
	// What was sent is shown again when the save fails; a field the
	// post leaves out stays as it is.
	var in releases.Input
	if f.Has("name") {
		body.Name = f.Get("name")
		name := body.Name
		in.Name = &name
	}
	if f.Has("description") {
		body.Notes = strings.ReplaceAll(f.Get("description"), "\r\n", "\n")
		notes := body.Notes
		in.Description = &notes
	}
	remove := map[int64]bool{}
	for _, s := range f["remove_link"] {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "The form could not be read.")
			return true
		}
		remove[id] = true
	}
	for i := range body.Links {
		body.Links[i].Remove = remove[body.Links[i].ID]
	}
	newLink := releaseLinkItem{Name: strings.TrimSpace(f.Get("link_name")), URL: strings.TrimSpace(f.Get("link_url")), Type: f.Get("link_type")}
	if newLink.Type == "" {
		newLink.Type = "other"
	}
	body.NewLink = newLink
	invalid := func(msg string) bool {
		body.Alert = msg
		h.renderReleaseEdit(w, r, a, http.StatusBadRequest, body)
		return true
	}
	if s := strings.TrimSpace(f.Get("released_at")); s != "" {
		body.ReleasedAt = s
		t, ok := parseReleasedAt(s)
		if !ok {
			return invalid("Released at is not a date and time (YYYY-MM-DDTHH:MM:SS, UTC).")
		}
		if !t.Equal(rv.ReleasedAt.UTC().Truncate(time.Second)) {
			in.ReleasedAt = &t
		}
	}
	if f.Get("milestones_shown") == "1" && rv.CanReadMilestones {
		titles := []string{}
		seen := map[string]bool{}
		for _, m := range f["milestones"] {
			if m = strings.TrimSpace(m); m != "" && !seen[m] {
				seen[m] = true
				titles = append(titles, m)
			}
		}
		body.Milestones = titles
		in.Milestones = &titles
	}
	addLink := newLink.Name != "" || newLink.URL != ""
	if addLink {
		// The link is checked before anything is saved, so a bad one
		// changes nothing; its uniqueness is the service's to tell.
		l := model.ReleaseLink{Name: newLink.Name, URL: newLink.URL, LinkType: newLink.Type}
		if msg, _ := releases.CheckLink(l); msg != "" {
			return invalid("The asset link was not added: " + msg + ".")
		}
	}
	ctx, p := r.Context(), pv.Project.FullPath()
	if _, err := h.Releases.Update(ctx, a, p, tag, in); err != nil {
		return h.releaseRefused(w, r, a, body, err, "")
	}
	for _, l := range rv.Links {
		if !remove[l.ID] {
			continue
		}
		if _, err := h.Releases.DeleteLink(ctx, a, p, tag, l.ID); err != nil && !isKind(err, model.KindNotFound) {
			return h.releaseRefused(w, r, a, body, err, "The release was saved, but a link was not removed: ")
		}
	}
	if addLink {
		in := releases.LinkInput{Name: &newLink.Name, URL: &newLink.URL, LinkType: &newLink.Type}
		if _, err := h.Releases.CreateLink(ctx, a, p, tag, in); err != nil {
			return h.releaseRefused(w, r, a, body, err, "The release was saved, but the asset link was not added: ")
		}
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "release_updated", Path: "/", MaxAge: 60,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, body.Release.URL, http.StatusSeeOther)
	return true
}

// releaseRefused answers a save the service refused: what the viewer may
// not do (any more) is the page's 404, anything else the form again with
// the service's message (after prefix, when part was saved).
func (h *Handler) releaseRefused(w http.ResponseWriter, r *http.Request, a auth.Actor, body releaseEditBody, err error, prefix string) bool {
	var me *model.Error
	// A release gone meanwhile is the page's 404; a tag gone is the
	// service's "Tag does not exist", said on the form.
	if !asError(err, &me) || me.Kind == model.KindForbidden || me.Kind == model.KindUnauthorized ||
		(me.Kind == model.KindNotFound && strings.HasPrefix(me.Message, "404")) {
		h.fail(w, r, a, err)
		return true
	}
	msg := strings.TrimSpace(me.Message)
	if msg == "" {
		msg = "The release could not be saved."
	}
	body.Alert = prefix + msg
	h.renderReleaseEdit(w, r, a, actionStatus(me.Kind), body)
	return true
}

// parseReleasedAt reads the form's released_at: a datetime-local value
// (to the minute or second) in UTC, or an RFC 3339 time.
func parseReleasedAt(s string) (time.Time, bool) {
	for _, layout := range []string{releasedAtLayout, "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, true
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}
