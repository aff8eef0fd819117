package e2e

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/auth"
	"quarry/internal/issues"
	"quarry/internal/model"
)

// Issues end to end: GitLab's Issues API on both databases — the entity,
// create, read, edit, close, reopen and delete, every list filter, pages,
// permissions (members' roles, non-members, anonymous callers, the
// project's issues feature), confidential issues, validation, and what
// issues make true elsewhere (counts, milestones, labels, events).

// issWorld is a public group "iss" with a project "iss/app" owned by
// owner, a reporter, a guest and a stranger (no membership).
type issWorld struct {
	s                                *apitest.Server
	owner, reporter, guest, stranger apitest.User
	group, project                   int64
	base                             string // /projects/:id/issues
}

func newIssWorld(t *testing.T, s *apitest.Server, vis string) issWorld {
	t.Helper()
	w := issWorld{s: s, owner: s.NewUser(t, "issowner"), reporter: s.NewUser(t, "issreporter"), guest: s.NewUser(t, "issguest"),
		stranger: s.NewUser(t, "issstranger")}
	var g, p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: w.owner.Token,
		JSON: map[string]any{"name": "iss", "path": "iss", "visibility": vis}}).Want(t, 201).JSON(t, &g)
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: w.owner.Token,
		JSON: map[string]any{"name": "app", "namespace_id": g.ID, "visibility": vis}}).Want(t, 201).JSON(t, &p)
	w.group, w.project = g.ID, p.ID
	w.base = "/projects/" + itoa(p.ID) + "/issues"
	for _, m := range []struct {
		u     apitest.User
		level int
	}{{w.reporter, 20}, {w.guest, 10}} {
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: w.owner.Token,
			JSON: map[string]any{"user_id": m.u.ID, "access_level": m.level}}).Want(t, 201)
	}
	return w
}

func (w issWorld) do(t *testing.T, method, path, token string, body map[string]any) *apitest.Response {
	t.Helper()
	return w.s.Do(t, apitest.Request{Method: method, Path: w.base + path, Token: token, JSON: body})
}

func (w issWorld) create(t *testing.T, token string, body map[string]any) map[string]any {
	t.Helper()
	return w.do(t, "POST", "", token, body).Want(t, 201).Object(t)
}

// iids lists the iids of a list response, in order.
func issIIDs(t *testing.T, r *apitest.Response) string {
	t.Helper()
	var out []string
	for _, i := range r.Array(t) {
		out = append(out, fmt.Sprint(i["iid"]))
	}
	return strings.Join(out, ",")
}

func TestIssues_crud(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		c := s.Client(t, w.owner.Token)
		due := gitlab.ISOTime(time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC))
		iss, resp, err := c.Issues.CreateIssue(int(w.project), &gitlab.CreateIssueOptions{
			Title: gitlab.Ptr("  First bug "), Description: gitlab.Ptr("- [x] one\n- [ ] two\n"),
			Labels: &gitlab.LabelOptions{"bug", "ui"}, AssigneeIDs: &[]int64{w.reporter.ID}, DueDate: &due})
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("create: %v", err)
		}
		if iss.IID != 1 || iss.ProjectID != w.project || iss.Title != "First bug" || iss.State != "opened" ||
			iss.Author == nil || iss.Author.Username != "issowner" || len(iss.Assignees) != 1 || iss.Assignees[0].Username != "issreporter" ||
			strings.Join(iss.Labels, ",") != "bug,ui" ||
			iss.DueDate == nil || time.Time(*iss.DueDate).Format("2006-01-02") != "2030-01-02" ||
			iss.WebURL != s.URL+"/iss/app/-/issues/1" || iss.TaskCompletionStatus == nil || iss.TaskCompletionStatus.Count != 2 ||
			iss.TaskCompletionStatus.CompletedCount != 1 || iss.Links == nil ||
			iss.Links.Self != fmt.Sprintf("%s/api/v4/projects/%d/issues/1", s.URL, w.project) ||
			iss.References == nil || iss.References.Short != "#1" || iss.References.Full != "iss/app#1" || iss.Confidential ||
			iss.ClosedAt != nil || iss.ClosedBy != nil || iss.IssueType == nil || *iss.IssueType != "issue" {
			t.Errorf("created %+v", iss)
		}
		// The raw entity: GitLab's keys and types.
		raw := w.do(t, "GET", "/1", w.owner.Token, nil).Want(t, 200).Object(t)
		for k, want := range map[string]any{"type": "ISSUE", "issue_type": "issue", "user_notes_count": 0.0, "merge_requests_count": 0.0,
			"upvotes": 0.0, "downvotes": 0.0, "has_tasks": true, "task_status": "1 of 2 checklist items completed",
			"severity": "UNKNOWN", "subscribed": true, "moved_to_id": nil, "discussion_locked": false, "confidential": false,
			"milestone": nil, "closed_by": nil, "closed_at": nil, "due_date": "2030-01-02", "service_desk_reply_to": nil} {
			if got, ok := raw[k]; !ok || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s = %v (present %v); want %v", k, got, ok, want)
			}
		}
		if a, _ := raw["assignee"].(map[string]any); a == nil || a["id"] != float64(w.reporter.ID) {
			t.Errorf("assignee %v", raw["assignee"])
		}
		links := raw["_links"].(map[string]any)
		api := fmt.Sprintf("%s/api/v4/projects/%d", s.URL, w.project)
		if links["notes"] != api+"/issues/1/notes" || links["award_emoji"] != api+"/issues/1/award_emoji" || links["project"] != api ||
			links["closed_as_duplicate_of"] != nil {
			t.Errorf("_links %v", links)
		}
		ts := raw["time_stats"].(map[string]any)
		if ts["time_estimate"] != 0.0 || ts["total_time_spent"] != 0.0 || ts["human_time_estimate"] != nil {
			t.Errorf("time_stats %v", ts)
		}
		// Labels that did not exist were created as project labels.
		var labels []struct{ Name string }
		s.Get(t, "/projects/"+itoa(w.project)+"/labels", w.owner.Token).Want(t, 200).JSON(t, &labels)
		if len(labels) != 2 || labels[0].Name != "bug" || labels[1].Name != "ui" {
			t.Errorf("labels %+v", labels)
		}

		// Edit, close, reopen: updated_at moves, the closer is recorded.
		before := raw["updated_at"].(string)
		time.Sleep(5 * time.Millisecond)
		upd, _, err := c.Issues.UpdateIssue(int(w.project), 1, &gitlab.UpdateIssueOptions{Title: gitlab.Ptr("Renamed"),
			AddLabels: &gitlab.LabelOptions{"p1"}, RemoveLabels: &gitlab.LabelOptions{"ui"}, StateEvent: gitlab.Ptr("close"),
			DiscussionLocked: gitlab.Ptr(true)})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if upd.Title != "Renamed" || upd.State != "closed" || upd.ClosedBy == nil || upd.ClosedBy.ID != w.owner.ID ||
			upd.ClosedAt == nil || strings.Join(upd.Labels, ",") != "bug,p1" || !upd.DiscussionLocked ||
			upd.UpdatedAt.Format(time.RFC3339Nano) == before {
			t.Errorf("updated %+v (updated_at was %s)", upd, before)
		}
		re, _, err := c.Issues.UpdateIssue(int(w.project), 1, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("reopen"),
			AssigneeIDs: &[]int64{}, DueDate: nil})
		if err != nil || re.State != "opened" || re.ClosedBy != nil || re.ClosedAt != nil || len(re.Assignees) != 0 {
			t.Errorf("reopened %+v, %v", re, err)
		}
		if got := w.do(t, "GET", "/1", w.owner.Token, nil).Want(t, 200).Object(t)["assignee"]; got != nil {
			t.Errorf("assignee %v with no assignees", got)
		}
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"due_date": nil}).Want(t, 200)
		if got := w.do(t, "GET", "/1", w.owner.Token, nil).Want(t, 200).Object(t)["due_date"]; got != nil {
			t.Errorf("due_date %v after clearing", got)
		}
		// Nothing to change: GitLab's at-least-one message.
		if got := w.do(t, "PUT", "/1", w.owner.Token, map[string]any{}).Want(t, 400).Object(t)["error"]; !strings.Contains(fmt.Sprint(got), "at least one parameter must be provided") {
			t.Errorf("empty update: %v", got)
		}

		// Lists: the project's, the group's, the caller's own.
		list, _, err := c.Issues.ListProjectIssues(int(w.project), &gitlab.ListProjectIssuesOptions{})
		if err != nil || len(list) != 1 || list[0].IID != 1 {
			t.Fatalf("project list %+v, %v", list, err)
		}
		if r := s.Get(t, "/projects/"+itoa(w.project)+"/issues", w.owner.Token).Want(t, 200); r.Header.Get("X-Total") != "1" {
			t.Errorf("X-Total %q", r.Header.Get("X-Total"))
		} else if _, ok := r.Array(t)[0]["subscribed"]; ok {
			t.Errorf("subscribed in a list")
		}
		if got := issIIDs(t, s.Get(t, "/groups/"+itoa(w.group)+"/issues", w.stranger.Token).Want(t, 200)); got != "1" {
			t.Errorf("group list %s", got)
		}
		if got := issIIDs(t, s.Get(t, "/issues", w.owner.Token).Want(t, 200)); got != "1" {
			t.Errorf("own list %s", got)
		}
		if got := issIIDs(t, s.Get(t, "/issues", w.stranger.Token).Want(t, 200)); got != "" {
			t.Errorf("stranger's own list %s", got)
		}
		if got := issIIDs(t, s.Get(t, "/issues?scope=all", w.stranger.Token).Want(t, 200)); got != "1" {
			t.Errorf("stranger's scope=all %s", got)
		}
		s.Get(t, "/issues", "").Want(t, 401)

		// Delete: owners only.
		w.do(t, "DELETE", "/1", w.reporter.Token, nil).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		if _, err := c.Issues.DeleteIssue(int(w.project), 1); err != nil {
			t.Fatalf("delete: %v", err)
		}
		w.do(t, "GET", "/1", w.owner.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Issue Not Found"}`)
		w.do(t, "DELETE", "/1", w.owner.Token, nil).Want(t, 404)
		// iids are not reused.
		if got := w.create(t, w.owner.Token, map[string]any{"title": "second"})["iid"]; got != 2.0 {
			t.Errorf("next iid %v", got)
		}
	})
}

