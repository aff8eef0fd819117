package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/groups"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// projectListPage is the prelude of a project's list pages (merge
// requests, pipelines, jobs): the project the visitor may see, and the
// page asked for; false when the answer (404, sign-in, 400) is written.
func (h *Handler) projectListPage(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) (projects.View, int, bool) {
	v, err := h.resolveProject(r, a, full)
	if err != nil {
		h.fail(w, r, a, err)
		return projects.View{}, 0, false
	}
	n, ok := h.pageNumber(w, r, a)
	return v, n, ok
}

// pageNumber reads ?page= (1 when absent); ok is false, and a 400 page
// answered, when it is not a number from 1 to maxPageNumber.
func (h *Handler) pageNumber(w http.ResponseWriter, r *http.Request, a auth.Actor) (int, bool) {
	v := r.URL.Query().Get("page")
	if v == "" {
		return 1, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPageNumber {
		h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "page should be a number from 1 to "+strconv.Itoa(maxPageNumber))
		return 0, false
	}
	return n, true
}

// pager links the previous and next pages of a list at r's path, keeping
// the query's other parameters.
func pager(r *http.Request, n int, more bool) (prev, next string) {
	link := func(page int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(page))
		return r.URL.EscapedPath() + "?" + q.Encode()
	}
	if n > 1 {
		prev = link(n - 1)
	}
	if more {
		next = link(n + 1)
	}
	return prev, next
}

// groupItem is a group as the lists show one.
type groupItem struct {
	Name, FullName, FullPath, URL, Description, Visibility string
}

func groupItemOf(g model.Group) groupItem {
	return groupItem{Name: g.Name, FullName: g.FullName, FullPath: g.FullPath, URL: "/groups/" + g.FullPath,
		Description: g.Description, Visibility: string(g.Visibility)}
}

// groupsBody is the data of the explore groups list.
type groupsBody struct {
	Groups     []groupItem
	Search     string
	Page       int
	Prev, Next string
}

