// Package repository serves a project's repository: files, trees, blobs,
// archives, snapshots, compare, blame, branches, tags, commits, the
// changelog and protected branches.
package repository

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/changelog"
	"quarry/internal/projects"
	"quarry/internal/repofiles"
)

// Handlers answer the repository area.
type Handlers struct {
	files     *repofiles.Service
	projects  *projects.Service
	changelog *changelog.Service
	r         *entity.Renderer
}

// New returns the repository area.
func New(f *repofiles.Service, p *projects.Service, cl *changelog.Service, r *entity.Renderer) *Handlers {
	return &Handlers{files: f, projects: p, changelog: cl, r: r}
}

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, content := endpoint.Row, endpoint.Parsed, endpoint.Carrying(endpoint.ContentFile)
	public, token := endpoint.Public, endpoint.Token
	api, repoRead := endpoint.ScopeAPI, endpoint.ScopeRepoRead
	const base = "/projects/{id}/repository"
	rows := []endpoint.Route{
		// Files, trees and blobs.
		row("GET", base+"/files/{file_path}", public, repoRead, parsed, h.getFile),
		row("GET", base+"/files/{file_path}/raw", public, repoRead, parsed, h.getRawFile),
		row("GET", base+"/files/{file_path}/blame", public, repoRead, parsed, h.blame),
		row("POST", base+"/files/{file_path}", token, api, content, func(c *endpoint.Call) error { return h.writeFile(c, "create") }),
		row("PUT", base+"/files/{file_path}", token, api, content, func(c *endpoint.Call) error { return h.writeFile(c, "update") }),
		row("DELETE", base+"/files/{file_path}", token, api, parsed, func(c *endpoint.Call) error { return h.writeFile(c, "delete") }),
		row("GET", base+"/tree", public, api, parsed, h.getTree),
		row("GET", base+"/blobs/{sha}", public, api, parsed, func(c *endpoint.Call) error { return h.getBlob(c, false) }),
		row("GET", base+"/blobs/{sha}/raw", public, api, parsed, func(c *endpoint.Call) error { return h.getBlob(c, true) }),
		row("GET", base+"/compare", public, api, parsed, h.compare),
		row("GET", base+"/merge_base", public, api, parsed, h.mergeBase),
		row("GET", base+"/contributors", public, api, parsed, h.contributors),
		row("GET", base+"/changelog", public, api, parsed, h.getChangelog),
		row("POST", base+"/changelog", token, api, parsed, h.commitChangelog),

		// Branches, tags and commits.
		row("GET", base+"/branches", public, api, parsed, h.listBranches),
		row("POST", base+"/branches", token, api, parsed, h.createBranch),
		row("GET", base+"/branches/{branch}", public, api, parsed, h.getBranch),
		row("DELETE", base+"/branches/{branch}", token, api, parsed, h.deleteBranch),
		row("DELETE", base+"/merged_branches", token, api, parsed, h.deleteMergedBranches),
		row("GET", base+"/tags", public, api, parsed, h.listTags),
		row("POST", base+"/tags", token, api, parsed, h.createTag),
		row("GET", base+"/tags/{tag}", public, api, parsed, h.getTag),
		row("DELETE", base+"/tags/{tag}", token, api, parsed, h.deleteTag),
		row("GET", base+"/commits", public, api, parsed, h.listCommits),
		row("POST", base+"/commits", token, api, content, h.createCommit),
		row("GET", base+"/commits/{sha}", public, api, parsed, h.getCommit),
		row("GET", base+"/commits/{sha}/diff", public, api, parsed, h.commitDiff),
		row("GET", base+"/commits/{sha}/refs", public, api, parsed, h.commitRefs),

		// Protected branches.
		row("GET", "/projects/{id}/protected_branches", token, api, parsed, h.listProtectedBranches),
		row("POST", "/projects/{id}/protected_branches", token, api, parsed, h.protectBranch),
		row("GET", "/projects/{id}/protected_branches/{name}", token, api, parsed, h.getProtectedBranch),
		row("PATCH", "/projects/{id}/protected_branches/{name}", token, api, parsed, h.updateProtectedBranch),
		row("DELETE", "/projects/{id}/protected_branches/{name}", token, api, parsed, h.unprotectBranch),

		// Protected tags.
		row("GET", "/projects/{id}/protected_tags", token, api, parsed, h.listProtectedTags),
		row("POST", "/projects/{id}/protected_tags", token, api, parsed, h.protectTag),
		row("GET", "/projects/{id}/protected_tags/{name}", token, api, parsed, h.getProtectedTag),
		row("DELETE", "/projects/{id}/protected_tags/{name}", token, api, parsed, h.unprotectTag),

		// A tar of the bare repository, for administrators.
		row("GET", "/projects/{id}/snapshot", token, api, parsed, h.snapshot),

		// Archives: /repository/archive (tar.gz) and one row per format.
		row("GET", base+"/archive", public, api, parsed, func(c *endpoint.Call) error { return h.archive(c, "tar.gz") }),
	}
	for _, format := range repofiles.ArchiveFormats() {
		rows = append(rows, row("GET", base+"/archive."+format, public, api, parsed, func(c *endpoint.Call) error { return h.archive(c, format) }))
	}
	return rows
}
