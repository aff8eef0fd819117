package auth

import "quarry/internal/model"

// Action is something an actor may try to do.
type Action string

// Actions on users and tokens.
const (
	// ReadUser: see that a user exists (GET /users/:id, status).
	ReadUser Action = "read_user"
	// ReadUserProfile: see a user's profile details (created_at, followers).
	ReadUserProfile Action = "read_user_profile"
	// ListUsers: list the instance's users.
	ListUsers Action = "list_users"
	// AdminUsers: create, update, block, delete users and their tokens.
	AdminUsers Action = "admin_users"
	// UpdateOwnStatus: set one's own status and preferences.
	UpdateOwnStatus Action = "update_user_status"
	// ReadToken / RevokeToken: a personal access token's owner or an admin.
	ReadToken   Action = "read_token"
	RevokeToken Action = "revoke_token"
)

// Actions on projects and groups.
const (
	ReadProject          Action = "read_project"
	ReadCode             Action = "read_code"
	ReadProjectStats     Action = "read_statistics"
	UpdateProject        Action = "admin_project"
	OwnProject           Action = "owner_project" // visibility, archive, transfer, delete, fork link
	StarProject          Action = "star_project"
	ForkProject          Action = "fork_project"
	ReadGroup            Action = "read_group"
	AdminGroup           Action = "admin_group" // update, delete, transfer, share, runners token
	CreateSubgroup       Action = "create_subgroup"
	CreateProjectInGroup Action = "create_projects"
	CreateTopLevelGroup  Action = "create_group"
	AdminInstance        Action = "admin_all_resources"

	// Members and protected branches.
	ReadMembers            Action = "read_member"
	AdminProjectMembers    Action = "admin_project_member"
	AdminGroupMembers      Action = "admin_group_member"
	ReadProtectedBranches  Action = "read_protected_branch"
	AdminProtectedBranches Action = "admin_protected_branch"
	// PushCode writes to Resource.Branch: protected branches follow their
	// push grants, others need a developer.
	PushCode Action = "push_code"
	// MergeCode merges into Resource.Branch: protected branches follow
	// their merge grants, others need a developer.
	MergeCode Action = "merge_code"
)

// Actions on integrated error tracking.
const (
	// ReadErrors: list and read tracked errors and their events — reporters.
	ReadErrors Action = "read_sentry_issue"
	// UpdateErrors: change an error's status — developers.
	UpdateErrors Action = "update_sentry_issue"
	// AdminOperations: error-tracking settings and client keys — maintainers.
	AdminOperations Action = "admin_operations"
)