func TestIssues_validation(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		w.do(t, "POST", "", w.owner.Token, map[string]any{"description": "x"}).Want(t, 400).WantBody(t, `{"error":"title is missing"}`)
		w.do(t, "POST", "", w.owner.Token, map[string]any{"title": "   "}).Want(t, 400).
			WantBody(t, `{"message":{"title":["can't be blank"]}}`)
		w.do(t, "POST", "", w.owner.Token, map[string]any{"title": strings.Repeat("é", 256)}).Want(t, 400).
			WantBody(t, `{"message":{"title":["is too long (maximum is 255 characters)"]}}`)
		w.create(t, w.owner.Token, map[string]any{"title": strings.Repeat("é", 255)})
		w.do(t, "POST", "", w.owner.Token, map[string]any{"title": "t", "description": strings.Repeat("d", 1<<20+1)}).Want(t, 400).
			WantBody(t, `{"message":{"description":["is too long (maximum is 1048576 characters)"]}}`)
		w.do(t, "POST", "", w.owner.Token, map[string]any{"title": "t", "due_date": "not a date"}).Want(t, 400).
			WantBody(t, `{"error":"due_date is invalid"}`)
		w.do(t, "POST", "", w.owner.Token, map[string]any{"title": "t", "assignee_ids": "x"}).Want(t, 400).
			WantBody(t, `{"error":"assignee_ids is invalid"}`)
		// A milestone that is not the project's (or its groups') is none,
		// as GitLab has it.
		if got := w.create(t, w.owner.Token, map[string]any{"title": "t", "milestone_id": 999999})["milestone"]; got != nil {
			t.Errorf("an unknown milestone: %v", got)
		}
		var other struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: w.owner.Token, JSON: map[string]any{"name": "other"}}).
			Want(t, 201).JSON(t, &other)
		foreign := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(other.ID) + "/milestones", Token: w.owner.Token,
			JSON: map[string]any{"title": "elsewhere"}}).Want(t, 201).Object(t)
		if got := w.create(t, w.owner.Token, map[string]any{"title": "t", "milestone_id": foreign["id"]})["milestone"]; got != nil {
			t.Errorf("another project's milestone: %v", got)
		}
		// iid is ignored: the next one is handed out.
		if got := w.create(t, w.owner.Token, map[string]any{"title": "t", "iid": 77})["iid"]; got != 4.0 {
			t.Errorf("iid %v", got)
		}
		for _, q := range []string{"state=nope", "order_by=nope", "sort=up", "created_after=yesterday", "updated_before=x",
			"iids[]=x", "assignee_id=x", "author_id=x", "confidential=maybe", "page=x"} {
			if r := w.do(t, "GET", "?"+q, w.owner.Token, nil); r.Status != 400 {
				t.Errorf("?%s: status %d; want 400", q, r.Status)
			}
		}
		ids := make([]string, 101)
		for i := range ids {
			ids[i] = "iids[]=" + fmt.Sprint(i+1)
		}
		w.do(t, "GET", "?"+strings.Join(ids, "&"), w.owner.Token, nil).Want(t, 400)
		w.do(t, "GET", "/x", w.owner.Token, nil).Want(t, 404)
		w.do(t, "GET", "/99999999999999999999", w.owner.Token, nil).Want(t, 404)
		w.do(t, "GET", "/0", w.owner.Token, nil).Want(t, 404)
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"state_event": "explode"}).Want(t, 400).
			WantBody(t, `{"error":"state_event does not have a valid value"}`)
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"title": ""}).Want(t, 400).
			WantBody(t, `{"message":{"title":["can't be blank"]}}`)
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"due_date": "2030-13-45"}).Want(t, 400)
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"labels": issManyLabels(60)}).Want(t, 400)
		s.Get(t, "/projects/999999/issues", w.owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		// Bytes that are not text, cursors Quarry did not make: the
		// caller's error, never a 500.
		s.Do(t, apitest.Request{Method: "POST", Path: w.base, Token: w.owner.Token, Form: url.Values{"title": {"bad\xff\xfe"}}}).
			Want(t, 400).WantBody(t, `{"error":"title is invalid"}`)
		for _, body := range []map[string]any{{"title": "a\x00b"}, {"title": "ok", "description": "a\x00b"}, {"title": "ok", "labels": "a\x00b"}} {
			if r := w.do(t, "POST", "", w.owner.Token, body); r.Status >= 500 {
				t.Errorf("NUL in %v: %d %s", body, r.Status, r.Body)
			}
		}
		for _, q := range []string{
			"pagination=keyset&order_by=created_at&cursor=eyJrIjoiYWJjIiwiaWQiOjF9", // {"k":"abc","id":1}
			"pagination=keyset&order_by=title&cursor=eyJrIjo1LCJpZCI6MX0",           // {"k":5,"id":1}
			"pagination=keyset&order_by=due_date&cursor=eyJrIjo1LCJpZCI6MX0",
		} {
			w.do(t, "GET", "?"+q, w.owner.Token, nil).Want(t, 400).WantBody(t, `{"error":"cursor is invalid"}`)
		}
		if r := w.do(t, "GET", "?search="+strings.Repeat("%25", 3000), w.owner.Token, nil); r.Status >= 500 {
			t.Errorf("long search: %d", r.Status)
		}
	})
}

