package web

import (
	"bytes"
	"errors"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/projects"
	"quarry/internal/repofiles"
	"quarry/internal/wikis"
)

// perPage is the length of the project lists' pages.
const perPage = 20

// maxPageNumber bounds ?page= (the lists' offset limit is far beyond).
const maxPageNumber = 2500

// listBody is the data of the project lists (home and explore).
type listBody struct {
	Heading    string
	Projects   []model.Project
	Search     string
	Page       int
	Prev, Next string // links, "" when none
	Explore    bool   // the explore list (else the user's own)
}

// home is the signed-in user's projects, or explore for anyone else.
func (h *Handler) home(w http.ResponseWriter, r *http.Request, a auth.Actor) {
	if !a.SignedIn() {
		h.explore(w, r, a)
		return
	}
	var in projects.ListInput
	in.Membership = true
	h.projectList(w, r, a, in, listBody{Heading: "Your projects"}, []crumb{{Name: "Your projects"}})
}

// explore lists the projects the actor may see, by latest activity.
func (h *Handler) explore(w http.ResponseWriter, r *http.Request, a auth.Actor) {
	var in projects.ListInput
	search := r.URL.Query().Get("name")
	if len(search) > 255 {
		search = search[:255]
	}
	in.Search = strings.TrimSpace(search)
	h.projectList(w, r, a, in, listBody{Heading: "Explore projects", Search: in.Search, Explore: true},
		[]crumb{{Name: "Explore", URL: "/explore/projects"}, {Name: "Projects"}})
}

func (h *Handler) projectList(w http.ResponseWriter, r *http.Request, a auth.Actor, in projects.ListInput, body listBody, crumbs []crumb) {
	n := 1
	if v := r.URL.Query().Get("page"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxPageNumber {
			h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "page should be a number from 1 to "+strconv.Itoa(maxPageNumber))
			return
		}
	}
	in.OrderBy, in.Desc = "last_activity_at", true
	ps, info, err := h.Projects.List(r.Context(), a, in, model.Page{Number: n, PerPage: perPage})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body.Projects, body.Page = ps, n
	link := func(page int) string {
		q := url.Values{}
		if body.Search != "" {
			q.Set("name", body.Search)
		}
		q.Set("page", strconv.Itoa(page))
		return r.URL.Path + "?" + q.Encode()
	}
	if n > 1 {
		body.Prev = link(n - 1)
	}
	if info.HasMore {
		body.Next = link(n + 1)
	}
	h.render(w, r, a, http.StatusOK, "projects", view{Title: body.Heading, Crumbs: crumbs, Search: body.Search, Body: body})
}

// projectHead is what every page of a project shows above its own part.
type projectHead struct {
	Project  model.Project
	Topics   []string
	URL      string // "/group/project"
	ReadCode bool
	Wiki     bool // the wiki is open to the viewer (its tab)
	// Issues: the issues are open to the viewer (its tab, with the
	// count of open issues the viewer may see, OpenIssues).
	Issues     bool
	OpenIssues int
	// HeadHTML is the head rendered (withHead), "" for the template to
	// render it.
	HeadHTML template.HTML
}

// resolveProject finds a project the actor may see, as the API would,
// with what the page head shows.
func (h *Handler) resolveProject(r *http.Request, a auth.Actor, full string) (projects.View, error) {
	v, err := h.resolveBare(r, a, full)
	if err != nil {
		return v, err
	}
	return h.Projects.PageView(r.Context(), a, v.Project, v.Access)
}

// resolveBare is resolveProject for a page without the project's head:
// the view holds the project and the actor's access only (no topics,
// no flags).
func (h *Handler) resolveBare(r *http.Request, a auth.Actor, full string) (projects.View, error) {
	if len(full) > 1024 {
		return projects.View{}, model.NotFound("Project")
	}
	p, acc, err := h.Projects.Resolve(r.Context(), a, full)
	if err != nil {
		return projects.View{}, err
	}
	if p.FullPath() != full && !strings.EqualFold(p.FullPath(), full) {
		// Only full paths name projects here (not ids).
		return projects.View{}, model.NotFound("Project")
	}
	return projects.View{Project: p, Access: acc}, nil
}

// projectPage resolves the project of a page; ok is false, and the page
// answered (a 404 or a sign-in), when the actor may not see it.
func (h *Handler) projectPage(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) (projects.View, bool) {
	v, err := h.resolveProject(r, a, full)
	if err != nil {
		h.fail(w, r, a, err)
		return v, false
	}
	return v, true
}