// Actions on CI: pipelines, jobs and their settings (GitLab's project
// policy: read_pipeline, read_build, create_pipeline, update_build,
// destroy_pipeline, admin_build, admin_cicd_variables, read and update
// resource groups, create_commit_status).
const (
	// ReadPipeline: see pipelines and commit statuses — who sees the
	// project publicly, reporters, and guests when jobs are public.
	ReadPipeline Action = "read_pipeline"
	// ReadJob: see jobs, their logs and reports — reporters, or anyone who
	// reads the project when jobs are public.
	ReadJob Action = "read_build"
	// ReadRestrictedArtifacts: download the artifacts of a job whose
	// artifacts:access is developer (or artifacts:public false) —
	// developers of a project whose jobs they read.
	ReadRestrictedArtifacts Action = "read_restricted_job_artifacts"
	// RunPipeline: create, retry and cancel pipelines, and retry, cancel
	// and play jobs (protected refs also need their push rules).
	RunPipeline Action = "update_pipeline"
	// EraseJob: erase a job's log and artifacts — maintainers, or the
	// developer who ran it (Resource.User).
	EraseJob Action = "erase_build"
	// DeletePipeline: owners.
	DeletePipeline Action = "destroy_pipeline"
	// AdminCI: CI/CD variables and trigger tokens — maintainers.
	AdminCI Action = "admin_build"
	// ManageResourceGroups: read and change resource groups — developers.
	ManageResourceGroups Action = "update_resource_group"
	// CreateCommitStatus: report an external status — developers.
	CreateCommitStatus Action = "create_commit_status"

	// ReadMergeRequest: the project's merge requests feature is open to
	// the actor (private: reporters up) and the actor reads its code.
	ReadMergeRequest Action = "read_merge_request"
	// CreateMergeRequestIn: open a merge request into the project — any
	// signed-in reader of its merge requests (a fork's author included).
	CreateMergeRequestIn Action = "create_merge_request_in"
	// UpdateMergeRequest: edit, close or reopen — developers up, and the
	// merge request's author (r.User).
	UpdateMergeRequest Action = "update_merge_request"
	// DeleteMergeRequest: owners and administrators.
	DeleteMergeRequest Action = "destroy_merge_request"

	// ReadIssue: the project's issues feature is open to the actor
	// (private: members). Confidential issues need ReadConfidentialIssues,
	// or to be their author or an assignee.
	ReadIssue Action = "read_issue"
	// ReadConfidentialIssues: every confidential issue — reporters up.
	ReadConfidentialIssues Action = "read_confidential_issues"
	// CreateIssue: open an issue — any signed-in reader of the issues of
	// a project that is not archived.
	CreateIssue Action = "create_issue"
	// AdminIssue: set labels, milestone, assignees and confidentiality,
	// edit, close and reopen any issue — reporters up (GitLab's
	// admin_issue), never in an archived project.
	AdminIssue Action = "admin_issue"
	// UpdateIssue: edit, close or reopen an issue — AdminIssue, and the
	// issue's author (r.User).
	UpdateIssue Action = "update_issue"
	// DeleteIssue: owners and administrators.
	DeleteIssue Action = "destroy_issue"
)

// Actions on wikis: a project's (Resource.Project, under its wiki
// feature) or a group's (Resource.Group).
const (
	// ReadWiki: see pages — who reads the project (with the wiki feature
	// open to them) or the group.
	ReadWiki Action = "read_wiki"
	// DownloadWiki: clone a wiki (download_wiki_code) — of a project,
	// reporters up and who reads the project publicly (not its guests
	// when private); of a group, its readers.
	DownloadWiki Action = "download_wiki_code"
	// CreateWiki: create and edit pages, upload attachments, push —
	// developers up.
	CreateWiki Action = "create_wiki"
	// AdminWiki: delete pages — maintainers up.
	AdminWiki Action = "admin_wiki"
)