func TestIssues_filters(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		ms := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/milestones", Token: w.owner.Token,
			JSON: map[string]any{"title": "v1"}}).Want(t, 201).Object(t)
		gms := s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(w.group) + "/milestones", Token: w.owner.Token,
			JSON: map[string]any{"title": "g1"}}).Want(t, 201).Object(t)
		// 1: owner's, bug, milestone v1, assigned to the reporter, due 2030-03-01
		// 2: reporter's, bug+ui, group milestone, closed, due 2030-01-01
		// 3: guest's, no label, no milestone, confidential? no; searchable description
		// 4: owner's, confidential, ui
		w.create(t, w.owner.Token, map[string]any{"title": "Alpha crash", "labels": "bug", "milestone_id": ms["id"],
			"assignee_ids": []int64{w.reporter.ID}, "due_date": "2030-03-01"})
		w.create(t, w.reporter.Token, map[string]any{"title": "Beta glitch", "labels": "bug,ui", "milestone_id": gms["id"],
			"due_date": "2030-01-01"})
		w.create(t, w.guest.Token, map[string]any{"title": "Gamma", "description": "the needle is here"})
		w.create(t, w.owner.Token, map[string]any{"title": "Delta secret", "labels": "ui", "confidential": true})
		w.do(t, "PUT", "/2", w.owner.Token, map[string]any{"state_event": "close"}).Want(t, 200)
		w.do(t, "PUT", "/3", w.owner.Token, map[string]any{"description": "the needle is here, edited"}).Want(t, 200)

		for _, c := range []struct{ q, want string }{
			{"", "4,3,2,1"},
			{"state=opened", "4,3,1"},
			{"state=closed", "2"},
			{"state=all", "4,3,2,1"},
			{"labels=bug", "2,1"},
			{"labels=bug,ui", "2"},
			{"labels=None", "3"},
			{"labels=Any", "4,2,1"},
			{"milestone=v1", "1"},
			{"milestone=g1", "2"},
			{"milestone=None", "4,3"},
			{"milestone=Any", "2,1"},
			{"milestone=nope", ""},
			{"author_id=" + itoa(w.owner.ID), "4,1"},
			{"author_username=issreporter", "2"},
			{"author_username=nobody", ""},
			{"assignee_id=" + itoa(w.reporter.ID), "1"},
			{"assignee_id=None", "4,3,2"},
			{"assignee_id=Any", "1"},
			{"assignee_username=issreporter", "1"},
			{"iids[]=1&iids[]=3", "3,1"},
			{"search=needle", "3"},
			{"search=ALPHA", "1"},
			{"search=needle&in=title", ""},
			{"search=needle&in=description", "3"},
			{"search=crash&in=title,description", "1"},
			{"confidential=true", "4"},
			{"confidential=false", "3,2,1"},
			{"created_after=2000-01-01", "4,3,2,1"},
			{"created_before=2000-01-01", ""},
			{"updated_after=2999-01-01T00:00:00Z", ""},
			{"order_by=created_at&sort=asc", "1,2,3,4"},
			{"order_by=title&sort=asc", "1,2,4,3"},
			{"order_by=due_date&sort=asc", "2,1,3,4"},
			{"order_by=updated_at", "3,2,4,1"},
			{"scope=created_by_me", "4,1"},
			{"scope=assigned_to_me", ""},
		} {
			r := w.do(t, "GET", "?"+c.q, w.owner.Token, nil).Want(t, 200)
			if got := issIIDs(t, r); got != c.want {
				t.Errorf("?%s: %s; want %s", c.q, got, c.want)
			}
		}
		// Due dates against today, issue types, the closer.
		today := time.Now().UTC()
		w.do(t, "PUT", "/3", w.owner.Token, map[string]any{"due_date": today.Format("2006-01-02")}).Want(t, 200)
		for _, c := range []struct{ q, want string }{
			{"due_date=today", "3"},
			{"due_date=0", "4"},
			{"due_date=any", "3,2,1"},
			{"due_date=overdue", ""},
			{"due_date=tomorrow", ""},
			{"due_date=week", "3"},
			{"due_date=month", "3"},
			{"due_date=next_month_and_previous_two_weeks", "3"},
			{"issue_type=issue", "4,3,2,1"},
			{"issue_type=incident", ""},
			{"closed_by_id=" + itoa(w.owner.ID), "2"},
			{"closed_by_id=" + itoa(w.reporter.ID), ""},
		} {
			if got := issIIDs(t, w.do(t, "GET", "?"+c.q, w.owner.Token, nil).Want(t, 200)); got != c.want {
				t.Errorf("?%s: %s; want %s", c.q, got, c.want)
			}
		}
		w.do(t, "GET", "?due_date=someday", w.owner.Token, nil).Want(t, 400).WantBody(t, `{"error":"due_date does not have a valid value"}`)
		w.do(t, "GET", "?issue_type=bug", w.owner.Token, nil).Want(t, 400).WantBody(t, `{"error":"issue_type does not have a valid value"}`)
		// Anonymous callers list everyone's issues with scope=all only.
		if got := issIIDs(t, s.Get(t, "/issues?scope=all", "").Want(t, 200)); got != "3,2,1" {
			t.Errorf("anonymous /issues?scope=all %s", got)
		}
		s.Get(t, "/issues?scope=assigned_to_me", "").Want(t, 401)
		// Archived projects' issues leave the group and cross-project
		// lists unless asked.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/archive", Token: w.owner.Token}).Want(t, 201)
		for _, c := range []struct{ path, want string }{
			{"/groups/" + itoa(w.group) + "/issues", ""},
			{"/groups/" + itoa(w.group) + "/issues?non_archived=false", "4,3,2,1"},
			{"/issues?scope=all", ""},
			{"/issues?scope=all&non_archived=false", "4,3,2,1"},
			{w.base, "4,3,2,1"},
		} {
			if got := issIIDs(t, s.Get(t, c.path, w.owner.Token).Want(t, 200)); got != c.want {
				t.Errorf("archived: %s: %s; want %s", c.path, got, c.want)
			}
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/unarchive", Token: w.owner.Token}).Want(t, 201)
		// The reporter's own and assigned scopes.
		if got := issIIDs(t, w.do(t, "GET", "?scope=assigned_to_me", w.reporter.Token, nil).Want(t, 200)); got != "1" {
			t.Errorf("reporter assigned_to_me %s", got)
		}
		if got := issIIDs(t, s.Get(t, "/issues?scope=assigned_to_me", w.reporter.Token).Want(t, 200)); got != "1" {
			t.Errorf("reporter /issues assigned_to_me %s", got)
		}
		w.do(t, "GET", "?scope=created_by_me", "", nil).Want(t, 401)
		// The milestone filter on the group's list, and the issue's milestone.
		if got := issIIDs(t, s.Get(t, "/groups/"+itoa(w.group)+"/issues?milestone=g1&state=all", w.owner.Token).Want(t, 200)); got != "2" {
			t.Errorf("group milestone=g1 %s", got)
		}
		one := w.do(t, "GET", "/2", w.owner.Token, nil).Want(t, 200).Object(t)
		m, _ := one["milestone"].(map[string]any)
		if m == nil || m["title"] != "g1" || m["group_id"] != float64(w.group) {
			t.Errorf("milestone %v", one["milestone"])
		}

		// Pages: offset with X-Total and Link, keyset by id.
		r := w.do(t, "GET", "?per_page=3&page=2", w.owner.Token, nil).Want(t, 200)
		if got := issIIDs(t, r); got != "1" || r.Header.Get("X-Total") != "4" || r.Header.Get("X-Total-Pages") != "2" ||
			r.Header.Get("X-Page") != "2" {
			t.Errorf("page 2: %s, headers %v", got, r.Header)
		}
		var seen []string
		s.Walk(t, w.base+"?pagination=keyset&per_page=1&order_by=created_at&sort=desc", w.owner.Token, func(r *apitest.Response) {
			seen = append(seen, issIIDs(t, r))
		})
		if strings.Join(seen, ",") != "4,3,2,1" {
			t.Errorf("keyset pages %v", seen)
		}
		var byTitle []string
		s.Walk(t, w.base+"?pagination=keyset&per_page=2&order_by=title&sort=asc", w.owner.Token, func(r *apitest.Response) {
			byTitle = append(byTitle, issIIDs(t, r))
		})
		if strings.Join(byTitle, ",") != "1,2,4,3" {
			t.Errorf("keyset pages by title %v", byTitle)
		}
		w.do(t, "GET", "?pagination=keyset&cursor=garbage", w.owner.Token, nil).Want(t, 400)
	})
}

