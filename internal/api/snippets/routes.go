// Package snippets serves snippets: personal ones under /snippets and
// projects' under /projects/:id/snippets (list, read, create, edit,
// delete, raw content, user agent details), and the raw web paths their
// raw_url and files[].raw_url point at (/-/snippets/:id/raw[/:ref/:path]
// and the same under a project's path).
package snippets

import (
	"net/http"
	"strconv"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/snippets"
)

// Handlers answer the snippets area.
type Handlers struct {
	snippets *snippets.Service
	r        *entity.Renderer
}

// New returns the area.
func New(s *snippets.Service, r *entity.Renderer) *Handlers { return &Handlers{snippets: s, r: r} }

// where is the route a call names its snippet through, and the snippet's
// id path value.
type where struct {
	w  func(c *endpoint.Call) snippets.Where
	id string
}

var (
	personal  = where{w: func(*endpoint.Call) snippets.Where { return snippets.Where{} }, id: "id"}
	inProject = where{w: func(c *endpoint.Call) snippets.Where { return snippets.Where{Project: c.Path("id")} }, id: "snippet_id"}
)

// Routes are the area's rows. As GitLab's lib/api/snippets.rb: the lists,
// creation, edits, deletion and user agent details authenticate first,
// reads of one snippet do not. lib/api/project_snippets.rb resolves the
// project and checks its snippets feature before it authenticates, so
// its rows take anonymous callers and the service refuses them (401)
// after those checks.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, carrying := endpoint.Row, endpoint.Parsed, endpoint.Carrying(endpoint.ContentSnippet)
	public, token, api := endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	return []endpoint.Route{
		row("GET", "/snippets", token, api, parsed, func(c *endpoint.Call) error { return h.list(c, snippets.Mine) }),
		row("POST", "/snippets", token, api, carrying, func(c *endpoint.Call) error { return h.create(c, personal) }),
		row("GET", "/snippets/public", token, api, parsed, func(c *endpoint.Call) error { return h.list(c, snippets.Public) }),
		row("GET", "/snippets/all", token, api, parsed, func(c *endpoint.Call) error { return h.list(c, snippets.All) }),
		row("GET", "/snippets/{id}", public, api, parsed, func(c *endpoint.Call) error { return h.get(c, personal) }),
		row("PUT", "/snippets/{id}", token, api, carrying, func(c *endpoint.Call) error { return h.update(c, personal) }),
		row("DELETE", "/snippets/{id}", token, api, parsed, func(c *endpoint.Call) error { return h.delete(c, personal) }),
		row("GET", "/snippets/{id}/raw", public, api, parsed, func(c *endpoint.Call) error { return h.raw(c, personal) }),
		row("GET", "/snippets/{id}/files/{ref}/{file_path}/raw", public, api, parsed, func(c *endpoint.Call) error { return h.fileRaw(c, personal) }),
		row("GET", "/snippets/{id}/user_agent_detail", token, api, parsed, func(c *endpoint.Call) error { return h.userAgent(c, personal) }),

		row("GET", "/projects/{id}/snippets", public, api, parsed, func(c *endpoint.Call) error { return h.list(c, snippets.OfProject) }),
		row("POST", "/projects/{id}/snippets", public, api, carrying, func(c *endpoint.Call) error { return h.create(c, inProject) }),
		row("GET", "/projects/{id}/snippets/{snippet_id}", public, api, parsed, func(c *endpoint.Call) error { return h.get(c, inProject) }),
		row("PUT", "/projects/{id}/snippets/{snippet_id}", public, api, carrying, func(c *endpoint.Call) error { return h.update(c, inProject) }),
		row("DELETE", "/projects/{id}/snippets/{snippet_id}", public, api, parsed, func(c *endpoint.Call) error { return h.delete(c, inProject) }),
		row("GET", "/projects/{id}/snippets/{snippet_id}/raw", public, api, parsed, func(c *endpoint.Call) error { return h.raw(c, inProject) }),
		row("GET", "/projects/{id}/snippets/{snippet_id}/files/{ref}/{file_path}/raw", public, api, parsed,
			func(c *endpoint.Call) error { return h.fileRaw(c, inProject) }),
		row("GET", "/projects/{id}/snippets/{snippet_id}/user_agent_detail", public, api, parsed,
			func(c *endpoint.Call) error { return h.userAgent(c, inProject) }),
	}
}

// visibilities are the values of visibility.
var visibilities = []string{string(model.Private), string(model.Internal), string(model.Public)}

// text reads a string parameter that must be one (Grape refuses a list or
// a hash for a String); ok is false when it was not sent (or null).
func text(p *endpoint.Params, key string) (string, bool) {
	if p.IsList(key) {
		p.Fail("%s is invalid", key)
		return "", false
	}
	return p.String(key)
}