// Actions on snippets: a personal one (Resource.Snippet alone) or a
// project's (Resource.Snippet with Resource.Project and the actor's access
// to it), as GitLab's personal_snippet_policy.rb, project_snippet_policy.rb
// and the snippet rules of project_policy.rb give them.
const (
	// CreateSnippet: a personal snippet (no Resource.Project) — any
	// signed-in user but external ones; a project's — reporters up (or an
	// administrator) where the snippets feature is open to them and the
	// project is not archived.
	CreateSnippet Action = "create_snippet"
	// ReadProjectSnippets: the project's snippets feature is open to the
	// actor (a private one to members from Guest up): its snippet routes
	// answer at all.
	ReadProjectSnippets Action = "read_project_snippets"
	// ReadSnippet: see a snippet and its files, clone it.
	ReadSnippet Action = "read_snippet"
	// UpdateSnippet: edit a snippet, push to it — its author or an
	// administrator; of a project's, also maintainers up, but not of an
	// internal snippet (GitLab's policy keeps those to their author).
	UpdateSnippet Action = "update_snippet"
	// AdminSnippet: delete a snippet — as UpdateSnippet, but an author
	// of a project's snippet needs to be a reporter up still.
	AdminSnippet Action = "admin_snippet"

	// ReadMilestone: a project's milestones (whoever reads the project
	// while its issues or merge requests are enabled) or a group's (whoever
	// reads the group).
	ReadMilestone Action = "read_milestone"
	// AdminMilestone: create, update and delete milestones: reporters up
	// (GitLab's planners and reporters), never in an archived project.
	AdminMilestone Action = "admin_milestone"

	// ReadIssueBoard: a project's issue boards and their lists (whoever
	// may use its issues) or a group's (whoever reads the group).
	ReadIssueBoard Action = "read_issue_board"
	// AdminIssueBoard: create, update and delete boards and their lists:
	// reporters up (GitLab's admin_issue_board and
	// admin_issue_board_list), never in an archived project.
	AdminIssueBoard Action = "admin_issue_board"

	// ReadAlert: a project's alerts and their metric images — reporters
	// up (GitLab's read_alert_management_alert).
	ReadAlert Action = "read_alert_management_alert"
	// UpdateAlert: change an alert's status and assignees, add metric
	// images — developers up (update_alert_management_alert).
	UpdateAlert Action = "update_alert_management_alert"
	// AdminAlertIntegrations: a project's alert HTTP integrations and
	// their keys — maintainers up (GitLab's admin_operations).
	AdminAlertIntegrations Action = "admin_alert_management_http_integration"

	// ReadRelease: a project's releases — whoever reads its code
	// (reporters up; guests and the public where the project and its
	// repository are open), as GitLab's releases API authorizes reads
	// with read_release and download_code.
	ReadRelease Action = "read_release"
	// CreateRelease, UpdateRelease: developers up (a CI job token of the
	// project too: its user's access counts), never in an archived
	// project.
	CreateRelease Action = "create_release"
	UpdateRelease Action = "update_release"
	// DestroyRelease: developers up, never with a job token.
	DestroyRelease Action = "destroy_release"

	// ReadEnvironment, ReadDeployment: a project's environments and
	// deployments — reporters up (a CI job token of the project too).
	ReadEnvironment Action = "read_environment"
	ReadDeployment  Action = "read_deployment"
	// CreateEnvironment: create, update and stop environments;
	// CreateDeployment: report and update deployments — developers up,
	// never in an archived project (a job token of the project too).
	CreateEnvironment Action = "create_environment"
	CreateDeployment  Action = "create_deployment"
	// DestroyEnvironment: delete a stopped environment, clean up review
	// apps — developers up; DestroyDeployment: maintainers up; never with
	// a job token.
	DestroyEnvironment Action = "destroy_environment"
	DestroyDeployment  Action = "destroy_deployment"
)

// Branch is the branch a push or file write targets, with the project's
// protected branch rules.
type Branch struct {
	Name  string
	Rules []model.ProtectedBranch
}

// Resource is what an action applies to; only the fields an action needs
// are set. Access is the actor's effective access level to the project or
// group (max of direct, inherited and shared memberships, unexpired); -1
// when the actor has none, 0 when it only sees a group through what it
// contains.
type Resource struct {
	User    *model.User
	Token   *model.PersonalAccessToken
	Project *model.Project
	Group   *model.Group
	Access  model.AccessLevel
	Branch  *Branch
	Snippet *model.Snippet
}

// visible applies a visibility level to an actor without membership.
func visible(a Actor, v model.Visibility) bool {
	switch v {
	case model.Public:
		return true
	case model.Internal:
		return a.SignedIn() && !a.User.External
	}
	return false
}

func readProject(a Actor, r Resource) bool {
	return r.Project != nil && (a.Admin() || visible(a, r.Project.Visibility) || r.Access >= model.Guest)
}

// featureOpen applies a feature access level ("disabled", "private",
// "enabled") on top of reading the project; private features need members
// from minLevel up: Reporter for merge requests, Guest for the rest
// (GitLab's ProjectFeature.required_minimum_access_level, which the
// project policy's feature checks use whatever the project's visibility;
// that guests of a private project read no code is download_code's
// rule, not the feature's).
func featureOpen(a Actor, r Resource, level string, minLevel model.AccessLevel) bool {
	if !readProject(a, r) {
		return false
	}
	switch level {
	case "disabled":
		return false
	case "private":
		return a.Admin() || r.Access >= minLevel
	}
	return true
}