func TestIssues_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		ms := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/milestones", Token: w.owner.Token,
			JSON: map[string]any{"title": "v1"}}).Want(t, 201).Object(t)
		full := map[string]any{"title": "from %s", "labels": "bug", "milestone_id": ms["id"], "assignee_ids": []int64{w.owner.ID},
			"confidential": true, "created_at": "2001-02-03T04:05:06Z"}
		body := func(who string) map[string]any {
			b := map[string]any{}
			for k, v := range full {
				b[k] = v
			}
			b["title"] = "from " + who
			return b
		}
		// A non-member opens an issue in a public project: labels,
		// milestone and assignees are members' to set (dropped), the date
		// owners' (dropped).
		delete(full, "confidential")
		got := w.create(t, w.stranger.Token, body("stranger"))
		if len(got["labels"].([]any)) != 0 || got["milestone"] != nil || len(got["assignees"].([]any)) != 0 ||
			got["confidential"] != false || strings.HasPrefix(got["created_at"].(string), "2001") {
			t.Errorf("stranger created %v", got)
		}
		// Members (a guest too, on creation) set them.
		for _, u := range []apitest.User{w.reporter, w.guest} { // the reporter makes the label
			got := w.create(t, u.Token, body(u.Username))
			if len(got["labels"].([]any)) != 1 || got["milestone"] == nil || len(got["assignees"].([]any)) != 1 ||
				strings.HasPrefix(got["created_at"].(string), "2001") {
				t.Errorf("%s created %v", u.Username, got)
			}
		}
		got = w.create(t, w.owner.Token, body("owner"))
		if !strings.HasPrefix(got["created_at"].(string), "2001-02-03T04:05:06") {
			t.Errorf("owner's created_at %v", got["created_at"])
		}
		w.do(t, "POST", "", "", map[string]any{"title": "anon"}).Want(t, 401)
		// Anonymous callers read a public project's issues.
		if got := issIIDs(t, w.do(t, "GET", "", "", nil).Want(t, 200)); got != "3,2,1,4" { // 4 backdated
			t.Errorf("anonymous list %s", got)
		}
		// Whoever opens an issue may make it confidential (a non-member
		// too), and sees it as its author; a guest does not edit it.
		conf := w.create(t, w.stranger.Token, map[string]any{"title": "private matter", "confidential": true})
		if conf["confidential"] != true {
			t.Errorf("stranger's confidential issue %v", conf)
		}
		w.do(t, "GET", "/5", w.stranger.Token, nil).Want(t, 200)
		w.do(t, "GET", "/5", w.guest.Token, nil).Want(t, 404)
		w.do(t, "GET", "/5", w.reporter.Token, nil).Want(t, 200)
		// The author may not make it public again: confidentiality is
		// reporters' to change after creation.
		if got := w.do(t, "PUT", "/5", w.stranger.Token, map[string]any{"confidential": false}).Want(t, 200).Object(t)["confidential"]; got != true {
			t.Errorf("author's confidential edit: %v", got)
		}
		w.do(t, "GET", "/1", "", nil).Want(t, 200)

		// Edits: the author edits its own (title, state; labels dropped);
		// others who are not reporters may not.
		upd := w.do(t, "PUT", "/1", w.stranger.Token, map[string]any{"title": "mine", "labels": "x", "state_event": "close"}).Want(t, 200).Object(t)
		if upd["title"] != "mine" || upd["state"] != "closed" || len(upd["labels"].([]any)) != 0 {
			t.Errorf("author's edit %v", upd)
		}
		w.do(t, "PUT", "/1", w.stranger.Token, map[string]any{"state_event": "reopen"}).Want(t, 200)
		w.do(t, "PUT", "/2", w.stranger.Token, map[string]any{"title": "theirs"}).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		w.do(t, "PUT", "/1", w.guest.Token, map[string]any{"title": "theirs"}).Want(t, 403)
		if got := w.do(t, "PUT", "/1", w.reporter.Token, map[string]any{"labels": "triaged"}).Want(t, 200).Object(t)["labels"]; fmt.Sprint(got) != "[triaged]" {
			t.Errorf("reporter's labels %v", got)
		}
		// Labels that do not exist are created for those who manage
		// labels (reporters up), dropped for others.
		if got := w.create(t, w.guest.Token, map[string]any{"title": "guest labels", "labels": "bug,newone"})["labels"]; fmt.Sprint(got) != "[bug]" {
			t.Errorf("guest's new labels %v", got)
		}
		// Deletes: owners.
		for _, u := range []apitest.User{w.stranger, w.guest, w.reporter} {
			w.do(t, "DELETE", "/1", u.Token, nil).Want(t, 403)
		}
		w.do(t, "DELETE", "/1", s.RootToken, nil).Want(t, 204)

		// Archived: writes refused.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/archive", Token: w.owner.Token}).Want(t, 201)
		w.do(t, "POST", "", w.owner.Token, map[string]any{"title": "late"}).Want(t, 403)
		w.do(t, "PUT", "/2", w.owner.Token, map[string]any{"title": "late"}).Want(t, 403)
		w.do(t, "GET", "/2", w.owner.Token, nil).Want(t, 200)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/unarchive", Token: w.owner.Token}).Want(t, 201)

		// Issues private: members only; disabled: 404 for everyone.
		setAccess := func(level string) {
			s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(w.project), Token: w.owner.Token,
				JSON: map[string]any{"issues_access_level": level}}).Want(t, 200)
		}
		setAccess("private")
		w.do(t, "GET", "", w.stranger.Token, nil).Want(t, 404)
		w.do(t, "GET", "/2", "", nil).Want(t, 404)
		w.do(t, "POST", "", w.stranger.Token, map[string]any{"title": "x"}).Want(t, 404)
		w.do(t, "GET", "", w.guest.Token, nil).Want(t, 200)
		if got := issIIDs(t, s.Get(t, "/groups/"+itoa(w.group)+"/issues", w.stranger.Token).Want(t, 200)); got != "" {
			t.Errorf("group list with private issues %s", got)
		}
		setAccess("disabled")
		for _, tok := range []string{w.owner.Token, s.RootToken} {
			w.do(t, "GET", "", tok, nil).Want(t, 404)
			w.do(t, "GET", "/2", tok, nil).Want(t, 404)
			w.do(t, "POST", "", tok, map[string]any{"title": "x"}).Want(t, 404)
			w.do(t, "PUT", "/2", tok, map[string]any{"title": "x"}).Want(t, 404)
			w.do(t, "DELETE", "/2", tok, nil).Want(t, 404)
		}
		if p := s.Get(t, "/projects/"+itoa(w.project), w.owner.Token).Want(t, 200).Object(t); p["open_issues_count"] != nil {
			t.Errorf("open_issues_count %v with issues disabled", p["open_issues_count"])
		}
		setAccess("enabled")

		// A private project: non-members see nothing (404).
		var priv struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: w.owner.Token,
			JSON: map[string]any{"name": "secret", "visibility": "private"}}).Want(t, 201).JSON(t, &priv)
		pbase := "/projects/" + itoa(priv.ID) + "/issues"
		s.Do(t, apitest.Request{Method: "POST", Path: pbase, Token: w.owner.Token, JSON: map[string]any{"title": "hidden"}}).Want(t, 201)
		s.Get(t, pbase, w.stranger.Token).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, pbase+"/1", "").Want(t, 404)
		s.Do(t, apitest.Request{Method: "POST", Path: pbase, Token: w.stranger.Token, JSON: map[string]any{"title": "x"}}).Want(t, 404)
		if got := issIIDs(t, s.Get(t, "/issues?scope=all", w.stranger.Token).Want(t, 200)); strings.Contains(got, "hidden") {
			t.Errorf("stranger sees %s", got)
		}
		for _, i := range s.Get(t, "/issues?scope=all", w.stranger.Token).Want(t, 200).Array(t) {
			if i["project_id"] == float64(priv.ID) {
				t.Errorf("stranger sees the private project's issue %v", i)
			}
		}
	})
}