// textPtr is text as a pointer, nil when not sent.
func textPtr(p *endpoint.Params, key string) *string {
	if v, ok := text(p, key); ok {
		return &v
	}
	return nil
}

// notBlank records Grape's allow_blank: false for a sent value.
func notBlank(p *endpoint.Params, key string, v *string) {
	if v != nil && strings.TrimSpace(*v) == "" {
		p.Fail("%s is empty", key)
	}
}

func (h *Handlers) list(c *endpoint.Call, scope snippets.Scope) error {
	in := snippets.ListInput{Scope: scope}
	in.CreatedAfter, _ = c.P.Time("created_after")
	in.CreatedBefore, _ = c.P.Time("created_before")
	if scope == snippets.OfProject {
		in.Project = c.Path("id")
	}
	if scope == snippets.All {
		in.Storage, _ = text(c.P, "repository_storage")
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.snippets.List(c.Ctx(), c.Actor, in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Snippet, len(list))
	for i := range list {
		out[i] = h.r.Snippet(list[i], c.Actor.Admin())
	}
	return c.List(pg, info, out)
}

func (h *Handlers) get(c *endpoint.Call, at where) error {
	id, err := c.PathID(at.id)
	if err != nil {
		return err
	}
	v, err := h.snippets.Get(c.Ctx(), c.Actor, at.w(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Snippet(v, c.Actor.Admin()))
}

// content reads the legacy content (or its old name code, on project
// routes): nil when neither was sent.
func content(p *endpoint.Params, project bool) *string {
	if project && p.Has("code") {
		if p.Has("content") {
			p.Fail("content, code are mutually exclusive")
		}
		v := textPtr(p, "code")
		notBlank(p, "code", v)
		return v
	}
	v := textPtr(p, "content")
	notBlank(p, "content", v)
	return v
}

// files reads files[]: JSON objects, parsed by the service's rules.
func files(p *endpoint.Params, update bool) ([]snippets.Action, error) {
	values, nested := p.Values("files")
	if len(values) > 0 && !nested {
		return nil, model.Param("files is invalid")
	}
	return snippets.ParseFiles(values, update)
}

func (h *Handlers) create(c *endpoint.Call, at where) error {
	p := c.P
	project := at.id == inProject.id
	p.Require("title")
	title, _ := text(p, "title")
	if p.Has("title") && !p.IsNull("title") {
		notBlank(p, "title", &title)
	}
	in := snippets.CreateInput{Title: title, Description: textPtr(p, "description")}
	if v, ok := p.Enum("visibility", visibilities...); ok {
		in.Visibility = model.Visibility(v)
	}
	hasFiles, hasContent := p.Has("files"), p.Has("content") || (project && p.Has("code"))
	code := content(p, project)
	switch {
	case hasFiles && hasContent:
		p.Fail("files, content are mutually exclusive")
	case !hasFiles && !hasContent:
		p.Fail("files, content are missing, exactly one parameter must be provided")
	case hasContent:
		p.Require("file_name")
		name, _ := text(p, "file_name")
		if code != nil {
			in.Files = []snippets.Action{{Kind: "create", Path: name, Content: code}}
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	if hasFiles {
		var err error
		if in.Files, err = files(p, false); err != nil {
			return err
		}
	}
	if ua := userAgent(c.R.UserAgent()); ua != "" {
		in.Agent = &model.SnippetUserAgent{UserAgent: ua, IPAddress: c.ClientIP()}
	}
	v, err := h.snippets.Create(c.Ctx(), c.Actor, at.w(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Snippet(v, c.Actor.Admin()))
}

// maxUserAgent bounds the user agent a snippet keeps.
const maxUserAgent = 1024

// userAgent is what a request says of itself, fit to be stored: valid
// UTF-8 without NUL, at most maxUserAgent bytes.
func userAgent(ua string) string {
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
	}
	return strings.ToValidUTF8(strings.ReplaceAll(ua, "\x00", ""), "")
}

func (h *Handlers) update(c *endpoint.Call, at where) error {
	p := c.P
	project := at.id == inProject.id
	id, err := c.PathID(at.id)
	if err != nil {
		return err
	}
	keys := []string{"content", "description", "files", "file_name", "title", "visibility"}
	if project {
		keys = append(keys, "code")
	}
	p.AtLeastOneOf(keys...)
	in := snippets.UpdateInput{Title: textPtr(p, "title"), Description: textPtr(p, "description"), FileName: textPtr(p, "file_name")}
	notBlank(p, "title", in.Title)
	in.Content = content(p, project)
	if v, ok := p.Enum("visibility", visibilities...); ok {
		vis := model.Visibility(v)
		in.Visibility = &vis
	}
	hasFiles := p.Has("files")
	if hasFiles && (p.Has("content") || (project && p.Has("code"))) {
		p.Fail("files, content are mutually exclusive")
	}
	if hasFiles && p.Has("file_name") {
		p.Fail("files, file_name are mutually exclusive")
	}
	if err := p.Err(); err != nil {
		return err
	}
	if hasFiles {
		if in.Files, err = files(p, true); err != nil {
			return err
		}
		if in.Files == nil {
			in.Files = []snippets.Action{}
		}
	}
	v, err := h.snippets.Update(c.Ctx(), c.Actor, at.w(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Snippet(v, c.Actor.Admin()))
}

func (h *Handlers) delete(c *endpoint.Call, at where) error {
	id, err := c.PathID(at.id)
	if err != nil {
		return err
	}
	if err := h.snippets.Delete(c.Ctx(), c.Actor, at.w(c), id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) raw(c *endpoint.Call, at where) error {
	id, err := c.PathID(at.id)
	if err != nil {
		return err
	}
	f, rd, err := h.snippets.Raw(c.Ctx(), c.Actor, at.w(c), id)
	if err != nil {
		return err
	}
	defer rd.Close()
	return c.Stream(f.Name, f.Size, rd)
}

func (h *Handlers) fileRaw(c *endpoint.Call, at where) error {
	id, err := c.PathID(at.id)
	if err != nil {
		return err
	}
	path := c.Path("file_path")
	if !snippets.ValidPath(path) {
		return model.Param("file_path should be a valid file path")
	}
	f, rd, err := h.snippets.RawFile(c.Ctx(), c.Actor, at.w(c), id, c.Path("ref"), path)
	if err != nil {
		return err
	}
	defer rd.Close()
	return c.Stream(f.Name, f.Size, rd)
}

func (h *Handlers) userAgent(c *endpoint.Call, at where) error {
	id, err := c.PathID(at.id)
	if err != nil {
		return err
	}
	d, err := h.snippets.UserAgent(c.Ctx(), c.Actor, at.w(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.UserAgentDetail(d))
}

// WebRaw serves the raw web paths of snippets, the raw_url of a snippet
// and of its files: /-/snippets/:id/raw, /-/snippets/:id/raw/:ref/:path
// and the same under a project's full path. They authenticate as the API
// does (PRIVATE-TOKEN, private_token, Authorization: Bearer) and answer
// what the API's raw endpoints answer. Match tells the paths it serves.
func (h *Handlers) WebRaw(site *endpoint.Site) http.Handler {
	first := site.Handler(endpoint.Row("GET", "/-/snippets/{id}/raw", endpoint.Public, endpoint.ScopeRepoRead, endpoint.Parsed,
		func(c *endpoint.Call) error { return h.raw(c, webWhere) }))
	file := site.Handler(endpoint.Row("GET", "/-/snippets/{id}/raw/{ref}/{file_path}", endpoint.Public, endpoint.ScopeRepoRead, endpoint.Parsed,
		func(c *endpoint.Call) error { return h.fileRaw(c, webWhere) }))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		project, id, ref, fp, ok := MatchRaw(r.URL.Path)
		if !ok {
			endpoint.WriteJSON(w, http.StatusNotFound, endpoint.NotFoundBody)
			return
		}
		r.SetPathValue("project", project)
		r.SetPathValue("id", id)
		if ref == "" {
			first.ServeHTTP(w, r)
			return
		}
		r.SetPathValue("ref", ref)
		r.SetPathValue("file_path", fp)
		file.ServeHTTP(w, r)
	})
}

// webWhere names the snippet of a raw web path: by its project's full
// path, or personal.
var webWhere = where{w: func(c *endpoint.Call) snippets.Where { return snippets.Where{Project: c.Path("project")} }, id: "id"}

// MatchRaw splits a raw web path of a snippet: the project's full path
// ("" for a personal snippet), the snippet's id, and for one file the ref
// and the file's path; ok is false for any other path.
func MatchRaw(path string) (project, id, ref, file string, ok bool) {
	before, after, found := strings.Cut(path, "/-/snippets/")
	if !found {
		return "", "", "", "", false
	}
	project = strings.Trim(before, "/")
	if before != "" && (!strings.HasPrefix(before, "/") || !strings.Contains(project, "/")) {
		// A project's path always has its namespace.
		return "", "", "", "", false
	}
	id, rest, _ := strings.Cut(after, "/")
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
		return "", "", "", "", false
	}
	if rest == "raw" {
		return project, id, "", "", true
	}
	rest, isFile := strings.CutPrefix(rest, "raw/")
	if !isFile {
		return "", "", "", "", false
	}
	ref, file, _ = strings.Cut(rest, "/")
	if ref == "" || file == "" {
		return "", "", "", "", false
	}
	return project, id, ref, file, true
}