// refPath resolves the project of a page and splits rest into a ref and
// a file's path (not empty), with the project's files (the ref pinned);
// ok is false, and the page answered, when the project may not be seen
// or the ref does not exist (a 404 for anyone who may see the project).
// A page without the project's head (bare) gets a view of the project
// and the actor's access only (resolveBare).
func (h *Handler) refPath(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string, bare bool) (v projects.View, files repofiles.Project, ref, file string, ok bool) {
	var err error
	if bare {
		v, err = h.resolveBare(r, a, full)
	} else {
		v, err = h.resolveProject(r, a, full)
	}
	if err != nil {
		h.fail(w, r, a, err)
		return v, files, "", "", false
	}
	files = h.files(a, v)
	ref, file, _, err = files.SplitRef(r.Context(), rest, maxRefSegments)
	if err == nil && file == "" {
		err = model.NotFound("File")
	}
	if err != nil {
		h.failIn(w, r, a, err)
		return v, files, "", "", false
	}
	return v, files, ref, file, true
}

// fileAt is refPath with the file found at the ref: the prelude of the
// blob and blame pages.
func (h *Handler) fileAt(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) (v projects.View, ref, file string, f repofiles.File, ok bool) {
	var files repofiles.Project
	if v, files, ref, file, ok = h.refPath(w, r, a, full, rest, false); !ok {
		return v, "", "", f, false
	}
	f, err := files.Stat(r.Context(), file, ref)
	if err != nil {
		h.failIn(w, r, a, err)
		return v, "", "", f, false
	}
	return v, ref, file, f, true
}

// files are the files of a page's project, resolved once for the
// request.
func (h *Handler) files(a auth.Actor, v projects.View) repofiles.Project {
	return h.Files.In(a, v.Project, v.Access)
}

func head(v projects.View) projectHead {
	return projectHead{Project: v.Project, Topics: v.Topics, URL: "/" + v.Project.FullPath(), ReadCode: v.CanReadCode, Wiki: wikiTab(v),
		Issues: issuesTab(v), OpenIssues: openIssues(v)}
}

// projectCrumbs are the namespace's groups (or user) and the project,
// each linked at its web URL.
func projectCrumbs(p model.Project) []crumb {
	var cs []crumb
	parts := strings.Split(p.Namespace.FullPath, "/")
	for i, part := range parts {
		u := "/" + strings.Join(parts[:i+1], "/")
		if p.Namespace.Kind == model.NamespaceGroup {
			u = "/groups" + u
		}
		cs = append(cs, crumb{Name: part, URL: u})
	}
	return append(cs, crumb{Name: p.Name, URL: "/" + p.FullPath()})
}

// overviewBody is the data of a project's overview.
type overviewBody struct {
	projectHead
	HTTPClone, SSHClone string
	Ref                 string
	LastCommit          *commitLine
	TreeList            template.HTML // the root folder
	Readme              template.HTML
	ReadmeName          string
	Languages           []language
}

// commitLine is a commit as the pages list one.
type commitLine struct {
	ID, Short, Title, Author string
	When                     string // RFC 3339
	Ago                      string
}

// treeEntry is a file or folder of a listing.
type treeEntry struct {
	Name, Path, Type, URL string
	ID                    string // the blob's or tree's object id
}

// project is a project's overview: description, topics, clone URLs,
// default branch, last commit, counts, the root folder and the README.
func (h *Handler) project(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) {
	v, err := h.resolveProject(r, a, full)
	if isKind(err, model.KindNotFound) {
		// Not a project the actor may see: a nested group's page, if it
		// is one.
		if g, gerr := h.resolveGroup(r, a, full); gerr == nil {
			h.groupPage(w, r, a, g)
			return
		}
	}
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	p := v.Project
	ph, err := h.withHead(head(v))
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body := overviewBody{projectHead: ph, HTTPClone: h.ExternalURL + "/" + p.FullPath() + ".git",
		SSHClone: model.SSHCloneURL(h.sshHost, h.SSHPort, p.FullPath()), Ref: p.DefaultBranch}
	if v.CanReadCode && !p.EmptyRepo && p.DefaultBranch != "" {
		files := h.files(a, v)
		c, err := files.Commit(r.Context(), p.DefaultBranch, false)
		switch {
		case err == nil:
			body.LastCommit = line(c)
			l, err := h.folder(r, files, p, p.DefaultBranch, string(c.ID), "")
			if err != nil {
				h.failIn(w, r, a, err)
				return
			}
			body.TreeList = l.HTML
			if body.Languages, err = h.languages(r, a, v); err != nil {
				h.failIn(w, r, a, err)
				return
			}
			if err := h.readme(r, files, p, l.Entries, &body); err != nil {
				h.failIn(w, r, a, err)
				return
			}
		case isKind(err, model.KindNotFound):
			// The default branch is gone: an overview without files.
		default:
			h.failIn(w, r, a, err)
			return
		}
	}
	h.render(w, r, a, http.StatusOK, "project", view{Title: p.FullName(), Crumbs: projectCrumbs(p), Body: body})
}