func readCode(a Actor, r Resource) bool {
	if r.Project == nil {
		return false
	}
	if !featureOpen(a, r, r.Project.Settings.RepositoryAccessLevel, model.Guest) {
		return false
	}
	// Guests of a private project do not see its code.
	return r.Project.Visibility != model.Private || a.Admin() || r.Access >= model.Reporter
}

// creationLevel maps a group's project or subgroup creation setting to
// the role it needs; ok is false for "noone".
func creationLevel(setting string) (model.AccessLevel, bool) {
	switch setting {
	case "noone", "administrator":
		return 0, false
	case "owner":
		return model.Owner, true
	case "maintainer":
		return model.Maintainer, true
	}
	return model.Developer, true
}

type rule func(a Actor, r Resource) bool

// rules is the permission table: one row per action.
var rules = map[Action]rule{
	ReadUser: func(a Actor, r Resource) bool {
		if r.User == nil {
			return false
		}
		// Blocked and banned accounts are hidden from everyone but admins.
		return !r.User.State.IsBlocked() || a.Admin() || a.Is(r.User.ID)
	},
	ReadUserProfile: func(a Actor, r Resource) bool {
		return r.User != nil && (!r.User.PrivateProfile || a.Admin() || a.Is(r.User.ID))
	},
	ListUsers:       func(a Actor, r Resource) bool { return true },
	AdminUsers:      func(a Actor, r Resource) bool { return a.Admin() },
	UpdateOwnStatus: func(a Actor, r Resource) bool { return a.SignedIn() && !a.User.State.IsBlocked() },
	ReadToken: func(a Actor, r Resource) bool {
		return r.Token != nil && (a.Admin() || a.Is(r.Token.UserID))
	},
	RevokeToken: func(a Actor, r Resource) bool {
		return r.Token != nil && (a.Admin() || a.Is(r.Token.UserID))
	},

	ReadProject: readProject,
	ReadCode:    readCode,
	ReadProjectStats: func(a Actor, r Resource) bool {
		return readProject(a, r) && (a.Admin() || r.Access >= model.Reporter)
	},
	UpdateProject: func(a Actor, r Resource) bool { return r.Project != nil && (a.Admin() || r.Access >= model.Maintainer) },
	OwnProject:    func(a Actor, r Resource) bool { return r.Project != nil && (a.Admin() || r.Access >= model.Owner) },
	StarProject:   func(a Actor, r Resource) bool { return a.SignedIn() && readProject(a, r) },
	ForkProject: func(a Actor, r Resource) bool {
		return a.SignedIn() && readCode(a, r) && featureOpen(a, r, r.Project.Settings.ForkingAccessLevel, model.Guest)
	},
	ReadGroup:  readGroup,
	AdminGroup: func(a Actor, r Resource) bool { return r.Group != nil && (a.Admin() || r.Access >= model.Owner) },
	CreateSubgroup: func(a Actor, r Resource) bool {
		if r.Group == nil || !a.SignedIn() {
			return false
		}
		min, ok := creationLevel(r.Group.Settings.SubgroupCreationLevel)
		return a.Admin() || r.Access >= model.Owner || (ok && r.Access >= min)
	},
	CreateProjectInGroup: func(a Actor, r Resource) bool {
		if r.Group == nil || !a.SignedIn() {
			return false
		}
		min, ok := creationLevel(r.Group.Settings.ProjectCreationLevel)
		return a.Admin() || (ok && r.Access >= min)
	},
	CreateTopLevelGroup: func(a Actor, r Resource) bool {
		return a.SignedIn() && (a.Admin() || (a.User.CanCreateGroup && !a.User.External))
	},
	AdminInstance: func(a Actor, r Resource) bool { return a.Admin() },

	ReadMembers: func(a Actor, r Resource) bool {
		if !a.SignedIn() {
			return false
		}
		if r.Project != nil {
			return readProject(a, r)
		}
		return r.Group != nil && (a.Admin() || visible(a, r.Group.Visibility) || r.Access >= 0)
	},
	AdminProjectMembers: func(a Actor, r Resource) bool { return r.Project != nil && (a.Admin() || r.Access >= model.Maintainer) },
	AdminGroupMembers:   func(a Actor, r Resource) bool { return r.Group != nil && (a.Admin() || r.Access >= model.Owner) },
	ReadProtectedBranches: func(a Actor, r Resource) bool {
		return readCode(a, r) && (a.Admin() || r.Access >= model.Developer)
	},
	AdminProtectedBranches: func(a Actor, r Resource) bool {
		return r.Project != nil && (a.Admin() || r.Access >= model.Maintainer)
	},
	PushCode:  pushCode,
	MergeCode: mergeCode,

	ReadPipeline: func(a Actor, r Resource) bool {
		if !ciOpen(a, r) {
			return false
		}
		return a.Admin() || visible(a, r.Project.Visibility) || r.Access >= model.Reporter ||
			(r.Project.Settings.PublicJobs && r.Access >= model.Guest)
	},
	ReadJob: func(a Actor, r Resource) bool {
		return ciOpen(a, r) && (a.Admin() || r.Access >= model.Reporter || r.Project.Settings.PublicJobs)
	},
	ReadRestrictedArtifacts: func(a Actor, r Resource) bool {
		return ciOpen(a, r) && (a.Admin() || r.Access >= model.Developer)
	},
	RunPipeline: func(a Actor, r Resource) bool { return ciWrite(a, r, model.Developer) },
	EraseJob: func(a Actor, r Resource) bool {
		return ciWrite(a, r, model.Maintainer) || (ciWrite(a, r, model.Developer) && r.User != nil && a.Is(r.User.ID))
	},
	DeletePipeline:       func(a Actor, r Resource) bool { return ciOpen(a, r) && (a.Admin() || r.Access >= model.Owner) },
	AdminCI:              func(a Actor, r Resource) bool { return ciOpen(a, r) && (a.Admin() || r.Access >= model.Maintainer) },
	ManageResourceGroups: func(a Actor, r Resource) bool { return ciOpen(a, r) && (a.Admin() || r.Access >= model.Developer) },
	CreateCommitStatus:   func(a Actor, r Resource) bool { return ciWrite(a, r, model.Developer) },
	ReadMergeRequest:     readMergeRequest,
	ReadWiki:             readWiki,
	DownloadWiki:         downloadWiki,
	CreateWiki:           func(a Actor, r Resource) bool { return writeWiki(a, r, model.Developer) },
	AdminWiki:            func(a Actor, r Resource) bool { return writeWiki(a, r, model.Maintainer) },
	CreateMergeRequestIn: func(a Actor, r Resource) bool {
		return a.SignedIn() && readMergeRequest(a, r) && !r.Project.Archived
	},
	UpdateMergeRequest: func(a Actor, r Resource) bool {
		return a.SignedIn() && readMergeRequest(a, r) && !r.Project.Archived &&
			(a.Admin() || r.Access >= model.Developer || (r.User != nil && a.Is(r.User.ID)))
	},
	DeleteMergeRequest: func(a Actor, r Resource) bool {
		return a.SignedIn() && readMergeRequest(a, r) && (a.Admin() || r.Access >= model.Owner)
	},
	ReadIssue: readIssue,
	ReadConfidentialIssues: func(a Actor, r Resource) bool {
		return readIssue(a, r) && (a.Admin() || r.Access >= model.Reporter)
	},
	CreateIssue: func(a Actor, r Resource) bool { return a.SignedIn() && readIssue(a, r) && !r.Project.Archived },
	AdminIssue: func(a Actor, r Resource) bool {
		return a.SignedIn() && readIssue(a, r) && !r.Project.Archived && (a.Admin() || r.Access >= model.Reporter)
	},
	UpdateIssue: func(a Actor, r Resource) bool {
		return a.SignedIn() && readIssue(a, r) && !r.Project.Archived &&
			(a.Admin() || r.Access >= model.Reporter || (r.User != nil && a.Is(r.User.ID)))
	},
	DeleteIssue: func(a Actor, r Resource) bool {
		return a.SignedIn() && readIssue(a, r) && (a.Admin() || r.Access >= model.Owner)
	},
	CreateSnippet:       createSnippet,
	ReadProjectSnippets: snippetsOpen,
	ReadSnippet:         readSnippet,
	UpdateSnippet:       func(a Actor, r Resource) bool { return writeSnippet(a, r, false) },
	AdminSnippet:        func(a Actor, r Resource) bool { return writeSnippet(a, r, true) },
	ReadMilestone:       readMilestone,
	AdminMilestone: func(a Actor, r Resource) bool {
		if !a.SignedIn() || a.Job != nil || !readMilestone(a, r) || (r.Project != nil && r.Project.Archived) {
			return false
		}
		return a.Admin() || r.Access >= model.Reporter
	},
	ReadIssueBoard: readIssueBoard,
	AdminIssueBoard: func(a Actor, r Resource) bool {
		if !a.SignedIn() || a.Job != nil || !readIssueBoard(a, r) || (r.Project != nil && r.Project.Archived) {
			return false
		}
		return a.Admin() || r.Access >= model.Reporter
	},
	ReadRelease:   readCode,
	CreateRelease: writeRelease,
	UpdateRelease: writeRelease,
	DestroyRelease: func(a Actor, r Resource) bool {
		return a.Job == nil && writeRelease(a, r)
	},
	ReadEnvironment:        func(a Actor, r Resource) bool { return ciOpen(a, r) && (a.Admin() || r.Access >= model.Reporter) },
	ReadDeployment:         func(a Actor, r Resource) bool { return ciOpen(a, r) && (a.Admin() || r.Access >= model.Reporter) },
	CreateEnvironment:      func(a Actor, r Resource) bool { return ciWrite(a, r, model.Developer) },
	CreateDeployment:       func(a Actor, r Resource) bool { return ciWrite(a, r, model.Developer) },
	DestroyEnvironment:     func(a Actor, r Resource) bool { return a.Job == nil && ciWrite(a, r, model.Developer) },
	DestroyDeployment:      func(a Actor, r Resource) bool { return a.Job == nil && ciWrite(a, r, model.Maintainer) },
	ReadAlert:              func(a Actor, r Resource) bool { return projectRole(a, r, model.Reporter) },
	UpdateAlert:            func(a Actor, r Resource) bool { return projectRole(a, r, model.Developer) },
	AdminAlertIntegrations: func(a Actor, r Resource) bool { return projectRole(a, r, model.Maintainer) },
	// Error tracking: GitLab's project policy (read_sentry_issue for
	// reporters, update_sentry_issue for developers, admin_operations for
	// maintainers); a job token never reaches them.
	ReadErrors: func(a Actor, r Resource) bool {
		return a.SignedIn() && a.Job == nil && readProject(a, r) && (a.Admin() || r.Access >= model.Reporter)
	},
	UpdateErrors: func(a Actor, r Resource) bool {
		return a.SignedIn() && a.Job == nil && readProject(a, r) && (a.Admin() || r.Access >= model.Developer)
	},
	AdminOperations: func(a Actor, r Resource) bool {
		return a.SignedIn() && a.Job == nil && readProject(a, r) && (a.Admin() || r.Access >= model.Maintainer)
	},
}

