package api

import (
	"net/http"

	"quarry/internal/attributes"
	"quarry/internal/auth"
	"quarry/internal/members"
	"quarry/internal/model"
	"quarry/internal/repofiles"
)

// Scope rules of the route table.
var (
	// scopeDefault: `api`, and `read_api` on reads.
	scopeDefault = auth.ScopeRule{}
	// scopeUser adds `read_user` on reads (users, user, version).
	scopeUser = auth.ScopeRule{Extra: []model.Scope{model.ScopeReadUser}}
	// scopeRepoRead adds `read_repository` on reads (the files API).
	scopeRepoRead = auth.ScopeRule{Extra: []model.Scope{model.ScopeReadRepository}}
	// scopeAny accepts a token of any scope (the token's own endpoints).
	scopeAny = auth.ScopeRule{Any: true}
)

// routes is the route table: every endpoint, who may call it and with
// which token scopes. Paths are under /api/v4.
func (s *Server) routes() {
	for _, rt := range []route{
		{"GET", "/version", signedIn, scopeUser, (*call).version},

		// Users.
		{"GET", "/users", public, scopeUser, (*call).listUsers},
		{"POST", "/users", signedIn, scopeDefault, (*call).createUser},
		{"GET", "/users/{id}", public, scopeUser, (*call).getUser},
		{"PUT", "/users/{id}", signedIn, scopeDefault, (*call).updateUser},
		{"DELETE", "/users/{id}", signedIn, scopeDefault, (*call).deleteUser},
		{"DELETE", "/users/{id}/identities/{provider}", signedIn, scopeDefault, (*call).deleteIdentity},
		{"POST", "/users/{id}/block", signedIn, scopeDefault, func(c *call) error { return c.stateChange(c.s.Users.Block) }},
		{"POST", "/users/{id}/unblock", signedIn, scopeDefault, func(c *call) error { return c.stateChange(c.s.Users.Unblock) }},
		{"POST", "/users/{id}/deactivate", signedIn, scopeDefault, func(c *call) error { return c.stateChange(c.s.Users.Deactivate) }},
		{"POST", "/users/{id}/activate", signedIn, scopeDefault, func(c *call) error { return c.stateChange(c.s.Users.Activate) }},
		{"GET", "/users/{user_id}/status", public, scopeUser, (*call).userStatus},
		{"POST", "/users/{user_id}/personal_access_tokens", signedIn, scopeDefault, (*call).createToken},

		// The current user.
		{"GET", "/user", signedIn, scopeUser, (*call).currentUser},
		{"GET", "/user/status", signedIn, scopeUser, (*call).ownStatus},
		{"PUT", "/user/status", signedIn, scopeDefault, func(c *call) error { return c.setStatus(false) }},
		{"PATCH", "/user/status", signedIn, scopeDefault, func(c *call) error { return c.setStatus(true) }},
		{"GET", "/user/preferences", signedIn, scopeUser, (*call).getPreferences},
		{"PUT", "/user/preferences", signedIn, scopeDefault, (*call).putPreferences},

		// Projects.
		{"GET", "/projects", public, scopeDefault, (*call).listProjects},
		{"POST", "/projects", signedIn, scopeDefault, func(c *call) error { return c.createProject(false) }},
		{"GET", "/projects/{id}", public, scopeDefault, (*call).getProject},
		{"PUT", "/projects/{id}", signedIn, scopeDefault, (*call).updateProject},
		{"DELETE", "/projects/{id}", signedIn, scopeDefault, (*call).deleteProject},
		// archive, unarchive, restore, star, unstar, fork, share — and
		// /projects/user/:user_id, which shares the path's shape.
		{"POST", "/projects/{id}/{action}", signedIn, scopeDefault, (*call).projectAction},
		{"PUT", "/projects/{id}/transfer", signedIn, scopeDefault, (*call).transferProject},
		{"GET", "/projects/{id}/starrers", public, scopeDefault, (*call).starrers},
		{"GET", "/projects/{id}/forks", public, scopeDefault, (*call).projectForks},
		{"POST", "/projects/{id}/fork/{forked_from_id}", signedIn, scopeDefault, (*call).markFork},
		{"DELETE", "/projects/{id}/fork", signedIn, scopeDefault, (*call).unmarkFork},
		{"DELETE", "/projects/{id}/share/{group_id}", signedIn, scopeDefault, (*call).unshareProject},
		{"GET", "/projects/{id}/languages", public, scopeDefault, (*call).projectLanguages},
		{"GET", "/users/{user_id}/projects", public, scopeDefault, (*call).userProjects},
		{"GET", "/users/{user_id}/starred_projects", public, scopeDefault, (*call).userStarredProjects},

		// Groups and namespaces.
		{"GET", "/groups", public, scopeDefault, (*call).listGroups},
		{"POST", "/groups", signedIn, scopeDefault, (*call).createGroup},
		{"GET", "/groups/{id}", public, scopeDefault, (*call).getGroup},
		{"PUT", "/groups/{id}", signedIn, scopeDefault, (*call).updateGroup},
		{"DELETE", "/groups/{id}", signedIn, scopeDefault, (*call).deleteGroup},
		{"POST", "/groups/{id}/transfer", signedIn, scopeDefault, (*call).transferGroup},
		{"POST", "/groups/{id}/restore", signedIn, scopeDefault, (*call).restoreGroup},
		{"GET", "/groups/{id}/subgroups", public, scopeDefault, func(c *call) error { return c.subgroups(false) }},
		{"GET", "/groups/{id}/descendant_groups", public, scopeDefault, func(c *call) error { return c.subgroups(true) }},
		{"GET", "/groups/{id}/projects", public, scopeDefault, func(c *call) error { return c.groupProjects(false) }},
		{"GET", "/groups/{id}/projects/shared", public, scopeDefault, func(c *call) error { return c.groupProjects(true) }},
		{"GET", "/namespaces", signedIn, scopeDefault, (*call).listNamespaces},
		{"GET", "/namespaces/{id}", signedIn, scopeDefault, (*call).getNamespace},
		{"GET", "/namespaces/{id}/exists", signedIn, scopeDefault, (*call).namespaceExists},

		// Topics.
		{"GET", "/topics", public, scopeDefault, (*call).listTopics},
		{"POST", "/topics", signedIn, scopeDefault, (*call).createTopic},
		{"GET", "/topics/{id}", public, scopeDefault, (*call).getTopic},
		{"PUT", "/topics/{id}", signedIn, scopeDefault, (*call).updateTopic},
		{"DELETE", "/topics/{id}", signedIn, scopeDefault, (*call).deleteTopic},
		{"POST", "/topics/merge", signedIn, scopeDefault, (*call).mergeTopics},

		// Personal access tokens.
		{"GET", "/personal_access_tokens", signedIn, scopeDefault, (*call).listTokens},
		{"GET", "/personal_access_tokens/self", signedIn, scopeAny, (*call).getToken},
		{"DELETE", "/personal_access_tokens/self", signedIn, scopeAny, (*call).revokeToken},
		{"POST", "/personal_access_tokens/self/rotate", signedIn, auth.ScopeRule{Extra: []model.Scope{model.ScopeSelfRotate}}, (*call).rotateToken},
		{"GET", "/personal_access_tokens/{id}", signedIn, scopeDefault, (*call).getToken},
		{"DELETE", "/personal_access_tokens/{id}", signedIn, scopeDefault, (*call).revokeToken},
		{"POST", "/personal_access_tokens/{id}/rotate", signedIn, scopeDefault, (*call).rotateToken},
	} {
		s.register(rt)
	}
	// Members of projects and groups.
	for _, kind := range []string{members.Projects, members.Groups} {
		kind := kind
		base := "/" + kind + "/{id}/members"
		for _, rt := range []route{
			{"GET", base, signedIn, scopeDefault, func(c *call) error { return c.listMembers(kind, false) }},
			{"GET", base + "/all", signedIn, scopeDefault, func(c *call) error { return c.listMembers(kind, true) }},
			{"GET", base + "/{user_id}", signedIn, scopeDefault, func(c *call) error { return c.getMember(kind, false) }},
			{"GET", base + "/all/{user_id}", signedIn, scopeDefault, func(c *call) error { return c.getMember(kind, true) }},
			{"POST", base, signedIn, scopeDefault, func(c *call) error { return c.addMember(kind) }},
			{"PUT", base + "/{user_id}", signedIn, scopeDefault, func(c *call) error { return c.updateMember(kind) }},
			{"DELETE", base + "/{user_id}", signedIn, scopeDefault, func(c *call) error { return c.removeMember(kind) }},
		} {
			s.register(rt)
		}
	}
	for _, rt := range []route{
		{"POST", "/groups/{id}/members/{user_id}/override", signedIn, scopeDefault, func(c *call) error { return c.memberOverride(true) }},
		{"DELETE", "/groups/{id}/members/{user_id}/override", signedIn, scopeDefault, func(c *call) error { return c.memberOverride(false) }},
		{"PUT", "/groups/{id}/members/{user_id}/approve", signedIn, scopeDefault, (*call).approveMember},
		{"POST", "/groups/{id}/members/approve_all", signedIn, scopeDefault, (*call).approveAllMembers},
		{"GET", "/groups/{id}/pending_members", signedIn, scopeDefault, (*call).pendingMembers},
		{"GET", "/groups/{id}/billable_members", signedIn, scopeDefault, (*call).billableMembers},
		{"GET", "/groups/{id}/billable_members/{user_id}/memberships", signedIn, scopeDefault, (*call).billableMemberships},
		{"DELETE", "/groups/{id}/billable_members/{user_id}", signedIn, scopeDefault, (*call).removeBillable},

		// Repository files, trees and blobs.
		{"GET", "/projects/{id}/repository/files/{file_path}", public, scopeRepoRead, (*call).getFile},
		{"GET", "/projects/{id}/repository/files/{file_path}/raw", public, scopeRepoRead, (*call).getRawFile},
		{"POST", "/projects/{id}/repository/files/{file_path}", signedIn, scopeDefault, func(c *call) error { return c.writeFile("create") }},
		{"PUT", "/projects/{id}/repository/files/{file_path}", signedIn, scopeDefault, func(c *call) error { return c.writeFile("update") }},
		{"DELETE", "/projects/{id}/repository/files/{file_path}", signedIn, scopeDefault, func(c *call) error { return c.writeFile("delete") }},
		{"GET", "/projects/{id}/repository/tree", public, scopeDefault, (*call).getTree},
		{"GET", "/projects/{id}/repository/blobs/{sha}", public, scopeDefault, func(c *call) error { return c.getBlob(false) }},
		{"GET", "/projects/{id}/repository/blobs/{sha}/raw", public, scopeDefault, func(c *call) error { return c.getBlob(true) }},
		{"GET", "/projects/{id}/repository/files/{file_path}/blame", public, scopeRepoRead, (*call).blame},
		{"GET", "/projects/{id}/repository/compare", public, scopeDefault, (*call).compare},
		{"GET", "/projects/{id}/repository/merge_base", public, scopeDefault, (*call).mergeBase},
		{"GET", "/projects/{id}/repository/contributors", public, scopeDefault, (*call).contributors},
		{"GET", "/projects/{id}/repository/changelog", public, scopeDefault, (*call).getChangelog},
		{"POST", "/projects/{id}/repository/changelog", signedIn, scopeDefault, (*call).commitChangelog},

		// Branches, tags and commits.
		{"GET", "/projects/{id}/repository/branches", public, scopeDefault, (*call).listBranches},
		{"POST", "/projects/{id}/repository/branches", signedIn, scopeDefault, (*call).createBranch},
		{"GET", "/projects/{id}/repository/branches/{branch}", public, scopeDefault, (*call).getBranch},
		{"DELETE", "/projects/{id}/repository/branches/{branch}", signedIn, scopeDefault, (*call).deleteBranch},
		{"DELETE", "/projects/{id}/repository/merged_branches", signedIn, scopeDefault, (*call).deleteMergedBranches},
		{"GET", "/projects/{id}/repository/tags", public, scopeDefault, (*call).listTags},
		{"POST", "/projects/{id}/repository/tags", signedIn, scopeDefault, (*call).createTag},
		{"GET", "/projects/{id}/repository/tags/{tag}", public, scopeDefault, (*call).getTag},
		{"DELETE", "/projects/{id}/repository/tags/{tag}", signedIn, scopeDefault, (*call).deleteTag},
		{"GET", "/projects/{id}/repository/commits", public, scopeDefault, (*call).listCommits},
		{"POST", "/projects/{id}/repository/commits", signedIn, scopeDefault, (*call).createCommit},
		{"GET", "/projects/{id}/repository/commits/{sha}", public, scopeDefault, (*call).getCommit},
		{"GET", "/projects/{id}/repository/commits/{sha}/diff", public, scopeDefault, (*call).commitDiff},
		{"GET", "/projects/{id}/repository/commits/{sha}/refs", public, scopeDefault, (*call).commitRefs},

		// Protected branches.
		{"GET", "/projects/{id}/protected_branches", signedIn, scopeDefault, (*call).listProtectedBranches},
		{"GET", "/projects/{id}/protected_branches/{name}", signedIn, scopeDefault, (*call).getProtectedBranch},
		{"POST", "/projects/{id}/protected_branches", signedIn, scopeDefault, (*call).protectBranch},
		{"PATCH", "/projects/{id}/protected_branches/{name}", signedIn, scopeDefault, (*call).updateProtectedBranch},
		{"DELETE", "/projects/{id}/protected_branches/{name}", signedIn, scopeDefault, (*call).unprotectBranch},
	} {
		s.register(rt)
	}

	// Archives: /repository/archive and /repository/archive.<format>.
	s.register(route{"GET", "/projects/{id}/repository/archive", public, scopeDefault, func(c *call) error { return c.archive("tar.gz") }})
	for _, format := range repofiles.ArchiveFormats() {
		s.register(route{"GET", "/projects/{id}/repository/archive." + format, public, scopeDefault, func(c *call) error { return c.archive(format) }})
	}

	// Custom attributes of users, projects and groups (administrators).
	for _, kind := range []struct{ path, name string }{{"users", attributes.Users}, {"projects", attributes.Projects}, {"groups", attributes.Groups}} {
		name := kind.name
		base := "/" + kind.path + "/{id}/custom_attributes"
		for _, rt := range []route{
			{"GET", base, signedIn, scopeUser, func(c *call) error { return c.listCustomAttributes(name) }},
			{"GET", base + "/{key}", signedIn, scopeUser, func(c *call) error { return c.getCustomAttribute(name) }},
			{"PUT", base + "/{key}", signedIn, scopeDefault, func(c *call) error { return c.putCustomAttribute(name) }},
			{"DELETE", base + "/{key}", signedIn, scopeDefault, func(c *call) error { return c.deleteCustomAttribute(name) }},
		} {
			s.register(rt)
		}
	}

	// Service endpoints outside the API.
	s.mux.HandleFunc("GET /-/health", s.health)
	s.mux.HandleFunc("GET /-/liveness", s.liveness)
	s.mux.HandleFunc("GET /-/readiness", s.readiness)
	s.mux.Handle("GET /-/metrics", s.metricsHandler())
	s.mux.HandleFunc("GET /uploads/-/system/{path...}", s.upload)
	s.mux.HandleFunc("/api/v3/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusGone, errorBody{Error: "API V3 is no longer supported. Use API V4 instead."})
	})
}