func line(c repofiles.CommitView) *commitLine {
	id := string(c.ID)
	return &commitLine{ID: id, Short: id[:min(8, len(id))], Title: c.Title(), Author: c.Author.Name,
		When: c.Committer.When.UTC().Format("2006-01-02T15:04:05Z"), Ago: ago(c.Committer.When)}
}

// maxTreeEntries is how many entries a folder's page lists.
const maxTreeEntries = 1000

// folder is a folder's listing at commit, which ref named, for a page:
// from the cache when it is there (the caller has read commit through
// files, so the actor may read the code), else listed and rendered.
func (h *Handler) folder(r *http.Request, files repofiles.Project, p model.Project, ref, commit, dir string) (listing, error) {
	key := listingKey(p.FullPath(), ref, commit, dir)
	if l, ok := cacheGet[listing](h.cache, kindListing, key); ok {
		return l, nil
	}
	entries, more, err := listTree(r, files, p, ref, commit, dir)
	if err != nil {
		return listing{}, err
	}
	l := listing{Entries: entries, More: more}
	if dir != "" {
		l.Parent = "/" + p.FullPath() + "/-/tree/" + escapePath(ref)
		if parent := path.Dir(dir); parent != "." {
			l.Parent += "/" + escapePath(parent)
		}
	}
	if l.HTML, err = h.renderPart("tree", "tree_list", l); err != nil {
		return listing{}, err
	}
	if len(l.HTML) <= maxCachedListing {
		cachePut(h.cache, kindListing, key, l, l.size())
	}
	return l, nil
}

// listTree lists a folder at commit: folders first, then files, each by
// name, linked at ref.
func listTree(r *http.Request, files repofiles.Project, p model.Project, ref, commit, dir string) ([]treeEntry, bool, error) {
	es, info, err := files.Tree(r.Context(), repofiles.TreeInput{Dir: dir, Ref: commit},
		model.Page{Number: 1, PerPage: maxTreeEntries})
	if err != nil {
		return nil, false, err
	}
	base := "/" + p.FullPath() + "/-/"
	out := make([]treeEntry, 0, len(es))
	for _, e := range es {
		te := treeEntry{Name: e.Name, Path: e.Path, Type: e.Type, ID: e.ID}
		switch e.Type {
		case "tree":
			te.URL = base + "tree/" + escapePath(ref) + "/" + escapePath(e.Path)
		case "blob":
			te.URL = base + "blob/" + escapePath(ref) + "/" + escapePath(e.Path)
		}
		out = append(out, te)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Type == "tree") != (out[j].Type == "tree") {
			return out[i].Type == "tree"
		}
		return out[i].Name < out[j].Name
	})
	return out, info.HasMore, nil
}

// maxReadme bounds the README an overview renders.
const maxReadme = 512 << 10

// readme renders the root folder's README, preferring Markdown.
func (h *Handler) readme(r *http.Request, files repofiles.Project, p model.Project, entries []treeEntry, body *overviewBody) error {
	best, bestID, rank := "", "", 0
	for _, e := range entries {
		if e.Type != "blob" {
			continue
		}
		lower := strings.ToLower(e.Name)
		stem := strings.TrimSuffix(lower, path.Ext(lower))
		if stem != "readme" {
			continue
		}
		n := 1
		if isMarkdown(lower) {
			n = 3
		} else if lower == "readme" || strings.HasSuffix(lower, ".txt") {
			n = 2
		}
		if n > rank {
			best, bestID, rank = e.Path, e.ID, n
		}
	}
	if best == "" {
		return nil
	}
	if html, ok := cacheGet[template.HTML](h.cache, kindReadme, readmeKey(bestID, best, p.FullPath(), p.DefaultBranch)); ok && bestID != "" {
		body.ReadmeName, body.Readme = best, html
		return nil
	}
	f, data, err := files.ReadUpTo(r.Context(), best, p.DefaultBranch, maxReadme)
	if err != nil || f.Size > maxReadme {
		return err
	}
	body.ReadmeName = best
	if isMarkdown(best) {
		body.Readme = renderMarkdown(data, p.FullPath(), p.DefaultBranch, "")
	} else {
		// RenderHTML escapes what is not Markdown.
		body.Readme = template.HTML(wikis.RenderHTML("plain", data)) //nolint:gosec
	}
	if f.BlobID != "" && len(body.Readme) <= maxCachedReadme {
		cachePut(h.cache, kindReadme, readmeKey(f.BlobID, best, p.FullPath(), p.DefaultBranch), body.Readme, len(body.Readme))
	}
	return nil
}