// readIssue: a project's issues are read by who reads the project with
// its issues feature open to them (private: members).
func readIssue(a Actor, r Resource) bool {
	return r.Project != nil && featureOpen(a, r, r.Project.IssuesAccessLevel, model.Guest)
}

// readIssueBoard: a group's boards are read by its readers; a project's
// by who may use its issues (issues disabled, project_policy.rb prevents
// every issue_board ability).
func readIssueBoard(a Actor, r Resource) bool {
	if r.Project == nil {
		return readGroup(a, r)
	}
	return featureOpen(a, r, r.Project.IssuesAccessLevel, model.Guest)
}

// readMilestone: a group's milestones are read by its readers; a
// project's by who may use its issues or its merge requests (both
// disabled, project_policy.rb prevents every milestone ability).
func readMilestone(a Actor, r Resource) bool {
	if r.Project == nil {
		return readGroup(a, r)
	}
	return featureOpen(a, r, r.Project.IssuesAccessLevel, model.Guest) ||
		featureOpen(a, r, r.Project.MergeRequestsAccessLevel, model.Reporter)
}

// snippetsOpen: the project's snippets feature is open to the actor (a
// private one to members from Guest up).
func snippetsOpen(a Actor, r Resource) bool {
	return r.Project != nil && featureOpen(a, r, r.Project.Settings.SnippetsAccessLevel, model.Guest)
}