func TestIssues_confidential(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		other := s.NewUser(t, "issother")
		w.create(t, w.owner.Token, map[string]any{"title": "public"})
		w.create(t, w.owner.Token, map[string]any{"title": "secret", "confidential": true, "assignee_ids": []int64{other.ID}})
		w.create(t, w.reporter.Token, map[string]any{"title": "reporter's", "confidential": true})
		// A guest opens a confidential one: its author sees it.
		w.create(t, w.guest.Token, map[string]any{"title": "by guest", "confidential": true})

		for _, c := range []struct {
			who   string
			token string
			want  string
		}{
			{"owner", w.owner.Token, "4,3,2,1"},
			{"reporter", w.reporter.Token, "4,3,2,1"},
			{"admin", s.RootToken, "4,3,2,1"},
			{"guest (author of 4)", w.guest.Token, "4,1"},
			{"assignee of 2", other.Token, "2,1"},
			{"stranger", w.stranger.Token, "1"},
			{"anonymous", "", "1"},
		} {
			r := w.do(t, "GET", "", c.token, nil).Want(t, 200)
			if got := issIIDs(t, r); got != c.want {
				t.Errorf("%s sees %s; want %s", c.who, got, c.want)
			}
			if r.Header.Get("X-Total") != fmt.Sprint(len(strings.Split(c.want, ","))) {
				t.Errorf("%s: X-Total %s", c.who, r.Header.Get("X-Total"))
			}
			if got := issIIDs(t, s.Get(t, "/groups/"+itoa(w.group)+"/issues", c.token).Want(t, 200)); got != c.want {
				t.Errorf("%s sees %s in the group; want %s", c.who, got, c.want)
			}
			for _, iid := range []string{"1", "2", "3", "4"} {
				want := 404
				if strings.Contains(c.want, iid) {
					want = 200
				}
				w.do(t, "GET", "/"+iid, c.token, nil).Want(t, want)
			}
		}
		w.do(t, "PUT", "/2", w.stranger.Token, map[string]any{"title": "x"}).Want(t, 404).WantBody(t, `{"message":"404 Issue Not Found"}`)
		w.do(t, "DELETE", "/2", w.stranger.Token, nil).Want(t, 404)
		// open_issues_count: reporters up count confidential issues.
		for _, c := range []struct {
			token string
			want  any
		}{{w.owner.Token, 4.0}, {w.reporter.Token, 4.0}, {w.guest.Token, 1.0}, {w.stranger.Token, 1.0}, {s.RootToken, 4.0},
			// Anonymous callers get GitLab's basic details: no count.
			{"", nil}} {
			for i := 0; i < 2; i++ { // the second read from the entity cache
				if got := s.Get(t, "/projects/"+itoa(w.project), c.token).Want(t, 200).Object(t)["open_issues_count"]; got != c.want {
					t.Errorf("token %q: open_issues_count %v; want %v", c.token, got, c.want)
				}
			}
		}
	})
}

// issCount reads a project's open_issues_count (twice: the second read
// may come from the entity cache).
func issCount(t *testing.T, s *apitest.Server, project int64, token string) any {
	t.Helper()
	first := s.Get(t, "/projects/"+itoa(project), token).Want(t, 200).Object(t)["open_issues_count"]
	second := s.Get(t, "/projects/"+itoa(project), token).Want(t, 200).Object(t)["open_issues_count"]
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Errorf("open_issues_count %v, then %v", first, second)
	}
	return first
}

func TestIssues_counts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		if got := issCount(t, s, w.project, w.owner.Token); got != 0.0 {
			t.Fatalf("open_issues_count %v before any issue", got)
		}
		ms := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/milestones", Token: w.owner.Token,
			JSON: map[string]any{"title": "v1"}}).Want(t, 201).Object(t)
		gms := s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(w.group) + "/milestones", Token: w.owner.Token,
			JSON: map[string]any{"title": "g1"}}).Want(t, 201).Object(t)
		w.create(t, w.owner.Token, map[string]any{"title": "a", "labels": "bug", "milestone_id": ms["id"]})
		if got := issCount(t, s, w.project, w.owner.Token); got != 1.0 {
			t.Errorf("open_issues_count %v after opening one", got)
		}
		w.create(t, w.owner.Token, map[string]any{"title": "b", "labels": "bug", "milestone_id": ms["id"]})
		w.create(t, w.owner.Token, map[string]any{"title": "c", "milestone_id": gms["id"]})
		w.do(t, "PUT", "/2", w.owner.Token, map[string]any{"state_event": "close"}).Want(t, 200)
		if got := issCount(t, s, w.project, w.owner.Token); got != 2.0 {
			t.Errorf("open_issues_count %v after closing one", got)
		}
		w.do(t, "PUT", "/2", w.owner.Token, map[string]any{"state_event": "reopen"}).Want(t, 200)
		if got := issCount(t, s, w.project, w.stranger.Token); got != 3.0 {
			t.Errorf("open_issues_count %v after reopening", got)
		}
		w.do(t, "PUT", "/2", w.owner.Token, map[string]any{"state_event": "close"}).Want(t, 200)
		w.do(t, "DELETE", "/3", w.owner.Token, nil).Want(t, 204)
		if got := issCount(t, s, w.project, w.owner.Token); got != 1.0 {
			t.Errorf("open_issues_count %v after deleting one", got)
		}
		w.create(t, w.owner.Token, map[string]any{"title": "d", "milestone_id": gms["id"]})

		// A milestone's issues: the project's and the group's.
		r := s.Get(t, fmt.Sprintf("/projects/%d/milestones/%v/issues", w.project, ms["id"]), w.owner.Token).Want(t, 200)
		if got := issIIDs(t, r); got != "2,1" || r.Header.Get("X-Total") != "2" {
			t.Errorf("project milestone issues %s (X-Total %s)", got, r.Header.Get("X-Total"))
		}
		if got := issIIDs(t, s.Get(t, fmt.Sprintf("/groups/%d/milestones/%v/issues", w.group, gms["id"]), w.owner.Token).Want(t, 200)); got != "4" {
			t.Errorf("group milestone issues %s", got)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/milestones/999999/issues", w.project), w.owner.Token).Want(t, 404)
		// The merge requests of a milestone stay an empty list.
		s.Get(t, fmt.Sprintf("/projects/%d/milestones/%v/merge_requests", w.project, ms["id"]), w.owner.Token).Want(t, 200).WantBody(t, `[]`)

		// Labels' counts.
		var labels []struct {
			Name   string `json:"name"`
			Open   *int   `json:"open_issues_count"`
			Closed *int   `json:"closed_issues_count"`
		}
		s.Get(t, "/projects/"+itoa(w.project)+"/labels?with_counts=true", w.owner.Token).Want(t, 200).JSON(t, &labels)
		if len(labels) != 1 || labels[0].Name != "bug" || labels[0].Open == nil || *labels[0].Open != 1 || labels[0].Closed == nil ||
			*labels[0].Closed != 1 {
			t.Errorf("label counts %+v", labels)
		}

		// Deleting the milestone unsets it on its issues.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/milestones/%v", w.project, ms["id"]), Token: w.owner.Token}).Want(t, 204)
		if got := w.do(t, "GET", "/1", w.owner.Token, nil).Want(t, 200).Object(t)["milestone"]; got != nil {
			t.Errorf("milestone %v after its deletion", got)
		}
	})
}