func isMarkdown(name string) bool {
	switch path.Ext(strings.ToLower(name)) {
	case ".md", ".markdown", ".mdown", ".mkd", ".mkdn":
		return true
	}
	return false
}

// maxRefSegments bounds how many leading segments of a tree or blob
// path may name the ref ("feature/x/y"): each is a lookup.
const maxRefSegments = 8

// splitRef splits "<ref>/<path>" at the longest ref that exists (as
// GitLab does: branch and tag names may hold slashes).
func (h *Handler) splitRef(r *http.Request, a auth.Actor, full, rest string) (ref, p string, c repofiles.CommitView, err error) {
	return h.Files.SplitRef(r.Context(), a, full, rest, maxRefSegments)
}

// pathCrumbs are the ref's root and each folder of p.
func pathCrumbs(p model.Project, ref, file string) []crumb {
	cs := projectCrumbs(p)
	base := "/" + p.FullPath() + "/-/tree/" + escapePath(ref)
	cs = append(cs, crumb{Name: ref, URL: base})
	if file == "" {
		return cs
	}
	parts := strings.Split(file, "/")
	for i, part := range parts {
		cs = append(cs, crumb{Name: part, URL: base + "/" + escapePath(strings.Join(parts[:i+1], "/"))})
	}
	return cs
}

// treeBody is the data of a folder's page.
type treeBody struct {
	projectHead
	Ref, Path  string
	LastCommit *commitLine
	TreeList   template.HTML
}

// tree is /-/tree/<ref>/<path>: a folder at a ref. A file's path goes to
// its blob page.
func (h *Handler) tree(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	v, ok := h.projectPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	if rest == "" {
		rest = p.DefaultBranch
	}
	files := h.files(a, v)
	ref, dir, c, err := files.SplitRef(r.Context(), strings.TrimSuffix(rest, "/"), maxRefSegments)
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	l, err := h.folder(r, files, p, ref, string(c.ID), dir)
	if isKind(err, model.KindNotFound) && dir != "" {
		if _, serr := files.Stat(r.Context(), dir, ref); serr == nil {
			http.Redirect(w, r, "/"+p.FullPath()+"/-/blob/"+escapePath(ref)+"/"+escapePath(dir), http.StatusFound)
			return
		}
	}
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	ph, err := h.withHead(head(v))
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body := treeBody{projectHead: ph, Ref: ref, Path: dir, LastCommit: line(c), TreeList: l.HTML}
	title := dir
	if title == "" {
		title = p.Name
	}
	h.render(w, r, a, http.StatusOK, "tree", view{Title: title + " · " + ref + " · " + p.FullName(), Crumbs: pathCrumbs(p, ref, dir), Body: body})
}

// maxBlobView is the largest file a blob page shows; a larger one is
// offered as a download.
const maxBlobView = 1 << 20

// blobBody is the data of a file's page (which shows no project head).
type blobBody struct {
	Ref, Path, Name   string
	Size              int64
	RawURL, Download  string
	PlainURL, RichURL string // the Markdown source toggle
	Code              template.HTML
	Markdown          template.HTML
	Image             bool
	TooLarge, Binary  bool
	Lines             int
}

