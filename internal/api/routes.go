package api

import (
	"net/http"
	"slices"
	"strings"

	"quarry/internal/api/agents"
	apialerts "quarry/internal/api/alerts"
	"quarry/internal/api/approvals"
	"quarry/internal/api/attributes"
	"quarry/internal/api/badges"
	"quarry/internal/api/boards"
	"quarry/internal/api/ci"
	"quarry/internal/api/endpoint"
	"quarry/internal/api/environments"
	"quarry/internal/api/errortracking"
	apievents "quarry/internal/api/events"
	"quarry/internal/api/geo"
	"quarry/internal/api/groupexport"
	"quarry/internal/api/groups"
	apihousekeeping "quarry/internal/api/housekeeping"
	apiissues "quarry/internal/api/issues"
	apikeys "quarry/internal/api/keys"
	"quarry/internal/api/labels"
	"quarry/internal/api/members"
	"quarry/internal/api/mergerequests"
	"quarry/internal/api/milestones"
	apinotes "quarry/internal/api/notes"
	"quarry/internal/api/projects"
	apiprotectedenvs "quarry/internal/api/protectedenvs"
	apireleases "quarry/internal/api/releases"
	"quarry/internal/api/repository"
	"quarry/internal/api/runners"
	apischedules "quarry/internal/api/schedules"
	"quarry/internal/api/settings"
	"quarry/internal/api/snippets"
	"quarry/internal/api/storagemoves"
	"quarry/internal/api/tokens"
	"quarry/internal/api/topics"
	"quarry/internal/api/users"
	"quarry/internal/api/wikis"
)

// Table is the route table: every row of every area, in one place. Rows
// under /api/v4 say how the caller authenticates, which token scopes pass
// and how the body is read (see endpoint.Route).
func (s *Server) Table() []endpoint.Route {
	d, r := &s.Deps, s.render
	return slices.Concat(
		[]endpoint.Route{
			endpoint.Row("GET", "/version", endpoint.Token, endpoint.ScopeUser, endpoint.Parsed, s.version),
		},
		users.New(d.Users, d.Attributes, r).Routes(),
		tokens.New(d.Tokens, r).Routes(),
		attributes.New(d.Attributes, r).Routes(),
		projects.New(d.Projects, d.Users, d.Attributes, r).Routes(),
		groups.New(d.Groups, d.Projects, d.Attributes, d.GroupTransfers, r).Routes(),
		groupexport.New(d.GroupTransfers).Routes(),
		members.New(d.Members, d.Users, r).Routes(),
		topics.New(d.Topics, r).Routes(),
		repository.New(d.Files, d.Projects, d.Changelog, r).Routes(),
		ci.New(d.CI, r).Routes(),
		agents.New(d.Agents, d.JobTokenScope, d.Projects, r).Routes(),
		agents.New(d.Agents, d.JobTokenScope, d.Projects, r).JobRoutes(),
		runners.New(d.Runners, d.CI, r).ProtocolRoutes(),
		runners.New(d.Runners, d.CI, r).Routes(),
		mergerequests.New(d.MRs, r).Routes(),
		approvals.New(d.Approvals, r).Routes(),
		wikis.New(d.Wikis, r).Routes(),
		snippets.New(d.Snippets, r).Routes(),
		badges.New(d.Badges, r).Routes(),
		labels.New(d.Labels, r).Routes(),
		milestones.New(d.Milestones, r).Routes(),
		apiissues.New(d.Issues, r).Routes(),
		apinotes.New(d.Notes, r).Routes(),
		boards.New(d.Boards, r).Routes(),
		settings.New(d.Settings).Routes(),
		geo.New(d.Geo, r).Routes(),
		storagemoves.New(d.Moves, r).Routes(),
		apihousekeeping.New(d.Housekeeping).Routes(),
		apialerts.New(d.Alerts, r).Routes(),
		errortracking.New(d.ErrorTracking, r).Routes(),
		apireleases.New(d.Releases, r).Routes(),
		apiprotectedenvs.New(d.ProtectedEnvironments, r).Routes(),
		apischedules.New(d.Schedules, r).Routes(),
		environments.New(d.CI, d.MRs, r).Routes(),
		apikeys.New(d.Keys, r).Routes(),
		apievents.New(d.Activity, r).Routes(),
	)
}

// snippetRawHandler serves the raw web paths snippets' raw URLs point
// at.
func (s *Server) snippetRawHandler(site *endpoint.Site) http.Handler {
	return snippets.New(s.Snippets, s.render).WebRaw(site)
}

// isSnippetRaw reports whether a path outside the API is a raw web path
// of a snippet (its page, /-/snippets/:id, is the web's).
func isSnippetRaw(path string) bool {
	_, _, _, _, ok := snippets.MatchRaw(path)
	return ok
}

// alertIntakeHandler serves the alert intake URLs (project web paths,
// authenticated by the integration's key in the handler).
func (s *Server) alertIntakeHandler() http.Handler {
	if s.Alerts == nil {
		return nil
	}
	return apialerts.New(s.Alerts, s.render).Intake(s.log)
}

// isAlertIntake reports whether a path outside the API is an alert
// intake URL's shape.
func isAlertIntake(path string) bool {
	return !strings.HasPrefix(path, "/api/") && apialerts.IsIntakePath(path)
}

// shapes are the row shapes ServeMux cannot hold side by side; their rows
// are told apart by one explicit sub-table each (endpoint.Mux).
var shapes = slices.Concat(projects.Shapes, ci.Shapes)