func TestIssues_events(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		w.create(t, w.owner.Token, map[string]any{"title": "evented"})
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"state_event": "close"}).Want(t, 200)
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"state_event": "reopen"}).Want(t, 200)
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"state_event": "reopen"}).Want(t, 200) // no move: no event
		w.create(t, w.owner.Token, map[string]any{"title": "hush", "confidential": true})

		type event struct {
			ActionName  string `json:"action_name"`
			TargetType  string `json:"target_type"`
			TargetIID   int64  `json:"target_iid"`
			TargetTitle string `json:"target_title"`
		}
		names := func(token, path string) string {
			var evs []event
			s.Get(t, path, token).Want(t, 200).JSON(t, &evs)
			var out []string
			for _, e := range evs {
				if e.TargetType == "Issue" {
					out = append(out, fmt.Sprintf("%s %d %s", e.ActionName, e.TargetIID, e.TargetTitle))
				}
			}
			return strings.Join(out, "; ")
		}
		// GitLab names a reopening "opened" too.
		all := "opened 2 hush; opened 1 evented; closed 1 evented; opened 1 evented"
		public := "opened 1 evented; closed 1 evented; opened 1 evented"
		projectEvents := "/projects/" + itoa(w.project) + "/events"
		if got := names(w.owner.Token, projectEvents); got != all {
			t.Errorf("owner's project events %q; want %q", got, all)
		}
		if got := names(w.reporter.Token, projectEvents); got != all {
			t.Errorf("reporter's project events %q", got)
		}
		if got := names(w.stranger.Token, projectEvents); got != public {
			t.Errorf("stranger's project events %q; want %q", got, public)
		}
		if got := names(w.stranger.Token, "/users/"+itoa(w.owner.ID)+"/events"); got != public {
			t.Errorf("stranger's view of the owner's events %q; want %q", got, public)
		}
		if got := names(w.owner.Token, "/events?target_type=issue"); got != all {
			t.Errorf("owner's own issue events %q", got)
		}
		// Issues closed to the caller: their events too.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(w.project), Token: w.owner.Token,
			JSON: map[string]any{"issues_access_level": "private"}}).Want(t, 200)
		if got := names(w.stranger.Token, projectEvents); got != "" {
			t.Errorf("stranger's project events with private issues %q", got)
		}
		if got := names(w.stranger.Token, "/users/"+itoa(w.owner.ID)+"/events"); got != "" {
			t.Errorf("stranger's user events with private issues %q", got)
		}
	})
}

// TestIssues_queryCounts: a page of issues costs the same statements
// whatever its size (authors, assignees, milestones, labels of the page
// read together).
func TestIssues_queryCounts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		qc := newQueryCounter(t, s)
		w := newIssWorld(t, s, "public")
		ms := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/milestones", Token: w.owner.Token,
			JSON: map[string]any{"title": "v1"}}).Want(t, 201).Object(t)
		users := []apitest.User{w.owner, w.reporter, w.guest}
		for i := 0; i < listRows; i++ {
			u := users[i%len(users)]
			body := map[string]any{"title": fmt.Sprintf("issue %02d", i), "description": "- [ ] task"}
			if u != w.guest {
				body["labels"] = fmt.Sprintf("l%d,common", i%5)
				body["milestone_id"] = ms["id"]
				body["assignee_ids"] = []int64{w.reporter.ID, users[(i+1)%3].ID}
				body["confidential"] = i%7 == 0
			}
			w.create(t, u.Token, body)
			if i%4 == 0 {
				w.do(t, "PUT", fmt.Sprintf("/%d", i+1), w.owner.Token, map[string]any{"state_event": "close"}).Want(t, 200)
			}
		}
		for _, tok := range []string{w.owner.Token, w.stranger.Token} {
			qc.same(t, w.base+"?state=all", tok)
			qc.same(t, w.base+"?state=all&order_by=due_date&sort=asc", tok)
			qc.same(t, w.base+"?state=all&pagination=keyset&order_by=created_at", tok)
			qc.same(t, "/groups/"+itoa(w.group)+"/issues?state=all", tok)
			qc.same(t, "/issues?scope=all&state=all", tok)
		}
		qc.same(t, fmt.Sprintf("/projects/%d/milestones/%v/issues", w.project, ms["id"]), w.owner.Token)
	})
}

// issSortedKeys is the sorted keys of an object (for messages).
func issSortedKeys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func TestIssues_entityKeys(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		w.create(t, w.owner.Token, map[string]any{"title": "keys"})
		want := "_links,assignee,assignees,author,closed_at,closed_by,confidential,created_at,description,discussion_locked,downvotes," +
			"due_date,has_tasks,id,iid,issue_type,labels,merge_requests_count,milestone,moved_to_id,project_id,references," +
			"service_desk_reply_to,severity,state,subscribed,task_completion_status,time_stats,title,type,updated_at,upvotes," +
			"user_notes_count,web_url"
		if got := issSortedKeys(w.do(t, "GET", "/1", w.owner.Token, nil).Want(t, 200).Object(t)); got != want {
			t.Errorf("keys %s;\nwant %s", got, want)
		}
		if got := w.do(t, "GET", "/1", "", nil).Want(t, 200).Object(t)["subscribed"]; got != false {
			t.Errorf("anonymous subscribed %v", got)
		}
	})
}

// issManyLabels is a list of n distinct labels.
func issManyLabels(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("l%d", i)
	}
	return strings.Join(out, ",")
}