// exploreGroups is /explore/groups: every group the actor may see.
func (h *Handler) exploreGroups(w http.ResponseWriter, r *http.Request, a auth.Actor) {
	n, ok := h.pageNumber(w, r, a)
	if !ok {
		return
	}
	search := r.URL.Query().Get("filter")
	if len(search) > 255 {
		search = search[:255]
	}
	all := true
	in := groups.ListInput{AllAvailable: &all, Search: strings.TrimSpace(search), OrderBy: "name"}
	gs, info, err := h.Groups.List(r.Context(), a, in, model.Page{Number: n, PerPage: perPage})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body := groupsBody{Search: in.Search, Page: n}
	for _, g := range gs {
		body.Groups = append(body.Groups, groupItemOf(g))
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	h.render(w, r, a, http.StatusOK, "groups", view{Title: "Explore groups",
		Crumbs: []crumb{{Name: "Explore", URL: "/explore/projects"}, {Name: "Groups"}}, Body: body})
}

// groupBody is the data of a group's page.
type groupBody struct {
	Group      groupItem
	AvatarURL  string
	Subgroups  []groupItem
	MoreGroups bool
	Projects   []model.Project
	Page       int
	Prev, Next string
}

// maxSubgroups is how many subgroups a group's page lists.
const maxSubgroups = 100

// resolveGroup finds a group by its full path that the actor may see.
func (h *Handler) resolveGroup(r *http.Request, a auth.Actor, full string) (model.Group, error) {
	if len(full) > 1024 || full == "" {
		return model.Group{}, model.NotFound("Group")
	}
	g, _, err := h.Groups.Resolve(r.Context(), a, full)
	if err != nil {
		return g, err
	}
	if !strings.EqualFold(g.FullPath, full) {
		// Only full paths name groups here (not ids).
		return model.Group{}, model.NotFound("Group")
	}
	return g, nil
}

// group is /groups/<path> (and /<path>): a group's subgroups and
// projects, as the actor may see them.
func (h *Handler) group(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) {
	g, err := h.resolveGroup(r, a, full)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	h.groupPage(w, r, a, g)
}

func (h *Handler) groupPage(w http.ResponseWriter, r *http.Request, a auth.Actor, g model.Group) {
	n, ok := h.pageNumber(w, r, a)
	if !ok {
		return
	}
	body := groupBody{Group: groupItemOf(g), AvatarURL: avatarURL(g.Avatar), Page: n}
	subs, info, err := h.Groups.Subgroups(r.Context(), a, strconv.FormatInt(g.ID, 10), false,
		groups.ListInput{OrderBy: "name"}, model.Page{Number: 1, PerPage: maxSubgroups})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	for _, s := range subs {
		body.Subgroups = append(body.Subgroups, groupItemOf(s))
	}
	body.MoreGroups = info.HasMore
	var in projects.ListInput
	in.NamespaceID = g.ID
	in.OrderBy, in.Desc = "last_activity_at", true
	ps, pinfo, err := h.Projects.List(r.Context(), a, in, model.Page{Number: n, PerPage: perPage})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body.Projects = ps
	body.Prev, body.Next = pager(r, n, pinfo.HasMore)
	h.render(w, r, a, http.StatusOK, "group", view{Title: g.FullName, Crumbs: groupCrumbs(g.FullPath), Body: body})
}

// groupCrumbs are a group's ancestors and itself, each at its web URL.
func groupCrumbs(full string) []crumb {
	parts := strings.Split(full, "/")
	cs := make([]crumb, 0, len(parts))
	for i, part := range parts {
		cs = append(cs, crumb{Name: part, URL: "/groups/" + strings.Join(parts[:i+1], "/")})
	}
	return cs
}

// avatarURL is where an uploaded avatar is served, "" for none.
func avatarURL(stored string) string {
	if stored == "" {
		return ""
	}
	return "/uploads/-/system/" + escapePath(stored)
}

// userBody is the data of a user's profile.
type userBody struct {
	User       model.User
	AvatarURL  string
	Private    bool // a private profile the actor may not read
	Projects   []model.Project
	Page       int
	Prev, Next string
}

// namespace is /<name>: a user's profile, else a group's page.
func (h *Handler) namespace(w http.ResponseWriter, r *http.Request, a auth.Actor, name string) {
	if len(name) > 255 {
		h.fail(w, r, a, model.NotFound("User"))
		return
	}
	u, err := h.Users.ByIDOrUsername(r.Context(), a, name)
	if err == nil && strings.EqualFold(u.Username, name) {
		h.profile(w, r, a, u)
		return
	}
	if err != nil && !isKind(err, model.KindNotFound) {
		h.fail(w, r, a, err)
		return
	}
	h.group(w, r, a, name)
}

// profile is a user's page: name, username, avatar, bio and the personal
// projects the actor may see; of a private profile only the name,
// username and avatar (to others than the user and administrators).
func (h *Handler) profile(w http.ResponseWriter, r *http.Request, a auth.Actor, u model.User) {
	n, ok := h.pageNumber(w, r, a)
	if !ok {
		return
	}
	body := userBody{User: u, AvatarURL: avatarURL(u.Avatar), Page: n}
	if !auth.Can(a, auth.ReadUserProfile, auth.Resource{User: &u}) {
		// A private profile: who the user is, nothing of what they do.
		body.Private, body.User.Bio = true, ""
	} else {
		var in projects.ListInput
		in.UserRef = strconv.FormatInt(u.ID, 10)
		in.OrderBy, in.Desc = "last_activity_at", true
		ps, info, err := h.Projects.List(r.Context(), a, in, model.Page{Number: n, PerPage: perPage})
		if err != nil {
			h.fail(w, r, a, err)
			return
		}
		body.Projects = ps
		body.Prev, body.Next = pager(r, n, info.HasMore)
	}
	h.render(w, r, a, http.StatusOK, "user", view{Title: u.Name + " (@" + u.Username + ")",
		Crumbs: []crumb{{Name: u.Name, URL: "/" + url.PathEscape(u.Username)}}, Body: body})
}
