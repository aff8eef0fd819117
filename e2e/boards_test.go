package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// Issue boards of projects and groups (GitLab's doc/api/boards.md and
// group_boards.md): the entity, label lists and their positions, the
// label a list may take, errors in GitLab's words, permissions and
// pagination.

func bdDo(t *testing.T, s *apitest.Server, method, path, token string, body map[string]any) *apitest.Response {
	t.Helper()
	r := apitest.Request{Method: method, Path: path, Token: token}
	if body != nil {
		r.JSON = body
	}
	return s.Do(t, r)
}

type bdList struct {
	ID    int64 `json:"id"`
	Label struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Color string `json:"color"`
	} `json:"label"`
	Position int `json:"position"`
}

type bdBoard struct {
	ID    int64    `json:"id"`
	Name  string   `json:"name"`
	Lists []bdList `json:"lists"`
}

// bdOrder is a board's lists' label names in position order, checking
// positions run 0.. in a row.
func bdOrder(t *testing.T, s *apitest.Server, path, token string) string {
	t.Helper()
	var ls []bdList
	bdDo(t, s, "GET", path+"/lists", token, nil).Want(t, 200).JSON(t, &ls)
	out := ""
	for i, l := range ls {
		if l.Position != i {
			t.Fatalf("list %s at %d; want %d (%+v)", l.Label.Name, l.Position, i, ls)
		}
		out += l.Label.Name
	}
	return out
}