// TestIssues_releaseAndGroupCounts: a release's milestones count their
// issues (issue_stats); a group's labels count the issues of its
// projects as far as the caller sees them.
func TestIssues_releaseAndGroupCounts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, outsider := s.NewUser(t, "relowner"), s.NewUser(t, "reloutsider")
		var g, p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "rel", "path": "rel", "visibility": "public"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "app",
			"namespace_id": g.ID, "visibility": "public", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		base := "/projects/" + itoa(p.ID)
		ms := s.Do(t, apitest.Request{Method: "POST", Path: base + "/milestones", Token: owner.Token,
			JSON: map[string]any{"title": "v1"}}).Want(t, 201).Object(t)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(g.ID) + "/labels", Token: owner.Token,
			JSON: map[string]any{"name": "glabel", "color": "#ff0000"}}).Want(t, 201)
		for i, closed := range []bool{false, true, true, false} {
			body := map[string]any{"title": fmt.Sprint("i", i), "milestone_id": ms["id"], "labels": "glabel", "confidential": i == 3}
			s.Do(t, apitest.Request{Method: "POST", Path: base + "/issues", Token: owner.Token, JSON: body}).Want(t, 201)
			if closed {
				s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("%s/issues/%d", base, i+1), Token: owner.Token,
					JSON: map[string]any{"state_event": "close"}}).Want(t, 200)
			}
		}
		// The group's label made no project label.
		s.Get(t, base+"/labels?include_ancestor_groups=false", owner.Token).Want(t, 200).WantBody(t, `[]`)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/releases", Token: owner.Token,
			JSON: map[string]any{"tag_name": "v1.0", "ref": "main", "milestones": []string{"v1"}}}).Want(t, 201)
		rel := s.Get(t, base+"/releases/v1.0", owner.Token).Want(t, 200).Object(t)
		mss, _ := rel["milestones"].([]any)
		if len(mss) != 1 {
			t.Fatalf("release milestones %v", rel["milestones"])
		}
		if st := mss[0].(map[string]any)["issue_stats"]; fmt.Sprint(st) != "map[closed:2 total:4]" {
			t.Errorf("issue_stats %v", st)
		}
		counts := func(token string) string {
			var labels []struct {
				Name   string `json:"name"`
				Open   int    `json:"open_issues_count"`
				Closed int    `json:"closed_issues_count"`
			}
			s.Get(t, "/groups/"+itoa(g.ID)+"/labels?with_counts=true", token).Want(t, 200).JSON(t, &labels)
			return fmt.Sprint(labels)
		}
		if got := counts(owner.Token); got != "[{glabel 2 2}]" {
			t.Errorf("owner's group label counts %s", got)
		}
		// The outsider does not count the confidential one.
		if got := counts(outsider.Token); got != "[{glabel 1 2}]" {
			t.Errorf("outsider's group label counts %s", got)
		}
	})
}

// TestIssues_webCalls: what the web's pages call besides the API's
// calls — a project's issues for a viewer, the tabs' counts, close and
// reopen — with the API's permissions.
func TestIssues_webCalls(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		actor := func(u apitest.User) auth.Actor {
			t.Helper()
			got, err := s.App.DB.UserByID(ctx(t), u.ID)
			if err != nil {
				t.Fatal(err)
			}
			return auth.Actor{User: &got}
		}
		w.create(t, w.owner.Token, map[string]any{"title": "one"})
		w.create(t, w.owner.Token, map[string]any{"title": "two", "confidential": true})
		w.create(t, w.stranger.Token, map[string]any{"title": "three"})
		ref := "iss/app"
		svc := s.App.Issues
		v, err := svc.SetState(ctx(t), actor(w.reporter), ref, 1, true)
		if err != nil || v.State != "closed" || v.ClosedByID != w.reporter.ID {
			t.Fatalf("close: %+v, %v", v.Issue, err)
		}
		if _, err := svc.SetState(ctx(t), actor(w.guest), ref, 1, false); model.KindOf(err) != model.KindForbidden {
			t.Errorf("a guest reopens: %v", err)
		}
		if _, err := svc.SetState(ctx(t), actor(w.stranger), ref, 2, true); model.KindOf(err) != model.KindNotFound {
			t.Errorf("a stranger closes a confidential issue: %v", err)
		}
		if v, err := svc.SetState(ctx(t), actor(w.stranger), ref, 3, true); err != nil || v.State != "closed" {
			t.Errorf("the author closes its own: %+v, %v", v.Issue, err)
		}
		for _, c := range []struct {
			who            apitest.User
			opened, closed int
			list           string
		}{{w.owner, 1, 2, "2"}, {w.stranger, 0, 2, ""}} {
			opened, closed, err := svc.StateCounts(ctx(t), actor(c.who), ref, issues.Filter{})
			if err != nil || opened != c.opened || closed != c.closed {
				t.Errorf("%s: counts %d, %d, %v; want %d, %d", c.who.Username, opened, closed, err, c.opened, c.closed)
			}
			p, list, info, err := svc.ProjectIssues(ctx(t), actor(c.who), ref, issues.Filter{State: "opened"}, model.Page{Number: 1, PerPage: 20})
			var iids []string
			for _, v := range list {
				iids = append(iids, fmt.Sprint(v.IID))
			}
			if err != nil || p.ID != w.project || strings.Join(iids, ",") != c.list || info.Total != c.opened {
				t.Errorf("%s: project issues %v (%+v), %v", c.who.Username, iids, info, err)
			}
		}
		if _, _, _, err := svc.ProjectIssues(ctx(t), auth.Actor{}, "iss/nope", issues.Filter{}, model.Page{Number: 1, PerPage: 20}); model.KindOf(err) != model.KindNotFound {
			t.Errorf("a missing project: %v", err)
		}
	})
}

