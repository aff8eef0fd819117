package auth

import (
	"strings"
	"testing"

	"quarry/internal/model"
)

func TestNewToken(t *testing.T) {
	a, da := NewToken("glpat-")
	b, db := NewToken("glpat-")
	if !strings.HasPrefix(a, "glpat-") || len(a) != len("glpat-")+32 {
		t.Fatalf("token %q", a)
	}
	if a == b || da == db {
		t.Fatal("two tokens are equal")
	}
	if Digest(a) != da || len(da) != 64 {
		t.Fatalf("digest %q", da)
	}
}

func TestPassword(t *testing.T) {
	h, err := HashPassword("correct horse", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword(h, "correct horse") || CheckPassword(h, "wrong") || CheckPassword("", "") {
		t.Fatal("password check is wrong")
	}
}

func TestScopeRule(t *testing.T) {
	tok := func(s ...model.Scope) *model.PersonalAccessToken { return &model.PersonalAccessToken{Scopes: s} }
	readUser := ScopeRule{Extra: []model.Scope{model.ScopeReadUser}}
	cases := []struct {
		name   string
		rule   ScopeRule
		method string
		token  *model.PersonalAccessToken
		want   bool
	}{
		{"api writes", ScopeRule{}, "POST", tok(model.ScopeAPI), true},
		{"read_api reads", ScopeRule{}, "GET", tok(model.ScopeReadAPI), true},
		{"read_api no writes", ScopeRule{}, "POST", tok(model.ScopeReadAPI), false},
		{"read_user on users read", readUser, "GET", tok(model.ScopeReadUser), true},
		{"read_user elsewhere", ScopeRule{}, "GET", tok(model.ScopeReadUser), false},
		{"write_repository no REST", ScopeRule{}, "GET", tok(model.ScopeWriteRepository), false},
		{"sudo alone", ScopeRule{}, "GET", tok(model.ScopeSudo), false},
		{"any", ScopeRule{Any: true}, "DELETE", tok(model.ScopeReadRepository), true},
		{"anonymous", ScopeRule{}, "GET", nil, true},
	}
	for _, c := range cases {
		if got := c.rule.Allows(c.method, c.token); got != c.want {
			t.Errorf("%s: Allows = %v; want %v", c.name, got, c.want)
		}
	}
	if got := ScopeString(readUser.Accepted("GET")); got != "api read_api read_user" {
		t.Errorf("accepted = %q", got)
	}
}

func TestCan(t *testing.T) {
	admin := &model.User{ID: 1, Admin: true, State: model.UserActive}
	alice := &model.User{ID: 2, State: model.UserActive}
	bob := &model.User{ID: 3, State: model.UserActive}
	blocked := &model.User{ID: 4, State: model.UserBlocked}
	private := &model.User{ID: 5, State: model.UserActive, PrivateProfile: true}
	aliceToken := &model.PersonalAccessToken{UserID: 2}
	as := func(u *model.User) Actor { return Actor{User: u} }
	cases := []struct {
		actor  Actor
		action Action
		res    Resource
		want   bool
	}{
		{as(alice), ReadUser, Resource{User: bob}, true},
		{Anonymous, ReadUser, Resource{User: bob}, true},
		{as(alice), ReadUser, Resource{User: blocked}, false},
		{as(admin), ReadUser, Resource{User: blocked}, true},
		{as(blocked), ReadUser, Resource{User: blocked}, true},
		{as(alice), ReadUserProfile, Resource{User: private}, false},
		{as(private), ReadUserProfile, Resource{User: private}, true},
		{as(admin), ReadUserProfile, Resource{User: private}, true},
		{as(alice), AdminUsers, Resource{}, false},
		{as(admin), AdminUsers, Resource{}, true},
		{Anonymous, UpdateOwnStatus, Resource{}, false},
		{as(alice), UpdateOwnStatus, Resource{}, true},
		{as(alice), ReadToken, Resource{Token: aliceToken}, true},
		{as(bob), ReadToken, Resource{Token: aliceToken}, false},
		{as(admin), RevokeToken, Resource{Token: aliceToken}, true},
		{as(bob), RevokeToken, Resource{Token: aliceToken}, false},
		{as(admin), Action("nonsense"), Resource{}, false},
	}
	for i, c := range cases {
		if got := Can(c.actor, c.action, c.res); got != c.want {
			t.Errorf("case %d: Can(%v, %s) = %v; want %v", i, c.actor.UserID(), c.action, got, c.want)
		}
	}
}

func TestCan_projectRoles(t *testing.T) {
	lvl := func(l model.AccessLevel) *model.AccessLevel { return &l }
	rules := []model.ProtectedBranch{
		{Name: "main", Push: []model.BranchAccess{{AccessLevel: lvl(model.Maintainer)}}},
		{Name: "release/*", Push: []model.BranchAccess{{AccessLevel: lvl(model.Developer)}}},
		{Name: "frozen", Push: []model.BranchAccess{{AccessLevel: lvl(model.NoOneAccess)}}},
	}
	roles := []struct {
		name   string
		actor  Actor
		access model.AccessLevel
	}{
		{"anonymous", Anonymous, 0},
		{"external", Actor{User: &model.User{ID: 9, External: true}}, 0},
		{"user", Actor{User: &model.User{ID: 9}}, 0},
		{"guest", Actor{User: &model.User{ID: 9}}, model.Guest},
		{"reporter", Actor{User: &model.User{ID: 9}}, model.Reporter},
		{"developer", Actor{User: &model.User{ID: 9}}, model.Developer},
		{"maintainer", Actor{User: &model.User{ID: 9}}, model.Maintainer},
		{"owner", Actor{User: &model.User{ID: 9}}, model.Owner},
		{"admin", Actor{User: &model.User{ID: 1, Admin: true}}, 0},
	}
	// want[action][visibility] lists the roles allowed, in the order above.
	type cell map[model.Visibility]string
	want := map[string]cell{
		"read":         {model.Public: "anonymous external user guest reporter developer maintainer owner admin", model.Internal: "user guest reporter developer maintainer owner admin", model.Private: "guest reporter developer maintainer owner admin"},
		"read_code":    {model.Public: "anonymous external user guest reporter developer maintainer owner admin", model.Internal: "user guest reporter developer maintainer owner admin", model.Private: "reporter developer maintainer owner admin"},
		"push_feature": {model.Public: "developer maintainer owner admin", model.Internal: "developer maintainer owner admin", model.Private: "developer maintainer owner admin"},
		"push_main":    {model.Public: "maintainer owner admin", model.Internal: "maintainer owner admin", model.Private: "maintainer owner admin"},
		"push_release": {model.Public: "developer maintainer owner admin", model.Internal: "developer maintainer owner admin", model.Private: "developer maintainer owner admin"},
		"push_frozen":  {model.Public: "", model.Internal: "", model.Private: ""},
		"members":      {model.Public: "maintainer owner admin", model.Internal: "maintainer owner admin", model.Private: "maintainer owner admin"},
		"settings":     {model.Public: "maintainer owner admin", model.Internal: "maintainer owner admin", model.Private: "maintainer owner admin"},
		"delete":       {model.Public: "owner admin", model.Internal: "owner admin", model.Private: "owner admin"},
		"read_members": {model.Public: "external user guest reporter developer maintainer owner admin", model.Internal: "user guest reporter developer maintainer owner admin", model.Private: "guest reporter developer maintainer owner admin"},
		"protect":      {model.Public: "maintainer owner admin", model.Internal: "maintainer owner admin", model.Private: "maintainer owner admin"},
		"read_wiki":    {model.Public: "anonymous external user guest reporter developer maintainer owner admin", model.Internal: "user guest reporter developer maintainer owner admin", model.Private: "guest reporter developer maintainer owner admin"},
		"create_wiki":  {model.Public: "developer maintainer owner admin", model.Internal: "developer maintainer owner admin", model.Private: "developer maintainer owner admin"},
		"admin_wiki":   {model.Public: "maintainer owner admin", model.Internal: "maintainer owner admin", model.Private: "maintainer owner admin"},
	}
	branch := func(name string) *Branch { return &Branch{Name: name, Rules: rules} }
	check := map[string]func(a Actor, r Resource) bool{
		"read":         func(a Actor, r Resource) bool { return Can(a, ReadProject, r) },
		"read_code":    func(a Actor, r Resource) bool { return Can(a, ReadCode, r) },
		"push_feature": func(a Actor, r Resource) bool { r.Branch = branch("feature"); return Can(a, PushCode, r) },
		"push_main":    func(a Actor, r Resource) bool { r.Branch = branch("main"); return Can(a, PushCode, r) },
		"push_release": func(a Actor, r Resource) bool { r.Branch = branch("release/2.0"); return Can(a, PushCode, r) },
		"push_frozen":  func(a Actor, r Resource) bool { r.Branch = branch("frozen"); return Can(a, PushCode, r) },
		"members":      func(a Actor, r Resource) bool { return Can(a, AdminProjectMembers, r) },
		"settings":     func(a Actor, r Resource) bool { return Can(a, UpdateProject, r) },
		"delete":       func(a Actor, r Resource) bool { return Can(a, OwnProject, r) },
		"read_members": func(a Actor, r Resource) bool { return Can(a, ReadMembers, r) },
		"protect":      func(a Actor, r Resource) bool { return Can(a, AdminProtectedBranches, r) },
		"read_wiki":    func(a Actor, r Resource) bool { return Can(a, ReadWiki, r) },
		"create_wiki":  func(a Actor, r Resource) bool { return Can(a, CreateWiki, r) },
		"admin_wiki":   func(a Actor, r Resource) bool { return Can(a, AdminWiki, r) },
	}
	for action, cells := range want {
		for vis, allowed := range cells {
			p := &model.Project{Visibility: vis, Settings: model.DefaultProjectSettings()}
			for _, role := range roles {
				got := check[action](role.actor, Resource{Project: p, Access: role.access})
				exp := strings.Contains(" "+allowed+" ", " "+role.name+" ")
				if got != exp {
					t.Errorf("%s on %s project as %s: %v; want %v", action, vis, role.name, got, exp)
				}
			}
		}
	}
	// Archived projects take no pushes.
	p := &model.Project{Visibility: model.Public, Archived: true, Settings: model.DefaultProjectSettings()}
	if Can(roles[6].actor, PushCode, Resource{Project: p, Access: model.Maintainer, Branch: branch("feature")}) {
		t.Error("push to an archived project")
	}
}

// TestCan_wikiFeature: the wiki feature's access level and the project's
// archiving limit project wikis; group wikis follow the group.
func TestCan_wikiFeature(t *testing.T) {
	dev := Actor{User: &model.User{ID: 9}}
	guest := Actor{User: &model.User{ID: 9}}
	admin := Actor{User: &model.User{ID: 1, Admin: true}}
	project := func(level string, archived bool) *model.Project {
		st := model.DefaultProjectSettings()
		st.WikiAccessLevel = level
		return &model.Project{Visibility: model.Public, Settings: st, Archived: archived}
	}
	group := func(v model.Visibility) *model.Group { return &model.Group{Namespace: model.Namespace{Visibility: v}} }
	cases := []struct {
		name   string
		a      Actor
		action Action
		r      Resource
		want   bool
	}{
		{"disabled wiki unreadable to its developer", dev, ReadWiki, Resource{Project: project("disabled", false), Access: model.Developer}, false},
		{"disabled wiki unreadable to an administrator", admin, ReadWiki, Resource{Project: project("disabled", false), Access: -1}, false},
		{"private wiki readable to a guest", guest, ReadWiki, Resource{Project: project("private", false), Access: model.Guest}, true},
		{"private wiki unreadable to a non-member", Anonymous, ReadWiki, Resource{Project: project("private", false), Access: -1}, false},
		{"archived project's wiki takes no edits", dev, CreateWiki, Resource{Project: project("enabled", true), Access: model.Owner}, false},
		{"archived project's wiki is still read", Anonymous, ReadWiki, Resource{Project: project("enabled", true), Access: -1}, true},
		{"public group wiki read by anyone", Anonymous, ReadWiki, Resource{Group: group(model.Public), Access: -1}, true},
		{"private group wiki hidden from non-members", dev, ReadWiki, Resource{Group: group(model.Private), Access: -1}, false},
		{"group developer edits", dev, CreateWiki, Resource{Group: group(model.Private), Access: model.Developer}, true},
		{"group reporter does not edit", dev, CreateWiki, Resource{Group: group(model.Public), Access: model.Reporter}, false},
		{"group developer does not delete", dev, AdminWiki, Resource{Group: group(model.Public), Access: model.Developer}, false},
		{"group maintainer deletes", dev, AdminWiki, Resource{Group: group(model.Public), Access: model.Maintainer}, true},
		{"anonymous never edits", Anonymous, CreateWiki, Resource{Group: group(model.Public), Access: -1}, false},
	}
	for _, c := range cases {
		if got := Can(c.a, c.action, c.r); got != c.want {
			t.Errorf("%s: got %v; want %v", c.name, got, c.want)
		}
	}
}

// TestCan_privateFeatures: a feature set to private opens to members of
// GitLab's minimum role for it (Guest; Reporter for merge requests),
// whatever the project's visibility; guests of a private project still
// read no code, since download_code is a reporter's there.
func TestCan_privateFeatures(t *testing.T) {
	user := Actor{User: &model.User{ID: 9}}
	admin := Actor{User: &model.User{ID: 1, Admin: true}}
	project := func(vis model.Visibility) *model.Project {
		st := model.DefaultProjectSettings()
		st.RepositoryAccessLevel, st.BuildsAccessLevel, st.WikiAccessLevel = "private", "private", "private"
		return &model.Project{Visibility: vis, Settings: st, MergeRequestsAccessLevel: "private"}
	}
	cases := []struct {
		name   string
		a      Actor
		vis    model.Visibility
		access model.AccessLevel
		action Action
		want   bool
	}{
		{"guest reads the private repository of a public project", user, model.Public, model.Guest, ReadCode, true},
		{"guest reads its pipelines", user, model.Public, model.Guest, ReadPipeline, true},
		{"guest reads its jobs", user, model.Public, model.Guest, ReadJob, true},
		{"guest reads its wiki", user, model.Public, model.Guest, ReadWiki, true},
		{"guest does not read its merge requests", user, model.Public, model.Guest, ReadMergeRequest, false},
		{"reporter reads its merge requests", user, model.Public, model.Reporter, ReadMergeRequest, true},
		{"non-member does not read the repository", user, model.Public, -1, ReadCode, false},
		{"non-member does not read the jobs", user, model.Public, -1, ReadJob, false},
		{"anonymous does not read the pipelines", Anonymous, model.Public, -1, ReadPipeline, false},
		{"non-member still reads the project", user, model.Public, -1, ReadProject, true},
		{"guest of a private project reads no code", user, model.Private, model.Guest, ReadCode, false},
		{"guest of a private project reads its pipelines (public jobs)", user, model.Private, model.Guest, ReadPipeline, true},
		{"administrator reads everything", admin, model.Public, -1, ReadMergeRequest, true},
	}
	for _, c := range cases {
		if got := Can(c.a, c.action, Resource{Project: project(c.vis), Access: c.access}); got != c.want {
			t.Errorf("%s: got %v; want %v", c.name, got, c.want)
		}
	}
}

// TestCan_downloadWiki: cloning a wiki wants download_wiki_code, which a
// guest of a private project lacks though it reads the pages.
func TestCan_downloadWiki(t *testing.T) {
	user := Actor{User: &model.User{ID: 9}}
	external := Actor{User: &model.User{ID: 9, External: true}}
	project := func(vis model.Visibility, wiki string) *model.Project {
		st := model.DefaultProjectSettings()
		st.WikiAccessLevel = wiki
		return &model.Project{Visibility: vis, Settings: st}
	}
	cases := []struct {
		name   string
		a      Actor
		p      *model.Project
		access model.AccessLevel
		want   bool
	}{
		{"guest of a private project", user, project(model.Private, "enabled"), model.Guest, false},
		{"reporter of a private project", user, project(model.Private, "enabled"), model.Reporter, true},
		{"anonymous, public project", Anonymous, project(model.Public, "enabled"), -1, true},
		{"non-member, internal project", user, project(model.Internal, "enabled"), -1, true},
		{"external guest, internal project", external, project(model.Internal, "enabled"), model.Guest, false},
		{"guest, public project, private wiki", user, project(model.Public, "private"), model.Guest, true},
		{"non-member, public project, private wiki", user, project(model.Public, "private"), -1, false},
		{"developer, disabled wiki", user, project(model.Public, "disabled"), model.Developer, false},
	}
	for _, c := range cases {
		r := Resource{Project: c.p, Access: c.access}
		if got := Can(c.a, DownloadWiki, r); got != c.want {
			t.Errorf("%s: got %v; want %v", c.name, got, c.want)
		}
		if Can(c.a, DownloadWiki, r) && !Can(c.a, ReadWiki, r) {
			t.Errorf("%s: downloads a wiki it does not read", c.name)
		}
	}
}

// TestCan_jobOutsideScope: a CI job on a project it sees whose job token
// scope refuses it keeps reading the project, public jobs, and what git
// gives it there; nothing else, whatever its user's role. Other projects
// are not concerned.
func TestCan_jobOutsideScope(t *testing.T) {
	job := &JobActor{ID: 1, ProjectID: 2}
	a := Actor{User: &model.User{ID: 9}, Job: job}
	project := func(id int64, vis model.Visibility, publicJobs bool, repo string) *model.Project {
		st := model.DefaultProjectSettings()
		st.PublicJobs, st.RepositoryAccessLevel = publicJobs, repo
		return &model.Project{ID: id, Visibility: vis, Settings: st}
	}
	pub, internal := project(10, model.Public, true, "enabled"), project(11, model.Internal, true, "enabled")
	closedJobs, privateRepo := project(12, model.Public, false, "enabled"), project(13, model.Public, true, "private")
	other := project(14, model.Public, true, "enabled")
	for _, p := range []*model.Project{pub, internal, closedJobs, privateRepo} {
		job.SetOutside(p.ID)
	}
	cases := []struct {
		name   string
		p      *model.Project
		action Action
		want   bool
	}{
		{"reads the project", pub, ReadProject, true},
		{"reads public jobs", pub, ReadJob, true},
		{"reads no jobs that are not public", closedJobs, ReadJob, false},
		{"reads no pipelines", pub, ReadPipeline, false},
		{"clones a public project's code as anyone", pub, ReadCode, true},
		{"clones no private repository of a public project", privateRepo, ReadCode, false},
		{"clones an internal project's code", internal, ReadCode, true},
		{"clones a public wiki", pub, DownloadWiki, true},
		{"reads no merge requests", pub, ReadMergeRequest, false},
		{"runs no pipeline", pub, RunPipeline, false},
		{"a project the scope admits is a developer's", other, RunPipeline, true},
	}
	for _, c := range cases {
		if got := Can(a, c.action, Resource{Project: c.p, Access: model.Developer}); got != c.want {
			t.Errorf("%s: got %v; want %v", c.name, got, c.want)
		}
	}
}

// TestCan_readRestrictedArtifacts: artifacts:access developer (or
// public: false) opens a job's archive to developers and up only.
func TestCan_readRestrictedArtifacts(t *testing.T) {
	user := Actor{User: &model.User{ID: 9}}
	admin := Actor{User: &model.User{ID: 1, Admin: true}}
	public := &model.Project{Visibility: model.Public, Settings: model.DefaultProjectSettings()}
	closed := &model.Project{Visibility: model.Public, Settings: model.DefaultProjectSettings()}
	closed.Settings.BuildsAccessLevel = "disabled"
	for _, c := range []struct {
		name   string
		a      Actor
		p      *model.Project
		access model.AccessLevel
		want   bool
	}{
		{"anonymous", Anonymous, public, -1, false},
		{"non-member", user, public, -1, false},
		{"guest", user, public, model.Guest, false},
		{"reporter", user, public, model.Reporter, false},
		{"developer", user, public, model.Developer, true},
		{"maintainer", user, public, model.Maintainer, true},
		{"administrator", admin, public, -1, true},
		{"developer, CI/CD disabled", user, closed, model.Developer, false},
	} {
		if got := Can(c.a, ReadRestrictedArtifacts, Resource{Project: c.p, Access: c.access}); got != c.want {
			t.Errorf("%s: got %v; want %v", c.name, got, c.want)
		}
	}
}