func TestBoards_project(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "bdowner")
		gid, _ := agGroup(t, s, owner.Token, "bdg", 0)
		sub, _ := agGroup(t, s, owner.Token, "bdsub", gid)
		p := agProject(t, s, owner.Token, "bdp", sub)
		other := agProject(t, s, owner.Token, "bdother", 0)
		base := fmt.Sprintf("/projects/%d/boards", p.ID)
		gl := lblCreate(t, s, fmt.Sprintf("/groups/%d/labels", gid), owner.Token, map[string]any{"name": "g", "color": "#00ff00"})
		var pls []labelJSON
		for _, n := range []string{"a", "b", "c"} {
			pls = append(pls, lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", p.ID), owner.Token,
				map[string]any{"name": n, "color": "#FF0000", "description": "about " + n}))
		}
		foreign := lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", other.ID), owner.Token, map[string]any{"name": "x", "color": "#000000"})

		// The official client: create, list, get, update.
		c := s.Client(t, owner.Token)
		b, _, err := c.Boards.CreateIssueBoard(p.ID, &gitlab.CreateIssueBoardOptions{Name: gitlab.Ptr("Dev")})
		if err != nil || b.Name != "Dev" || b.Project == nil || b.Project.ID != p.ID || len(b.Lists) != 0 {
			t.Fatalf("created %+v %v", b, err)
		}
		one := fmt.Sprintf("%s/%d", base, b.ID)
		for _, l := range []int64{pls[0].ID, pls[1].ID, gl.ID} {
			bl, _, err := c.Boards.CreateIssueBoardList(p.ID, b.ID, &gitlab.CreateIssueBoardListOptions{LabelID: gitlab.Ptr(l)})
			if err != nil || bl.Label == nil || bl.Label.ID != l {
				t.Fatalf("list of label %d: %+v %v", l, bl, err)
			}
		}
		if got := bdOrder(t, s, one, owner.Token); got != "abg" {
			t.Fatalf("lists %q", got)
		}
		boards, resp, err := c.Boards.ListIssueBoards(p.ID, nil)
		if err != nil || len(boards) != 1 || len(boards[0].Lists) != 3 || resp.Header.Get("X-Total") != "1" {
			t.Fatalf("list %+v %v", boards, err)
		}
		ub, _, err := c.Boards.UpdateIssueBoard(p.ID, b.ID, &gitlab.UpdateIssueBoardOptions{Name: gitlab.Ptr("Ops")})
		if err != nil || ub.Name != "Ops" {
			t.Fatalf("updated %+v %v", ub, err)
		}

		// The raw entity and its JSON types.
		obj := bdDo(t, s, "PUT", one, owner.Token, map[string]any{"hide_backlog_list": true}).Want(t, 200).Object(t)
		for k, want := range map[string]string{"id": "float64", "name": "string", "hide_backlog_list": "bool", "hide_closed_list": "bool",
			"project": "map[string]interface {}", "group": "<nil>", "milestone": "<nil>", "lists": "[]interface {}"} {
			if got := fmt.Sprintf("%T", obj[k]); got != want {
				t.Errorf("%s is %s (%v); want %s", k, got, obj[k], want)
			}
		}
		if obj["hide_backlog_list"] != true || obj["hide_closed_list"] != false || obj["name"] != "Ops" {
			t.Errorf("after the update %v", obj)
		}
		proj := obj["project"].(map[string]any)
		if proj["path_with_namespace"] != "bdg/bdsub/bdp" || proj["web_url"] != s.URL+"/bdg/bdsub/bdp" ||
			proj["http_url_to_repo"] != s.URL+"/bdg/bdsub/bdp.git" || proj["name_with_namespace"] == nil {
			t.Errorf("project %v", proj)
		}
		list := obj["lists"].([]any)[0].(map[string]any)
		label := list["label"].(map[string]any)
		for k, want := range map[string]string{"id": "float64", "position": "float64"} {
			if got := fmt.Sprintf("%T", list[k]); got != want {
				t.Errorf("list %s is %s; want %s", k, got, want)
			}
		}
		if label["name"] != "a" || label["color"] != "#FF0000" || label["description"] != "about a" || label["text_color"] != "#FFFFFF" {
			t.Errorf("list label %v", label)
		}

		// Label lists: errors in GitLab's words.
		for _, c := range []struct {
			body   map[string]any
			status int
			want   string
		}{
			{map[string]any{}, 400, `{"error":"label_id is missing"}`},
			{map[string]any{"label_id": "abc"}, 400, `{"error":"label_id is invalid"}`},
			{map[string]any{"label_id": foreign.ID}, 400, `{"message":{"error":"Label not found!"}}`},
			{map[string]any{"label_id": 1 << 50}, 400, `{"message":{"error":"Label not found!"}}`},
			{map[string]any{"label_id": pls[0].ID}, 400, `{"message":{"error":"Label has already been taken"}}`},
		} {
			bdDo(t, s, "POST", one+"/lists", owner.Token, c.body).Want(t, c.status).WantBody(t, c.want)
		}
		bdDo(t, s, "POST", base, owner.Token, map[string]any{}).Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
		bdDo(t, s, "POST", base, owner.Token, map[string]any{"name": " "}).Want(t, 400).WantBody(t, `{"message":{"name":["can't be blank"]}}`)
		bdDo(t, s, "GET", base+"/999999", owner.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Board Not Found"}`)
		bdDo(t, s, "GET", base+"/abc", owner.Token, nil).Want(t, 400).WantBody(t, `{"error":"board_id is invalid"}`)
		bdDo(t, s, "GET", one+"/lists/999999", owner.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 List Not Found"}`)
		// A board of another project is not this project's.
		ob, _, err := c.Boards.CreateIssueBoard(other.ID, &gitlab.CreateIssueBoardOptions{Name: gitlab.Ptr("o")})
		if err != nil {
			t.Fatal(err)
		}
		bdDo(t, s, "GET", fmt.Sprintf("%s/%d", base, ob.ID), owner.Token, nil).Want(t, 404)

		// Moves shift the lists between; out of range or in place is 400.
		var ls []bdList
		bdDo(t, s, "GET", one+"/lists", owner.Token, nil).Want(t, 200).JSON(t, &ls)
		moved := bdDo(t, s, "PUT", fmt.Sprintf("%s/lists/%d", one, ls[0].ID), owner.Token, map[string]any{"position": 2}).Want(t, 200).Object(t)
		if moved["position"] != float64(2) {
			t.Fatalf("moved %v", moved)
		}
		if got := bdOrder(t, s, one, owner.Token); got != "bga" {
			t.Fatalf("after a move %q", got)
		}
		for _, pos := range []any{3, -1, 2} {
			bdDo(t, s, "PUT", fmt.Sprintf("%s/lists/%d", one, ls[0].ID), owner.Token, map[string]any{"position": pos}).
				Want(t, 400).WantBody(t, `{"message":{"error":"List could not be moved!"}}`)
		}
		bdDo(t, s, "PUT", fmt.Sprintf("%s/lists/%d", one, ls[0].ID), owner.Token, map[string]any{}).Want(t, 400).WantBody(t, `{"error":"position is missing"}`)
		if _, _, err := c.Boards.UpdateIssueBoardList(p.ID, b.ID, ls[0].ID, &gitlab.UpdateIssueBoardListOptions{Position: gitlab.Ptr(int64(0))}); err != nil {
			t.Fatal(err)
		}
		if got := bdOrder(t, s, one, owner.Token); got != "abg" {
			t.Fatalf("after a move back %q", got)
		}
		// Removing a list closes its gap; a new one goes last.
		bdDo(t, s, "DELETE", fmt.Sprintf("%s/lists/%d", one, ls[1].ID), owner.Token, nil).Want(t, 204)
		if got := bdOrder(t, s, one, owner.Token); got != "ag" {
			t.Fatalf("after a removal %q", got)
		}
		bdDo(t, s, "DELETE", fmt.Sprintf("%s/lists/%d", one, ls[1].ID), owner.Token, nil).Want(t, 404)
		bdDo(t, s, "POST", one+"/lists", owner.Token, map[string]any{"label_id": pls[2].ID}).Want(t, 201)
		if got := bdOrder(t, s, one, owner.Token); got != "agc" {
			t.Fatalf("after an append %q", got)
		}
		// Removing a label removes its lists.
		bdDo(t, s, "DELETE", fmt.Sprintf("/projects/%d/labels/%d", p.ID, pls[0].ID), owner.Token, nil).Want(t, 204)
		if got := bdOrder(t, s, one, owner.Token); got != "gc" {
			t.Fatalf("after the label's removal %q", got)
		}
		// Lists paginate.
		r := bdDo(t, s, "GET", one+"/lists?per_page=1&page=2", owner.Token, nil).Want(t, 200)
		if r.Header.Get("X-Total") != "2" || len(r.Array(t)) != 1 || r.Array(t)[0]["label"].(map[string]any)["name"] != "c" {
			t.Fatalf("page 2: %v %s", r.Header, r.Body)
		}

		// Removing a board.
		if _, err := c.Boards.DeleteIssueBoard(p.ID, b.ID); err != nil {
			t.Fatal(err)
		}
		bdDo(t, s, "GET", one, owner.Token, nil).Want(t, 404)
		bdDo(t, s, "GET", one+"/lists", owner.Token, nil).Want(t, 404)
	})
}