func createSnippet(a Actor, r Resource) bool {
	if !a.SignedIn() || a.Job != nil {
		return false
	}
	if r.Project == nil {
		return a.Admin() || !a.User.External
	}
	return snippetsOpen(a, r) && !r.Project.Archived && (a.Admin() || r.Access >= model.Reporter)
}

// readSnippet: a personal snippet is read by its author, an
// administrator, anyone when public and signed-in users but external ones
// when internal. A project's needs the project's snippets feature open to
// the actor, then: its author, an administrator or a member reads it;
// others by its visibility as for a personal one.
func readSnippet(a Actor, r Resource) bool {
	s := r.Snippet
	if s == nil || (r.Project != nil && !snippetsOpen(a, r)) {
		return false
	}
	if a.Admin() || a.Is(s.AuthorID) || (r.Project != nil && r.Access >= model.Guest) {
		return true
	}
	return visible(a, s.Visibility)
}

// writeSnippet decides updating (and, with admin, deleting) a snippet.
func writeSnippet(a Actor, r Resource, admin bool) bool {
	s := r.Snippet
	if !a.SignedIn() || a.Job != nil || !readSnippet(a, r) {
		return false
	}
	if r.Project == nil {
		return a.Admin() || a.Is(s.AuthorID)
	}
	if r.Project.Archived {
		return false
	}
	switch {
	case a.Admin():
		return true
	case a.Is(s.AuthorID) && (!admin || r.Access >= model.Reporter):
		return true
	}
	return r.Access >= model.Maintainer && s.Visibility != model.Internal
}