// blob is /-/blob/<ref>/<path>: a file highlighted with line numbers,
// Markdown rendered (?plain=1 shows the source), images shown, binary
// and large files offered as downloads.
func (h *Handler) blob(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	v, files, ref, file, ok := h.refPath(w, r, a, full, rest, true) // the blob page shows no head
	if !ok {
		return
	}
	p := v.Project
	f, err := files.Stat(r.Context(), file, ref)
	if err != nil {
		if isKind(err, model.KindNotFound) {
			h.notFound(w, r, a)
			return
		}
		h.failIn(w, r, a, err)
		return
	}
	raw := "/" + p.FullPath() + "/-/raw/" + escapePath(ref) + "/" + escapePath(file)
	self := "/" + p.FullPath() + "/-/blob/" + escapePath(ref) + "/" + escapePath(file)
	body := blobBody{Ref: ref, Path: file, Name: f.Name, Size: f.Size, RawURL: raw,
		Download: raw + "?inline=false"}
	var code template.HTML // highlighted, written around the template (spliceMark)
	switch {
	case imageType(f.Name) != "":
		body.Image = true
	case f.Size > maxBlobView:
		body.TooLarge = true
	default:
		rendered := isMarkdown(f.Name) && r.URL.Query().Get("plain") != "1"
		if html, lines, ok := h.highlighted(f.BlobID, f.Name); ok && !rendered && html != "" {
			// Highlighted before: the blob need not be read.
			code, body.Lines, body.Code = html, lines, spliceMark
			if isMarkdown(f.Name) {
				body.RichURL = self
			}
			break
		}
		data, err := files.Content(r.Context(), f) // an image is shown from its raw URL: never read
		if err != nil {
			h.failIn(w, r, a, err)
			return
		}
		if isBinary(data) {
			body.Binary = true
			break
		}
		body.Lines = countLines(data)
		if rendered {
			dir := path.Dir(file)
			if dir == "." {
				dir = ""
			}
			body.Markdown = renderMarkdown(data, p.FullPath(), ref, dir)
			body.PlainURL = self + "?plain=1"
			break
		}
		if isMarkdown(f.Name) {
			body.RichURL = self
		}
		if code, err = h.highlight(f.BlobID, f.Name, data); err != nil {
			h.failIn(w, r, a, err)
			return
		}
		if code != "" {
			body.Code = spliceMark
		}
	}
	h.render(w, r, a, http.StatusOK, "blob", view{Title: file + " · " + ref + " · " + p.FullName(), Crumbs: pathCrumbs(p, ref, file), Body: body,
		splice: code})
}

// isBinary reports whether content is not text: a NUL in its first 8 KiB
// (as git decides) or bytes that are not UTF-8.
func isBinary(data []byte) bool {
	start := data[:min(len(data), 8000)]
	return bytes.IndexByte(start, 0) >= 0 || !utf8.Valid(data)
}

// imageType is the content type of an image a page may show (never SVG,
// which may carry script), or "".
func imageType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".bmp":
		return "image/bmp"
	case ".ico":
		return "image/x-icon"
	}
	return ""
}

// raw is /-/raw/<ref>/<path>: the file's bytes (writeRaw).
func (h *Handler) raw(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	_, files, ref, file, ok := h.refPath(w, r, a, full, rest, true)
	if !ok {
		return
	}
	f, rd, err := files.OpenRaw(r.Context(), file, ref)
	if err != nil {
		h.failIn(w, r, a, err) // the project is visible: what is missing in it is a 404
		return
	}
	defer rd.Close()
	h.writeRaw(w, r, a, f.Name, f.Size, f.BlobID, rd)
}

// writeRaw sends a file's bytes (a repository's or a wiki's): an image
// as itself, text as text/plain and anything else as
// application/octet-stream, under a sandboxing policy, so a stored file
// never runs as a page of this site; ?inline=false downloads it.
func (h *Handler) writeRaw(w http.ResponseWriter, r *http.Request, a auth.Actor, name string, size int64, blobID string, rd io.Reader) {
	var sniff [8000]byte
	n, err := io.ReadFull(rd, sniff[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		h.failIn(w, r, a, err)
		return
	}
	ct := imageType(name)
	if ct == "" {
		ct = "text/plain; charset=utf-8"
		if bytes.IndexByte(sniff[:n], 0) >= 0 {
			ct = "application/octet-stream"
		}
	}
	hd := w.Header()
	hd.Set("Content-Type", ct)
	hd.Set("Content-Length", strconv.FormatInt(size, 10))
	hd.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; sandbox")
	hd.Set("Cache-Control", "max-age=60, private, must-revalidate")
	hd.Set("ETag", `"`+blobID+`"`)
	disp := "inline"
	if r.URL.Query().Get("inline") == "false" {
		disp = "attachment"
	}
	hd.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": name}))
	if r.Method == http.MethodHead {
		return
	}
	if _, err := w.Write(sniff[:n]); err != nil {
		return
	}
	_, _ = io.Copy(w, rd)
}
