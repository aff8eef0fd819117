package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// feedEvent is an event as the API renders it, push_data included.
type feedEvent struct {
	ID          int64   `json:"id"`
	ProjectID   int64   `json:"project_id"`
	ActionName  string  `json:"action_name"`
	TargetID    *int64  `json:"target_id"`
	TargetIID   *int64  `json:"target_iid"`
	TargetType  *string `json:"target_type"`
	AuthorID    int64   `json:"author_id"`
	TargetTitle *string `json:"target_title"`
	Author      struct {
		Username string `json:"username"`
	} `json:"author"`
	AuthorUsername string  `json:"author_username"`
	Imported       *bool   `json:"imported"`
	ImportedFrom   *string `json:"imported_from"`
	PushData       *struct {
		CommitCount int64   `json:"commit_count"`
		Action      string  `json:"action"`
		RefType     string  `json:"ref_type"`
		CommitFrom  *string `json:"commit_from"`
		CommitTo    *string `json:"commit_to"`
		Ref         *string `json:"ref"`
		CommitTitle *string `json:"commit_title"`
		RefCount    *int64  `json:"ref_count"`
	} `json:"push_data"`
}

func feed(t *testing.T, s *apitest.Server, token, path string) []feedEvent {
	t.Helper()
	var out []feedEvent
	s.Do(t, apitest.Request{Path: path, Token: token}).Want(t, http.StatusOK).JSON(t, &out)
	return out
}