// TestIssues_concurrent: creates racing for iids get distinct ones and
// the project's count stays true; edits of different fields racing on
// one issue all land (a lost compare-and-set is retried).
func TestIssues_concurrent(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		const n = 8
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			go func(i int) {
				r := s.Do(t, apitest.Request{Method: "POST", Path: w.base, Token: w.owner.Token, JSON: map[string]any{"title": fmt.Sprint("c", i)}})
				if r.Status != 201 {
					errs <- fmt.Errorf("create %d: %d %s", i, r.Status, r.Body)
					return
				}
				errs <- nil
			}(i)
		}
		for i := 0; i < n; i++ {
			select {
			case err := <-errs:
				if err != nil {
					t.Error(err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("creates did not finish")
			}
		}
		if got := issIIDs(t, w.do(t, "GET", "?order_by=created_at&sort=asc&per_page=100", w.owner.Token, nil).Want(t, 200)); len(strings.Split(got, ",")) != n {
			t.Errorf("iids %s", got)
		} else {
			seen := map[string]bool{}
			for _, iid := range strings.Split(got, ",") {
				if seen[iid] {
					t.Errorf("iid %s twice in %s", iid, got)
				}
				seen[iid] = true
			}
		}
		if got := issCount(t, s, w.project, w.owner.Token); got != float64(n) {
			t.Errorf("open_issues_count %v; want %d", got, n)
		}
		edits := []map[string]any{{"title": "raced"}, {"description": "described"}, {"labels": "l1"}, {"due_date": "2031-01-01"},
			{"discussion_locked": true}, {"state_event": "close"}}
		for _, body := range edits {
			go func(body map[string]any) {
				r := s.Do(t, apitest.Request{Method: "PUT", Path: w.base + "/1", Token: w.owner.Token, JSON: body})
				if r.Status != 200 {
					errs <- fmt.Errorf("edit %v: %d %s", body, r.Status, r.Body)
					return
				}
				errs <- nil
			}(body)
		}
		for range edits {
			select {
			case err := <-errs:
				if err != nil {
					t.Error(err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("edits did not finish")
			}
		}
		got := w.do(t, "GET", "/1", w.owner.Token, nil).Want(t, 200).Object(t)
		if got["title"] != "raced" || got["description"] != "described" || fmt.Sprint(got["labels"]) != "[l1]" || got["due_date"] != "2031-01-01" ||
			got["discussion_locked"] != true || got["state"] != "closed" {
			t.Errorf("after racing edits %v", got)
		}
		if got := issCount(t, s, w.project, w.owner.Token); got != float64(n-1) {
			t.Errorf("open_issues_count %v; want %d", got, n-1)
		}
	})
}

// TestIssues_plans: every issue list filter and order has its index (no
// table read whole, or read whole and sorted; see list_plans_test.go).
func TestIssues_plans(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		pc := newPlanChecker(t, s)
		w := newIssWorld(t, s, "public")
		ms := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/milestones", Token: w.owner.Token,
			JSON: map[string]any{"title": "v1"}}).Want(t, 201).Object(t)
		for i := range 4 {
			w.create(t, w.owner.Token, map[string]any{"title": fmt.Sprint("plan ", i), "labels": "bug", "milestone_id": ms["id"],
				"assignee_ids": []int64{w.reporter.ID}, "due_date": "2030-01-0" + fmt.Sprint(i+1), "confidential": i == 3})
		}
		w.do(t, "PUT", "/1", w.owner.Token, map[string]any{"state_event": "close"}).Want(t, 200)
		lists := []string{
			w.base, w.base + "?state=opened", w.base + "?state=closed", w.base + "?labels=bug", w.base + "?labels=None",
			w.base + "?milestone=v1", w.base + "?milestone=None", w.base + "?author_id=" + itoa(w.owner.ID),
			w.base + "?assignee_id=" + itoa(w.reporter.ID), w.base + "?assignee_id=None", w.base + "?iids[]=1&iids[]=2",
			w.base + "?search=plan", w.base + "?confidential=true", w.base + "?order_by=updated_at", w.base + "?order_by=title",
			w.base + "?order_by=due_date", w.base + "?due_date=overdue", w.base + "?created_after=2000-01-01T00:00:00Z",
			w.base + "?pagination=keyset&order_by=created_at", w.base + "?page=2&per_page=1",
			"/groups/" + itoa(w.group) + "/issues", "/issues?scope=all", "/issues?scope=assigned_to_me",
			fmt.Sprintf("/projects/%d/milestones/%v/issues", w.project, ms["id"]),
		}
		for _, tok := range []string{w.owner.Token, w.stranger.Token} {
			for _, path := range lists {
				pc.check(t, path, tok)
			}
		}
	})
}

// TestIssues_statisticsAndParticipants: issues_statistics counts what the
// lists would show (their filters, confidential issues as the caller sees
// them); an issue's participants are its author and assignees.
func TestIssues_statisticsAndParticipants(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		w.create(t, w.owner.Token, map[string]any{"title": "a", "labels": "bug", "assignee_ids": []int64{w.reporter.ID, w.owner.ID}})
		w.create(t, w.owner.Token, map[string]any{"title": "b", "labels": "bug"})
		w.create(t, w.owner.Token, map[string]any{"title": "c", "confidential": true})
		w.create(t, w.stranger.Token, map[string]any{"title": "d"})
		w.do(t, "PUT", "/2", w.owner.Token, map[string]any{"state_event": "close"}).Want(t, 200)
		stats := func(path, token string) string {
			t.Helper()
			var got struct {
				Statistics struct {
					Counts struct{ All, Closed, Opened int } `json:"counts"`
				} `json:"statistics"`
			}
			s.Get(t, path, token).Want(t, 200).JSON(t, &got)
			c := got.Statistics.Counts
			return fmt.Sprintf("%d/%d/%d", c.All, c.Opened, c.Closed)
		}
		pstats := "/projects/" + itoa(w.project) + "/issues_statistics"
		gstats := "/groups/" + itoa(w.group) + "/issues_statistics"
		for _, c := range []struct{ path, token, want string }{
			{pstats, w.owner.Token, "4/3/1"},
			{pstats, w.stranger.Token, "3/2/1"},
			{pstats, "", "3/2/1"},
			{pstats + "?labels=bug", w.owner.Token, "2/1/1"},
			{pstats + "?state=closed", w.owner.Token, "4/3/1"}, // state is not a statistics filter
			{gstats, w.owner.Token, "4/3/1"},
			{gstats + "?search=d", w.stranger.Token, "1/1/0"},
			{"/issues_statistics", w.owner.Token, "3/2/1"},
			{"/issues_statistics", w.stranger.Token, "1/1/0"},
			{"/issues_statistics?scope=all", "", "3/2/1"},
			{"/issues_statistics?scope=assigned_to_me", w.reporter.Token, "1/1/0"},
		} {
			if got := stats(c.path, c.token); got != c.want {
				t.Errorf("%s (token %q): %s; want %s", c.path, c.token, got, c.want)
			}
		}
		s.Get(t, "/issues_statistics", "").Want(t, 401)
		s.Get(t, pstats+"?due_date=never", w.owner.Token).Want(t, 400)

		var users []struct{ Username string }
		w.do(t, "GET", "/1/participants", "", nil).Want(t, 200).JSON(t, &users)
		if fmt.Sprint(users) != "[{issowner} {issreporter}]" {
			t.Errorf("participants %v", users)
		}
		w.do(t, "GET", "/3/participants", w.stranger.Token, nil).Want(t, 404)
		w.do(t, "GET", "/99/participants", w.owner.Token, nil).Want(t, 404)
	})
}

// TestIssues_removal: a user removed leaves the issues they opened (no
// author) and their assignments go; a project removed takes its issues,
// their events and their counts along.
func TestIssues_removal(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newIssWorld(t, s, "public")
		w.create(t, w.stranger.Token, map[string]any{"title": "orphan"})
		w.create(t, w.owner.Token, map[string]any{"title": "assigned", "assignee_ids": []int64{w.reporter.ID, w.owner.ID}})
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(w.stranger.ID), Token: s.RootToken}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(w.reporter.ID) + "?hard_delete=true", Token: s.RootToken}).Want(t, 204)
		eventually(t, "the users gone", func() bool {
			return s.Get(t, "/users/"+itoa(w.stranger.ID), s.RootToken).Status == 404 &&
				s.Get(t, "/users/"+itoa(w.reporter.ID), s.RootToken).Status == 404
		})
		one := w.do(t, "GET", "/1", w.owner.Token, nil).Want(t, 200).Object(t)
		if one["author"] != nil {
			t.Errorf("author of a removed user's issue: %v", one["author"])
		}
		two := w.do(t, "GET", "/2", w.owner.Token, nil).Want(t, 200).Object(t)
		if as, _ := two["assignees"].([]any); len(as) != 1 {
			t.Errorf("assignees after a removal: %v", two["assignees"])
		}
		if got := issIIDs(t, w.do(t, "GET", "", w.owner.Token, nil).Want(t, 200)); got != "2,1" {
			t.Errorf("list after removals %s", got)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(w.project), Token: w.owner.Token}).Want(t, 202)
		eventually(t, "the project gone", func() bool { return s.Get(t, "/projects/"+itoa(w.project), w.owner.Token).Status == 404 })
		if got := issIIDs(t, s.Get(t, "/issues?scope=all", w.owner.Token).Want(t, 200)); got != "" {
			t.Errorf("issues of a removed project: %s", got)
		}
		s.Get(t, "/groups/"+itoa(w.group)+"/issues", w.owner.Token).Want(t, 200).WantBody(t, `[]`)
	})
}