func TestBoards_group(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "bdgowner")
		top, _ := agGroup(t, s, owner.Token, "bdtop", 0)
		sub, _ := agGroup(t, s, owner.Token, "bdsub", top)
		low, _ := agGroup(t, s, owner.Token, "bdlow", sub)
		p := agProject(t, s, owner.Token, "bdp", sub)
		topL := lblCreate(t, s, fmt.Sprintf("/groups/%d/labels", top), owner.Token, map[string]any{"name": "top", "color": "#00ff00"})
		subL := lblCreate(t, s, fmt.Sprintf("/groups/%d/labels", sub), owner.Token, map[string]any{"name": "sub", "color": "#0000ff"})
		lowL := lblCreate(t, s, fmt.Sprintf("/groups/%d/labels", low), owner.Token, map[string]any{"name": "low", "color": "#0000ff"})
		projL := lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", p.ID), owner.Token, map[string]any{"name": "proj", "color": "#0000ff"})

		base := fmt.Sprintf("/groups/%d/boards", sub)
		obj := bdDo(t, s, "POST", base, owner.Token, map[string]any{"name": "G", "hide_closed_list": true}).Want(t, 201).Object(t)
		g, ok := obj["group"].(map[string]any)
		if !ok || g["id"] != float64(sub) || g["name"] != "bdsub" || g["web_url"] != s.URL+"/groups/bdtop/bdsub" ||
			obj["project"] != nil || obj["hide_closed_list"] != true {
			t.Fatalf("group board %v", obj)
		}
		one := fmt.Sprintf("%s/%v", base, obj["id"])
		// The group's and its ancestors' labels; not a subgroup's nor a
		// project's.
		for _, l := range []int64{subL.ID, topL.ID} {
			bdDo(t, s, "POST", one+"/lists", owner.Token, map[string]any{"label_id": l}).Want(t, 201)
		}
		for _, l := range []int64{lowL.ID, projL.ID} {
			bdDo(t, s, "POST", one+"/lists", owner.Token, map[string]any{"label_id": l}).Want(t, 400).
				WantBody(t, `{"message":{"error":"Label not found!"}}`)
		}
		if got := bdOrder(t, s, one, owner.Token); got != "subtop" {
			t.Fatalf("lists %q", got)
		}
		c := s.Client(t, owner.Token)
		gbs, _, err := c.GroupIssueBoards.ListGroupIssueBoards(sub, nil)
		if err != nil || len(gbs) != 1 || gbs[0].Name != "G" || len(gbs[0].Lists) != 2 || gbs[0].Group == nil || gbs[0].Group.ID != sub {
			t.Fatalf("group boards %+v %v", gbs, err)
		}
		gb, _, err := c.GroupIssueBoards.GetGroupIssueBoard(sub, gbs[0].ID)
		if err != nil || gb.Lists[1].Label.Name != "top" || gb.Lists[1].Position != 1 {
			t.Fatalf("group board %+v %v", gb, err)
		}
		// By full path too; a project's board is not the group's.
		bdDo(t, s, "GET", "/groups/bdtop%2Fbdsub/boards", owner.Token, nil).Want(t, 200)
		var pb bdBoard
		bdDo(t, s, "POST", fmt.Sprintf("/projects/%d/boards", p.ID), owner.Token, map[string]any{"name": "P"}).Want(t, 201).JSON(t, &pb)
		bdDo(t, s, "GET", fmt.Sprintf("%s/%d", base, pb.ID), owner.Token, nil).Want(t, 404)
		// Boards paginate.
		bdDo(t, s, "POST", base, owner.Token, map[string]any{"name": "H"}).Want(t, 201)
		r := bdDo(t, s, "GET", base+"?per_page=1", owner.Token, nil).Want(t, 200)
		if r.Header.Get("X-Total") != "2" || len(r.Array(t)) != 1 || r.Header.Get("Link") == "" {
			t.Fatalf("page 1: %v %s", r.Header, r.Body)
		}
		if _, err := c.GroupIssueBoards.DeleteIssueBoard(sub, gbs[0].ID); err != nil {
			t.Fatal(err)
		}
		bdDo(t, s, "GET", one, owner.Token, nil).Want(t, 404)
	})
}