// readMergeRequest: merge requests are open to the actor, who reads the
// project's code.
func readMergeRequest(a Actor, r Resource) bool {
	return r.Project != nil && featureOpen(a, r, r.Project.MergeRequestsAccessLevel, model.Reporter) && readCode(a, r)
}

// readWiki: a project's wiki feature is open to the actor (a private one
// to members), or the actor reads the group.
func readWiki(a Actor, r Resource) bool {
	if r.Project != nil {
		return featureOpen(a, r, r.Project.Settings.WikiAccessLevel, model.Guest)
	}
	return readGroup(a, r)
}

// downloadWiki: a project's wiki is cloned by who may read it from
// Reporter up, or reads the project without membership (project_policy.rb
// gives download_wiki_code to reporter_access and public_access only);
// a group's by its readers.
func downloadWiki(a Actor, r Resource) bool {
	if r.Project == nil {
		return readGroup(a, r)
	}
	return readWiki(a, r) && (a.Admin() || r.Access >= model.Reporter || visible(a, r.Project.Visibility))
}

func readGroup(a Actor, r Resource) bool {
	return r.Group != nil && (a.Admin() || visible(a, r.Group.Visibility) || r.Access >= 0)
}

// writeWiki: a signed-in reader of the wiki from min up (or an
// administrator); an archived project's wiki takes no writes.
func writeWiki(a Actor, r Resource, min model.AccessLevel) bool {
	if !a.SignedIn() || a.Job != nil || !readWiki(a, r) || (r.Project != nil && r.Project.Archived) {
		return false
	}
	return a.Admin() || r.Access >= min
}

// ciOpen: the project's repository and CI features are open to the actor.
func ciOpen(a Actor, r Resource) bool {
	return r.Project != nil && featureOpen(a, r, r.Project.Settings.RepositoryAccessLevel, model.Guest) &&
		featureOpen(a, r, r.Project.Settings.BuildsAccessLevel, model.Guest)
}

