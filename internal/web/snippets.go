package web

import (
	"bytes"
	"html/template"
	"net/http"
	"path"
	"strconv"

	"quarry/internal/auth"
	"quarry/internal/snippets"
	"quarry/internal/wikis"
)

// snippetFile is a file of a snippet as its page shows it.
type snippetFile struct {
	Path, RawURL     string
	Size             int64
	Code             template.HTML
	Lines            int
	TooLarge, Binary bool
}

// snippetBody is the data of a snippet's page.
type snippetBody struct {
	projectHead                 // a project's snippet: its project (else zero)
	InProject                   bool
	ID                          int64
	Title, Visibility           string
	Description                 template.HTML
	Author, AuthorURL           string
	Created, CreatedAgo, RawURL string
	Files                       []snippetFile
	HTTPClone                   string
}

// snippet is /-/snippets/<id> (a personal snippet, or any snippet the
// actor reads) and /<project>/-/snippets/<id>: the title, description
// and each file highlighted, with raw links. A snippet the actor may not
// read is what the API makes of it: a 404 for a signed-in user, a
// sign-in for the anonymous.
func (h *Handler) snippet(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	var body snippetBody
	if full != "" {
		v, ok := h.projectPage(w, r, a, full)
		if !ok {
			return
		}
		body.projectHead, body.InProject = head(v), true
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id <= 0 {
		h.notFound(w, r, a)
		return
	}
	sv, files, err := h.Snippets.Contents(r.Context(), a, snippets.Where{Project: full}, id, maxBlobView)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	base := "/-/snippets/" + strconv.FormatInt(sv.ID, 10)
	if sv.Project != nil {
		base = "/" + sv.Project.FullPath() + base
	}
	body.ID, body.Title, body.Visibility = sv.ID, sv.Title, string(sv.Visibility)
	if sv.Description != nil && *sv.Description != "" {
		// RenderHTML sanitises what it renders.
		body.Description = template.HTML(wikis.RenderHTML("markdown", []byte(*sv.Description))) //nolint:gosec
	}
	body.Author, body.AuthorURL = sv.Author.Name, "/"+sv.Author.Username
	body.Created, body.CreatedAgo = sv.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), ago(sv.CreatedAt)
	body.RawURL = base + "/raw"
	if sv.HasRepository {
		body.HTTPClone = h.ExternalURL + "/" + sv.FullPath() + ".git"
	}
	for _, f := range files {
		sf := snippetFile{Path: f.Path, Size: f.Size, RawURL: base + "/raw/" + escapePath(sv.Branch) + "/" + escapePath(f.Path)}
		switch {
		case f.Data == nil:
			sf.TooLarge = true
		case isBinary(f.Data):
			sf.Binary = true
		default:
			sf.Lines = bytes.Count(f.Data, []byte("\n"))
			if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
				sf.Lines++
			}
			if sf.Code, err = h.highlight(f.BlobID, path.Base(f.Path), f.Data); err != nil {
				h.failIn(w, r, a, err)
				return
			}
		}
		body.Files = append(body.Files, sf)
	}
	var crumbs []crumb
	if sv.Project != nil && full != "" {
		crumbs = append(projectCrumbs(*sv.Project), crumb{Name: "Snippets"})
	} else {
		crumbs = []crumb{{Name: "Snippets"}}
	}
	crumbs = append(crumbs, crumb{Name: "$" + strconv.FormatInt(sv.ID, 10)})
	h.render(w, r, a, http.StatusOK, "snippet", view{Title: sv.Title + " · Snippets", Crumbs: crumbs, Body: body})
}