// TestBoards_permissions: boards are read by whoever may use the
// project's issues (or reads the group) and written by Reporters up;
// anonymous callers are 401, a private project or group a caller does
// not see is 404, a role short of the action 403.
func TestBoards_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "bdpowner")
		users := map[string]apitest.User{}
		for _, n := range []string{"guest", "reporter", "developer", "maintainer", "stranger"} {
			users[n] = s.NewUser(t, "bd"+n)
		}
		levels := map[string]int{"guest": 10, "reporter": 20, "developer": 30, "maintainer": 40}
		for _, vis := range []string{"private", "public"} {
			var g struct{ ID int64 }
			bdDo(t, s, "POST", "/groups", owner.Token, map[string]any{"name": "bd" + vis, "path": "bd" + vis, "visibility": vis}).Want(t, 201).JSON(t, &g)
			var p struct{ ID int64 }
			bdDo(t, s, "POST", "/projects", owner.Token, map[string]any{"name": "p", "namespace_id": g.ID, "visibility": vis}).Want(t, 201).JSON(t, &p)
			for n, lvl := range levels {
				lblGroupMember(t, s, g.ID, users[n], lvl)
			}
			label := lblCreate(t, s, fmt.Sprintf("/groups/%d/labels", g.ID), owner.Token, map[string]any{"name": "l", "color": "#fff"})
			for _, base := range []string{fmt.Sprintf("/projects/%d/boards", p.ID), fmt.Sprintf("/groups/%d/boards", g.ID)} {
				var b bdBoard
				bdDo(t, s, "POST", base, owner.Token, map[string]any{"name": "b"}).Want(t, 201).JSON(t, &b)
				one := fmt.Sprintf("%s/%d", base, b.ID)
				var l bdList
				bdDo(t, s, "POST", one+"/lists", owner.Token, map[string]any{"label_id": label.ID}).Want(t, 201).JSON(t, &l)
				bdDo(t, s, "GET", base, "", nil).Want(t, 401)
				for _, who := range []string{"stranger", "guest", "reporter", "developer", "maintainer", "admin"} {
					token := s.RootToken
					if who != "admin" {
						token = users[who].Token
					}
					read, write := 200, 403
					switch {
					case who == "stranger" && vis == "private":
						read, write = 404, 404
					case who == "reporter" || who == "developer" || who == "maintainer" || who == "admin":
						write = 0
					}
					bdDo(t, s, "GET", base, token, nil).Want(t, read)
					bdDo(t, s, "GET", one+"/lists/"+fmt.Sprint(l.ID), token, nil).Want(t, read)
					if write != 0 {
						bdDo(t, s, "POST", base, token, map[string]any{"name": "x"}).Want(t, write)
						bdDo(t, s, "PUT", one, token, map[string]any{"name": "x"}).Want(t, write)
						bdDo(t, s, "DELETE", one, token, nil).Want(t, write)
						bdDo(t, s, "DELETE", one+"/lists/"+fmt.Sprint(l.ID), token, nil).Want(t, write)
						bdDo(t, s, "PUT", one+"/lists/"+fmt.Sprint(l.ID), token, map[string]any{"position": 0}).Want(t, write)
						continue
					}
					var nb bdBoard
					bdDo(t, s, "POST", base, token, map[string]any{"name": who}).Want(t, 201).JSON(t, &nb)
					nbOne := fmt.Sprintf("%s/%d", base, nb.ID)
					bdDo(t, s, "PUT", nbOne, token, map[string]any{"name": who + "2"}).Want(t, 200)
					bdDo(t, s, "POST", nbOne+"/lists", token, map[string]any{"label_id": label.ID}).Want(t, 201)
					bdDo(t, s, "DELETE", nbOne, token, nil).Want(t, 204)
				}
			}
			// Issues off: the project's boards are 403 even for its owner.
			bdDo(t, s, "PUT", fmt.Sprintf("/projects/%d", p.ID), owner.Token, map[string]any{"issues_access_level": "disabled"}).Want(t, 200)
			bdDo(t, s, "GET", fmt.Sprintf("/projects/%d/boards", p.ID), owner.Token, nil).Want(t, 403)
			bdDo(t, s, "GET", fmt.Sprintf("/projects/%d/boards", p.ID), users["guest"].Token, nil).Want(t, 403)
		}
	})
}