// ciWrite: a signed-in member from min up (or an administrator) changes
// CI state of a project that is not archived.
func ciWrite(a Actor, r Resource, min model.AccessLevel) bool {
	return a.SignedIn() && ciOpen(a, r) && !r.Project.Archived && (a.Admin() || r.Access >= min)
}

// pushCode decides a write to a branch: an archived project takes none;
// a branch covered by protected branch rules takes pushes from the grants
// of any matching rule; any other branch from developers up.
func pushCode(a Actor, r Resource) bool {
	return branchGrant(a, r, func(rule model.ProtectedBranch) []model.BranchAccess { return rule.Push })
}

// mergeCode decides a merge into a branch: as pushCode, with the merge
// grants of matching rules.
func mergeCode(a Actor, r Resource) bool {
	return branchGrant(a, r, func(rule model.ProtectedBranch) []model.BranchAccess { return rule.Merge })
}

// branchGrant applies the grants (of one kind) of the protected branch
// rules matching r.Branch; a branch no rule covers takes developers up.
func branchGrant(a Actor, r Resource, grants func(model.ProtectedBranch) []model.BranchAccess) bool {
	if r.Project == nil || r.Branch == nil || !a.SignedIn() || r.Project.Archived || !readCode(a, r) {
		return false
	}
	matched := false
	for _, rule := range r.Branch.Rules {
		if !model.MatchesBranch(rule.Name, r.Branch.Name) {
			continue
		}
		matched = true
		for _, g := range grants(rule) {
			switch {
			case g.UserID != nil:
				if a.Is(*g.UserID) && r.Access >= model.Developer {
					return true
				}
			case g.AccessLevel != nil:
				switch lvl := *g.AccessLevel; {
				case lvl == model.NoOneAccess:
				case lvl == model.AdminAccess:
					if a.Admin() {
						return true
					}
				case a.Admin() || r.Access >= lvl:
					return true
				}
			}
		}
	}
	if matched {
		return false
	}
	return a.Admin() || r.Access >= model.Developer
}

// outsideScope is what a CI job keeps on a project it sees (public, or
// internal) whose job token scope refuses it. GitLab's project policy
// then prevents guest, public and member access
// (public_or_internal & ~project_allowed_for_job_token_by_scope) but
// keeps read_project (public_or_internal & job_token_package_registry)
// and read_build where jobs are public (public_builds); git lets the job
// download what an anonymous caller may from a public project
// (GitAccess#guest_can_download_code?) and from an internal one what
// build_download_code gives, which the refusal leaves there (only public
// projects lose public_user_access).
func outsideScope(a Actor, action Action, r Resource) bool {
	switch action {
	case ReadProject:
		return true
	case ReadJob:
		return r.Project.Settings.PublicJobs && ciOpen(a, r)
	case ReadCode, DownloadWiki:
		if r.Project.Visibility == model.Internal {
			return featureOpen(a, r, r.Project.Settings.RepositoryAccessLevel, model.Guest)
		}
		return Can(Anonymous, action, Resource{Project: r.Project, Access: -1})
	}
	return false
}

// Can reports whether actor may do action on resource. Unknown actions are
// denied.
func Can(a Actor, action Action, r Resource) bool {
	if a.Job != nil && r.Project != nil && a.Job.Outside(r.Project.ID) {
		return outsideScope(a, action, r)
	}
	f, ok := rules[action]
	return ok && f(a, r)
}

// projectRole: a signed-in user (no job) with at least role in a project
// it reads, or an administrator.
func projectRole(a Actor, r Resource, role model.AccessLevel) bool {
	return a.SignedIn() && a.Job == nil && readProject(a, r) && (a.Admin() || r.Access >= role)
}

// writeRelease: a signed-in developer (or a job running as one) of a
// project it reads that is not archived, or an administrator.
func writeRelease(a Actor, r Resource) bool {
	return a.SignedIn() && readProject(a, r) && r.Project != nil && !r.Project.Archived &&
		(a.Admin() || r.Access >= model.Developer)
}