// waitPushes waits (at most 20s) until a project's feed holds n push
// events, and returns them newest first.
func waitPushes(t *testing.T, s *apitest.Server, token string, projectID int64, n int) []feedEvent {
	t.Helper()
	var got []feedEvent
	eventuallyFor(t, 20*time.Second, fmt.Sprintf("%d push events", n), func() bool {
		got = feed(t, s, token, "/projects/"+itoa(projectID)+"/events?action=pushed&per_page=100")
		return len(got) >= n
	})
	if len(got) != n {
		t.Fatalf("%d push events; want %d: %+v", len(got), n, got)
	}
	return got
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestEvents_pushesAndMergeRequests: a project's creation, git pushes
// (new branch, moved branch, tag, deletions, a bulk of tags) and a merge
// request's life (opened, closed, reopened, approved, merged) make the
// feed GitLab makes, with its push payloads, filters and pages.
func TestEvents_pushesAndMergeRequests(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "feeder")
		dev := s.NewUser(t, "feeddev")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "feed", "visibility": "public"}}).
			Want(t, http.StatusCreated).JSON(t, &p)
		c := s.Client(t, owner.Token)

		created := feed(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/events")
		if len(created) != 1 || created[0].ActionName != "created" || created[0].TargetType != nil || created[0].AuthorID != owner.ID ||
			created[0].AuthorUsername != "feeder" || created[0].Author.Username != "feeder" || created[0].PushData != nil ||
			created[0].Imported == nil || *created[0].Imported || str(created[0].ImportedFrom) != "none" {
			t.Fatalf("a new project's feed %+v", created)
		}
		// A member added joins (the event is the member's).
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		if got := feed(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/events?action=joined"); len(got) != 1 || got[0].ActionName != "joined" ||
			got[0].AuthorID != dev.ID || got[0].TargetType != nil {
			t.Fatalf("joined %+v", got)
		}

		// Two commits pushed to a new default branch: "pushed new", both
		// counted, the newest's title.
		work := t.TempDir()
		w := filepath.Join(work, "w")
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "feeder/feed", "feeder", owner.Token), "w"); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		commit := func(msg string) string {
			t.Helper()
			writeFile(t, filepath.Join(w, strings.ReplaceAll(msg, " ", "_")+".txt"), msg+"\n")
			gitRun(w, "add", ".")
			if out, err := gitRun(w, "commit", "-q", "-m", msg); err != nil {
				t.Fatalf("commit: %v\n%s", err, out)
			}
			head, _ := gitRun(w, "rev-parse", "HEAD")
			return trim(head)
		}
		push := func(args ...string) {
			t.Helper()
			if out, err := gitRun(w, append([]string{"push", "-q", "origin"}, args...)...); err != nil {
				t.Fatalf("push %v: %v\n%s", args, err, out)
			}
		}
		gitRun(w, "checkout", "-q", "-b", "main")
		commit("first")
		long := "second " + strings.Repeat("x", 80) + "\n\nbody"
		second := commit(long)
		push("main")
		e := waitPushes(t, s, owner.Token, p.ID, 1)[0]
		wantTitle := ("second " + strings.Repeat("x", 80))[:67] + "..."
		if e.ActionName != "pushed new" || e.PushData == nil || e.PushData.Action != "created" || e.PushData.RefType != "branch" ||
			str(e.PushData.Ref) != "main" || e.PushData.CommitCount != 2 || e.PushData.CommitFrom != nil || str(e.PushData.CommitTo) != second ||
			str(e.PushData.CommitTitle) != wantTitle || e.PushData.RefCount != nil || e.TargetType != nil || e.AuthorID != owner.ID {
			t.Fatalf("first push %+v %+v", e, e.PushData)
		}

		// One more commit on main: "pushed to", from and to.
		third := commit("third")
		push("main")
		e = waitPushes(t, s, owner.Token, p.ID, 2)[0]
		if e.ActionName != "pushed to" || e.PushData.Action != "pushed" || e.PushData.CommitCount != 1 || str(e.PushData.CommitFrom) != second ||
			str(e.PushData.CommitTo) != third || str(e.PushData.CommitTitle) != "third" {
			t.Fatalf("second push %+v %+v", e, e.PushData)
		}

		// A new branch counts the commits not on the default branch; a tag
		// its commit.
		gitRun(w, "checkout", "-q", "-b", "topic")
		topic := commit("topic work")
		gitRun(w, "tag", "v1")
		push("topic", "v1")
		pushes := waitPushes(t, s, owner.Token, p.ID, 4)
		byRef := map[string]feedEvent{}
		for _, e := range pushes[:2] {
			byRef[e.PushData.RefType+":"+str(e.PushData.Ref)] = e
		}
		if e := byRef["branch:topic"]; e.ActionName != "pushed new" || e.PushData.CommitCount != 1 || str(e.PushData.CommitTo) != topic ||
			str(e.PushData.CommitTitle) != "topic work" {
			t.Errorf("branch push %+v", e.PushData)
		}
		if e := byRef["tag:v1"]; e.ActionName != "pushed new" || e.PushData.CommitCount != 1 || str(e.PushData.CommitTo) != topic {
			t.Errorf("tag push %+v", e.PushData)
		}

		// A merge request's life, through the official client.
		mr, _, err := c.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("Topic work"),
			SourceBranch: gitlab.Ptr("topic"), TargetBranch: gitlab.Ptr("main")})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range []string{"close", "reopen"} {
			if _, _, err := c.MergeRequests.UpdateMergeRequest(p.ID, mr.IID, &gitlab.UpdateMergeRequestOptions{StateEvent: gitlab.Ptr(ev)}); err != nil {
				t.Fatalf("%s: %v", ev, err)
			}
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests/%d/approve", p.ID, mr.IID), Token: dev.Token}).
			Want(t, http.StatusCreated)
		eventuallyFor(t, 30*time.Second, "the merge", func() bool {
			_, resp, err := c.MergeRequests.AcceptMergeRequest(p.ID, mr.IID, nil)
			if resp != nil && resp.StatusCode == http.StatusMethodNotAllowed {
				return false
			}
			if err != nil {
				t.Fatal(err)
			}
			return true
		})
		list, resp, err := c.Events.ListProjectVisibleEvents(p.ID, &gitlab.ListProjectVisibleEventsOptions{
			TargetType: gitlab.Ptr(gitlab.EventTargetTypeValue("merge_request")), Sort: gitlab.Ptr("asc")})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range list {
			names = append(names, e.ActionName+"/"+e.AuthorUsername)
			if e.TargetType != "MergeRequest" || e.TargetID != mr.ID || e.TargetIID != mr.IID || e.TargetTitle != "Topic work" {
				t.Errorf("merge request event %+v", e)
			}
		}
		if got, want := strings.Join(names, ","), "opened/feeder,closed/feeder,opened/feeder,approved/feeddev,accepted/feeder"; got != want {
			t.Errorf("merge request events %s; want %s", got, want)
		}
		if resp.Header.Get("X-Total") != "5" {
			t.Errorf("X-Total %q", resp.Header.Get("X-Total"))
		}
		// The merge moved main: a push event of its own.
		pushes = waitPushes(t, s, owner.Token, p.ID, 5)
		if e := pushes[0]; e.ActionName != "pushed to" || str(e.PushData.Ref) != "main" || str(e.PushData.CommitFrom) != third {
			t.Errorf("merge push %+v", e.PushData)
		}

		// Deleting refs is "deleted"; more than three tags at once are one
		// bulk event.
		push(":topic", ":v1")
		pushes = waitPushes(t, s, owner.Token, p.ID, 7)
		for _, e := range pushes[:2] {
			if e.ActionName != "deleted" || e.PushData.Action != "removed" || e.PushData.CommitTo != nil || e.PushData.CommitCount != 0 ||
				e.PushData.CommitFrom == nil {
				t.Errorf("deletion %+v", e.PushData)
			}
		}
		for _, tag := range []string{"b1", "b2", "b3", "b4"} {
			gitRun(w, "tag", tag)
		}
		push("b1", "b2", "b3", "b4")
		e = waitPushes(t, s, owner.Token, p.ID, 8)[0]
		if e.ActionName != "pushed new" || e.PushData.RefType != "tag" || e.PushData.Ref != nil || e.PushData.RefCount == nil ||
			*e.PushData.RefCount != 4 || e.PushData.CommitCount != 0 {
			t.Errorf("bulk push %+v", e.PushData)
		}

		// Filters, order and pages.
		all := feed(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/events?per_page=100")
		if len(all) != 15 { // created, joined, 5 merge request events, 8 pushes
			t.Fatalf("%d events; want 15", len(all))
		}
		for i := 1; i < len(all); i++ {
			if all[i].ID >= all[i-1].ID {
				t.Fatalf("not newest first: %d after %d", all[i].ID, all[i-1].ID)
			}
		}
		r := s.Do(t, apitest.Request{Path: "/projects/" + itoa(p.ID) + "/events?per_page=4&page=2&sort=asc", Token: owner.Token}).Want(t, http.StatusOK)
		var page2 []feedEvent
		r.JSON(t, &page2)
		if r.Header.Get("X-Total") != "15" || r.Header.Get("X-Total-Pages") != "4" || r.Header.Get("X-Page") != "2" || len(page2) != 4 ||
			page2[0].ID != all[10].ID {
			t.Errorf("page 2: headers %v, %d events", r.Header, len(page2))
		}
		today := time.Now().UTC()
		day := func(d time.Time) string { return d.Format("2006-01-02") }
		if got := feed(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/events?after="+day(today.AddDate(0, 0, -1))+"&before="+day(today.AddDate(0, 0, 1))); len(got) != 15 {
			t.Errorf("between yesterday and tomorrow: %d events", len(got))
		}
		for _, q := range []string{"before=" + day(today), "after=" + day(today)} {
			if got := feed(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/events?"+q); len(got) != 0 {
				t.Errorf("%s (exclusive): %d events", q, len(got))
			}
		}
		if got := feed(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/events?action=merged"); len(got) != 1 || got[0].ActionName != "accepted" {
			t.Errorf("action=merged: %+v", got)
		}

		// The user feeds, through the official client.
		own, resp, err := c.Events.ListCurrentUserContributionEvents(&gitlab.ListContributionEventsOptions{
			Action: gitlab.Ptr(gitlab.EventTypeValue("pushed")), ListOptions: gitlab.ListOptions{PerPage: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if len(own) != 3 || resp.TotalItems != 8 || resp.NextPage != 2 || own[0].PushData.RefType != "tag" {
			t.Errorf("own pushes: %d, total %d, next %d", len(own), resp.TotalItems, resp.NextPage)
		}
		devs, _, err := s.Client(t, "").Users.ListUserContributionEvents("feeddev", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(devs) != 2 || devs[0].ActionName != "approved" || devs[1].ActionName != "joined" || devs[0].ProjectID != p.ID {
			t.Errorf("the developer's public feed %+v", devs)
		}
		// A member who leaves left.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/members/%d", p.ID, dev.ID), Token: dev.Token}).
			Want(t, http.StatusNoContent)
		if got := feed(t, s, dev.Token, "/events"); len(got) != 3 || got[0].ActionName != "left" || got[0].ProjectID != p.ID {
			t.Errorf("the developer's own feed after leaving %+v", got)
		}
	})
}

// TestEvents_visibility: a private project's events are its members'
// alone — 404 on its feed for others, left out of its members' user
// feeds for others — and bad filters are GitLab's 400s.
func TestEvents_visibility(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "keeper")
		outsider := s.NewUser(t, "outsider")
		var pub, priv struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "open", "visibility": "public"}}).
			Want(t, http.StatusCreated).JSON(t, &pub)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "closed", "visibility": "private"}}).
			Want(t, http.StatusCreated).JSON(t, &priv)

		s.Do(t, apitest.Request{Path: "/projects/" + itoa(priv.ID) + "/events", Token: outsider.Token}).
			Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Do(t, apitest.Request{Path: "/projects/" + itoa(priv.ID) + "/events"}).Want(t, http.StatusNotFound)
		if got := feed(t, s, owner.Token, "/projects/"+itoa(priv.ID)+"/events"); len(got) != 1 || got[0].ProjectID != priv.ID {
			t.Errorf("the owner's view of the private feed %+v", got)
		}
		projects := func(list []feedEvent) string {
			var ids []string
			for _, e := range list {
				ids = append(ids, itoa(e.ProjectID))
			}
			return strings.Join(ids, ",")
		}
		both, only := itoa(priv.ID)+","+itoa(pub.ID), itoa(pub.ID)
		for _, c := range []struct{ who, token, want string }{
			{"owner", owner.Token, both}, {"outsider", outsider.Token, only}, {"anonymous", "", only}, {"admin", s.RootToken, both},
		} {
			r := s.Do(t, apitest.Request{Path: "/users/keeper/events", Token: c.token}).Want(t, http.StatusOK)
			var list []feedEvent
			r.JSON(t, &list)
			if got := projects(list); got != c.want || r.Header.Get("X-Total") != itoa(int64(len(list))) {
				t.Errorf("%s sees the owner's events of projects %s (X-Total %s); want %s", c.who, got, r.Header.Get("X-Total"), c.want)
			}
		}
		if got := projects(feed(t, s, owner.Token, "/users/"+itoa(owner.ID)+"/events")); got != both {
			t.Errorf("by id: %s", got)
		}
		if got := feed(t, s, outsider.Token, "/events"); len(got) != 0 {
			t.Errorf("the outsider's own feed %+v", got)
		}
		s.Do(t, apitest.Request{Path: "/events"}).Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Path: "/users/nobody-here/events", Token: owner.Token}).Want(t, http.StatusNotFound)

		for _, c := range []struct{ path, want string }{
			{"/events?before=yesterday", `{"error":"before is invalid"}`},
			{"/events?after=2024-13-45", `{"error":"after is invalid"}`},
			{"/events?action=bogus", `{"error":"action does not have a valid value"}`},
			{"/users/keeper/events?target_type=commit", `{"error":"target_type does not have a valid value"}`},
			{"/users/keeper/events?sort=up", `{"error":"sort does not have a valid value"}`},
			{"/projects/" + itoa(pub.ID) + "/events?before=31/12/2024", `{"error":"before is invalid"}`},
		} {
			s.Do(t, apitest.Request{Path: c.path, Token: owner.Token}).Want(t, http.StatusBadRequest).WantBody(t, c.want)
		}
		// The project feed, as GitLab's, ignores an action it does not know.
		if got := feed(t, s, owner.Token, "/projects/"+itoa(pub.ID)+"/events?action=bogus"); len(got) != 1 {
			t.Errorf("unknown action on the project feed: %+v", got)
		}

		// Per event, as GitLab's Event#visible_to_user?: a guest of the
		// private project sees it in the owner's feed, not its pushes (a
		// guest of a private project reads no code); a reporter sees them.
		// X-Total counts the page before this filter, as GitLab's does.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(priv.ID) + "/repository/commits", Token: owner.Token,
			JSON: map[string]any{"branch": "main", "commit_message": "first", "actions": []map[string]any{
				{"action": "create", "file_path": "a.txt", "content": "a"}}}}).Want(t, http.StatusCreated)
		waitPushes(t, s, owner.Token, priv.ID, 1)
		guest, reporter := s.NewUser(t, "peeker"), s.NewUser(t, "teller")
		for _, m := range []struct {
			id    int64
			level int
		}{{guest.ID, 10}, {reporter.ID, 20}} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(priv.ID) + "/members", Token: owner.Token,
				JSON: map[string]any{"user_id": m.id, "access_level": m.level}}).Want(t, http.StatusCreated)
		}
		actions := func(list []feedEvent) string {
			var out []string
			for _, e := range list {
				out = append(out, itoa(e.ProjectID)+":"+e.ActionName)
			}
			return strings.Join(out, ",")
		}
		created, pushed := itoa(priv.ID)+":created", itoa(priv.ID)+":pushed new"
		for _, c := range []struct {
			who, token string
			want       string
		}{
			{"guest", guest.Token, created + "," + itoa(pub.ID) + ":created"},
			{"reporter", reporter.Token, pushed + "," + created + "," + itoa(pub.ID) + ":created"},
		} {
			r := s.Do(t, apitest.Request{Path: "/users/keeper/events", Token: c.token}).Want(t, http.StatusOK)
			var list []feedEvent
			r.JSON(t, &list)
			if got := actions(list); got != c.want || r.Header.Get("X-Total") != "3" {
				t.Errorf("the %s sees the owner's events %s (X-Total %s); want %s (X-Total 3)", c.who, got, r.Header.Get("X-Total"), c.want)
			}
		}
		if got := actions(feed(t, s, guest.Token, "/projects/"+itoa(priv.ID)+"/events?author_id=0")); strings.Contains(got, "pushed") {
			t.Errorf("the guest sees pushes in the project's feed: %s", got)
		}

		// Scopes: read_user reads the user feeds, not a project's.
		ru := s.NewUser(t, "reader", "read_user")
		s.Do(t, apitest.Request{Path: "/events", Token: ru.Token}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Path: "/users/keeper/events", Token: ru.Token}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Path: "/projects/" + itoa(pub.ID) + "/events", Token: ru.Token}).Want(t, http.StatusForbidden)
	})
}

// TestEvents_plans: every feed reads its events through an index — a
// project's by (project_id, id), an author's by (author_id, id) — with
// its filters and in either order, never a whole table.
func TestEvents_plans(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		pc := newPlanChecker(t, s)
		owner := s.NewUser(t, "planner")
		other := s.NewUser(t, "planother")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "plan", "visibility": "private"}}).
			Want(t, http.StatusCreated).JSON(t, &p)
		for _, path := range []string{
			"/projects/" + itoa(p.ID) + "/events",
			"/projects/" + itoa(p.ID) + "/events?action=pushed&sort=asc&page=2&per_page=1",
			"/projects/" + itoa(p.ID) + "/events?target_type=merge_request&before=2030-01-01&after=2020-01-01",
			"/events?action=created",
			"/users/planner/events?sort=asc",
		} {
			pc.check(t, path, owner.Token)
		}
		pc.check(t, "/users/planner/events?page=2&per_page=1", other.Token)
		pc.check(t, "/users/planner/events", "")
	})
}