var _ = http.StatusOK

// TestBoards_racingLists: lists created and moved at once keep their
// positions 0.. in a row, each label once.
func TestBoards_racingLists(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "bdracer")
		p := agProject(t, s, owner.Token, "bdrace", 0)
		var b bdBoard
		bdDo(t, s, "POST", fmt.Sprintf("/projects/%d/boards", p.ID), owner.Token, map[string]any{"name": "r"}).Want(t, 201).JSON(t, &b)
		one := fmt.Sprintf("/projects/%d/boards/%d", p.ID, b.ID)
		var ids []int64
		for i := range 6 {
			ids = append(ids, lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", p.ID), owner.Token,
				map[string]any{"name": fmt.Sprint(i), "color": "#fff"}).ID)
		}
		var wg sync.WaitGroup
		statuses := make([]int, 2*len(ids))
		for i, id := range append(ids, ids...) { // each label twice: one wins
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = bdDo(t, s, "POST", one+"/lists", owner.Token, map[string]any{"label_id": id}).Status
			}()
		}
		wg.Wait()
		created := 0
		for _, st := range statuses {
			switch st {
			case 201:
				created++
			case 400:
			default:
				t.Fatalf("status %d", st)
			}
		}
		if got := bdOrder(t, s, one, owner.Token); created != len(ids) || len(got) != len(ids) {
			t.Fatalf("%d created, lists %q", created, got)
		}
		var ls []bdList
		bdDo(t, s, "GET", one+"/lists", owner.Token, nil).Want(t, 200).JSON(t, &ls)
		for i, l := range ls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st := bdDo(t, s, "PUT", fmt.Sprintf("%s/lists/%d", one, l.ID), owner.Token, map[string]any{"position": (i + 3) % len(ls)}).Status
				if st != 200 && st != 400 {
					t.Errorf("move: %d", st)
				}
			}()
		}
		wg.Wait()
		if got := bdOrder(t, s, one, owner.Token); len(got) != len(ids) {
			t.Fatalf("after racing moves %q", got)
		}
	})
}

// TestBoards_promotedLabel: promoting a project label to its group keeps
// its board lists, now of the group's label.
func TestBoards_promotedLabel(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "bdpromoter")
		gid, _ := agGroup(t, s, owner.Token, "bdpromo", 0)
		p := agProject(t, s, owner.Token, "bdpp", gid)
		var ls []labelJSON
		for _, n := range []string{"x", "y"} {
			ls = append(ls, lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", p.ID), owner.Token, map[string]any{"name": n, "color": "#fff"}))
		}
		var b bdBoard
		bdDo(t, s, "POST", fmt.Sprintf("/projects/%d/boards", p.ID), owner.Token, map[string]any{"name": "b"}).Want(t, 201).JSON(t, &b)
		one := fmt.Sprintf("/projects/%d/boards/%d", p.ID, b.ID)
		for _, l := range ls {
			bdDo(t, s, "POST", one+"/lists", owner.Token, map[string]any{"label_id": l.ID}).Want(t, 201)
		}
		var gl labelJSON
		bdDo(t, s, "PUT", fmt.Sprintf("/projects/%d/labels/%d/promote", p.ID, ls[0].ID), owner.Token, nil).Want(t, 200).JSON(t, &gl)
		var got bdBoard
		bdDo(t, s, "GET", one, owner.Token, nil).Want(t, 200).JSON(t, &got)
		if len(got.Lists) != 2 || got.Lists[0].Label.ID != gl.ID || got.Lists[0].Label.Name != "x" || got.Lists[1].Position != 1 {
			t.Fatalf("lists after the promotion %+v (group label %d)", got.Lists, gl.ID)
		}
	})
}

// TestBoards_inputs: bad attributes are 400 in GitLab's words; an
// archived project's boards are read only.
func TestBoards_inputs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "bdinputs")
		p := agProject(t, s, owner.Token, "bdin", 0)
		base := fmt.Sprintf("/projects/%d/boards", p.ID)
		var b bdBoard
		bdDo(t, s, "POST", base, owner.Token, map[string]any{"name": "  trimmed  "}).Want(t, 201).JSON(t, &b)
		if b.Name != "trimmed" || b.Lists == nil {
			t.Fatalf("created %+v", b)
		}
		one := fmt.Sprintf("%s/%d", base, b.ID)
		long := make([]byte, 256)
		for i := range long {
			long[i] = 'n'
		}
		for _, c := range []struct {
			method, path string
			body         map[string]any
			want         string
		}{
			{"PUT", one, map[string]any{"hide_backlog_list": "maybe"}, `{"error":"hide_backlog_list is invalid"}`},
			{"PUT", one, map[string]any{"name": string(long)}, `{"message":{"name":["is too long (maximum is 255 characters)"]}}`},
			{"POST", base, map[string]any{"name": string(long) + string(long) + string(long) + string(long)}, `{"error":"name is too long"}`},
			{"PUT", one + "/lists/1", map[string]any{"position": "x"}, `{"error":"position is invalid"}`},
		} {
			bdDo(t, s, c.method, c.path, owner.Token, c.body).Want(t, 400).WantBody(t, c.want)
		}
		// No attribute changes nothing.
		bdDo(t, s, "PUT", one, owner.Token, map[string]any{}).Want(t, 200)
		bdDo(t, s, "POST", fmt.Sprintf("/projects/%d/archive", p.ID), owner.Token, nil).Want(t, 201)
		bdDo(t, s, "GET", one, owner.Token, nil).Want(t, 200)
		bdDo(t, s, "PUT", one, owner.Token, map[string]any{"name": "x"}).Want(t, 403)
		bdDo(t, s, "POST", base, owner.Token, map[string]any{"name": "x"}).Want(t, 403)
	})
}
