package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// The whole-surface fuzz test: every row of the route table (the golden
// file internal/api/testdata/routes.txt) gets a bounded battery of hostile
// inputs — wrong types, 2^63, -1 and 1e309, NUL and invalid UTF-8, "../"
// and encoded traversal in every path parameter, malformed and truncated
// JSON, wrong content types, repeated list values, deep and wide JSON,
// over-long values — as an administrator (so requests get past
// authentication into the handlers and services), and must never answer
// 5xx. The server's log is checked for failed requests too (apitest), and
// TestMain for leaked goroutines and git processes.
//
// QUARRY_FUZZ_SURFACE=N runs N more rounds of randomly drawn variants per
// row (the default run is the fixed battery, a few thousand requests per
// database); QUARRY_FUZZ_SEED fixes the draw.

// surfaceRow is one row of the golden route table.
type surfaceRow struct {
	method, path, auth, body string
}

func readRouteTable(t *testing.T) []surfaceRow {
	t.Helper()
	f, err := os.Open("../internal/api/testdata/routes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []surfaceRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		rows = append(rows, surfaceRow{method: fields[0], path: fields[1], auth: strings.Join(fields[2:len(fields)-1], " "), body: fields[len(fields)-1]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 100 {
		t.Fatalf("the route table has %d rows", len(rows))
	}
	// Destructive rows last, so the fixtures serve the rest.
	order := map[string]int{"GET": 0, "HEAD": 0, "POST": 1, "PUT": 2, "PATCH": 2, "DELETE": 3}
	slices.SortStableFunc(rows, func(a, b surfaceRow) int { return order[a.method] - order[b.method] })
	return rows
}

// surfaceFixtures are real rows for the path parameters, so requests
// reach the code past the lookups.
type surfaceFixtures struct {
	values map[string]string // wildcard (or "prefix/{id}") → value
	admin  apitest.User      // an administrator whose token the row runs with
}

func newSurfaceFixtures(t *testing.T, s *apitest.Server) *surfaceFixtures {
	t.Helper()
	admin := s.NewUser(t, "fzadmin")
	s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(admin.ID), Token: s.RootToken, JSON: map[string]any{"admin": true}}).Want(t, http.StatusOK)
	owner := s.NewUser(t, "fzowner")
	p := newCIProject(t, s, owner, "surface", map[string]string{
		".gitlab-ci.yml": "build:\n  script: [\"true\"]\n  resource_group: rg\n  artifacts:\n    paths: [out]\n",
		"docs/a.md":      "hello\n",
	})
	p.settle(t, 1)
	var g struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "fzgroup", "path": "fzgroup"}}).
		Want(t, http.StatusCreated).JSON(t, &g)
	var topic struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/topics", Token: s.RootToken, JSON: map[string]any{"name": "fztopic", "title": "fz"}}).
		Want(t, http.StatusCreated).JSON(t, &topic)
	pipes := p.pipelines(t, "")
	var jobs []struct{ ID int64 }
	s.Get(t, fmt.Sprintf("/projects/%d/jobs", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &jobs)
	if len(pipes) == 0 || len(jobs) == 0 {
		t.Fatalf("fixture pipeline %v, jobs %v", pipes, jobs)
	}
	var commit struct{ ID string }
	s.Get(t, fmt.Sprintf("/projects/%d/repository/commits/main", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &commit)
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/tags", p.ID), Token: owner.Token,
		JSON: map[string]any{"tag_name": "v1", "ref": "main"}}).Want(t, http.StatusCreated)
	p.commit(t, "feature", map[string]string{"feature.txt": "f\n"})
	var mr struct{ IID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: owner.Token,
		JSON: map[string]any{"source_branch": "feature", "target_branch": "main", "title": "fz"}}).Want(t, http.StatusCreated).JSON(t, &mr)
	var rule struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/approval_rules", p.ID), Token: owner.Token,
		JSON: map[string]any{"name": "fz", "approvals_required": 1}}).Want(t, http.StatusCreated).JSON(t, &rule)
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
		JSON: map[string]any{"key": "FZVAR", "value": "v"}}).Want(t, http.StatusCreated)
	var trig struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/triggers", p.ID), Token: owner.Token,
		JSON: map[string]any{"description": "fz"}}).Want(t, http.StatusCreated).JSON(t, &trig)
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/wikis", p.ID), Token: owner.Token,
		JSON: map[string]any{"title": "fzpage", "content": "x"}}).Want(t, http.StatusCreated)
	runner := projectRunner(t, p, nil)
	var node struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/geo_nodes", Token: s.RootToken,
		JSON: map[string]any{"name": "fznode", "url": "https://fznode.example.com"}}).Want(t, http.StatusCreated).JSON(t, &node)
	snippet := newSnippet(t, s, admin.Token, "/snippets", "fz", "private", "docs/a.md", "x")
	projectSnippet := newSnippet(t, s, owner.Token, fmt.Sprintf("/projects/%d/snippets", p.ID), "fz", "private", "docs/a.md", "x")
	var badge struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/badges", p.ID), Token: owner.Token,
		JSON: map[string]any{"link_url": "https://fz.example.com/%{project_path}", "image_url": "https://fz.example.com/%{commit_sha}"}}).
		Want(t, http.StatusCreated).JSON(t, &badge)
	for _, base := range []string{fmt.Sprintf("/projects/%d/labels", p.ID), fmt.Sprintf("/groups/%d/labels", g.ID)} {
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "fz", "color": "#fff"}}).
			Want(t, http.StatusCreated)
	}
	var milestone struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/milestones", p.ID), Token: owner.Token,
		JSON: map[string]any{"title": "fz"}}).Want(t, http.StatusCreated).JSON(t, &milestone)
	var board, list struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/boards", p.ID), Token: owner.Token,
		JSON: map[string]any{"name": "fz"}}).Want(t, http.StatusCreated).JSON(t, &board)
	var fzLabel struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "GET", Path: fmt.Sprintf("/projects/%d/labels/fz", p.ID), Token: owner.Token}).
		Want(t, http.StatusOK).JSON(t, &fzLabel)
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/boards/%d/lists", p.ID, board.ID), Token: owner.Token,
		JSON: map[string]any{"label_id": fzLabel.ID}}).Want(t, http.StatusCreated).JSON(t, &list)
	var tok struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(owner.ID) + "/personal_access_tokens", Token: s.RootToken,
		JSON: map[string]any{"name": "fz", "scopes": []string{"api"}}}).Want(t, http.StatusCreated).JSON(t, &tok)
	return &surfaceFixtures{admin: admin, values: map[string]string{
		"projects/{id}": itoa(p.ID), "groups/{id}": itoa(g.ID), "users/{id}": itoa(owner.ID), "topics/{id}": itoa(topic.ID),
		"runners/{id}": itoa(runner.ID), "namespaces/{id}": itoa(g.ID), "personal_access_tokens/{id}": itoa(tok.ID),
		"geo_nodes/{id}": itoa(node.ID), "{id}": itoa(p.ID), "{user_id}": itoa(owner.ID), "{group_id}": itoa(g.ID), "{target_group_id}": itoa(g.ID),
		"{project_id}": itoa(p.ID), "{target_project_id}": itoa(p.ID), "{forked_from_id}": itoa(p.ID),
		"{job_id}": itoa(jobs[0].ID), "{pipeline_id}": itoa(pipes[0].ID), "{merge_request_iid}": itoa(mr.IID),
		"{approval_rule_id}": itoa(rule.ID), "{key}": "FZVAR", "{sha}": commit.ID, "{branch}": "main", "{ref}": "main",
		"{tag}": "v1", "{name}": "main", "{file_path}": "docs%2Fa.md", "{slug}": "fzpage", "{trigger_id}": itoa(trig.ID),
		"{runner_id}": itoa(runner.ID), "{agent_id}": "1", "{provider}": "github", "{artifact_path...}": "out/x",
		"snippets/{id}": itoa(snippet), "{snippet_id}": itoa(projectSnippet),
		"{badge_id}": itoa(badge.ID), "{label_id}": "fz", "{milestone_id}": itoa(milestone.ID),
		"{board_id}": itoa(board.ID), "{list_id}": itoa(list.ID),
	}}
}

// value is the fixture for the wildcard at segment i of path.
func (f *surfaceFixtures) value(segs []string, i int) string {
	if i > 0 {
		if v, ok := f.values[segs[i-1]+"/"+segs[i]]; ok {
			return v
		}
	}
	if v, ok := f.values[segs[i]]; ok {
		return v
	}
	return "1"
}

// hostilePathValues go, one at a time, in each path parameter.
var hostilePathValues = []string{
	"9223372036854775808", "-1", "1e309", "a%00b", "%ff%fe", "..%2F..%2F..%2Fetc%2Fpasswd", "%2E%2E", strings.Repeat("x", 4<<10),
}

// hostileKeys are the parameter names the battery fills: between them,
// most rows read several.
var hostileKeys = []string{"name", "path", "title", "description", "id", "ref", "branch", "start_branch", "content", "commit_message",
	"file_path", "sha", "user_id", "access_level", "visibility", "topics", "tag_list", "labels", "scopes", "expires_at", "per_page", "page",
	"state_event", "variables", "key", "value", "token", "actions", "format", "target_branch", "source_branch", "assignee_ids", "user_ids",
	"group_ids", "namespace_id", "tag_name", "encoding", "author_email", "from", "to", "order_by", "sort", "search", "scope", "status",
	"job", "approvals_required", "merge_method", "squash", "info", "run_untagged", "locked", "enabled", "target_project_id", "version"}

// bodies are the battery of request bodies: content type and bytes.
func hostileBodies(rnd *rand.Rand) [][2]string {
	with := func(v any) string {
		m := map[string]any{}
		for _, k := range hostileKeys {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	mixed := func() string {
		kinds := []any{1, true, map[string]any{"a": 1}, []any{1, "x"}, nil, -1, "x", json.Number("9223372036854775808"),
			json.Number("1e309"), json.Number("-1"), "a\x00b", "../../etc/passwd", []any{"x", "x", "X"}, []any{1, 1}}
		m := map[string]any{}
		for _, k := range hostileKeys {
			m[k] = kinds[rnd.IntN(len(kinds))]
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	form := url.Values{}
	for _, k := range hostileKeys {
		form.Set(k, "%00\xff\xfe")
		form.Add(k+"[]", "x")
		form.Add(k+"[]", "x")
	}
	deep := `{"name":` + strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat("}", 40) + `}`
	wide := `{"topics":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 60_000), ",") + `]}`
	return [][2]string{
		{"application/json", with(1)},
		{"application/json", with(true)},
		{"application/json", with(map[string]any{"a": []any{1}})},
		{"application/json", with([]any{"x", "x", "X", "x"})},
		{"application/json", with(json.Number("9223372036854775808"))},
		{"application/json", with(json.Number("1e309"))},
		{"application/json", with(-1)},
		{"application/json", with("a\x00b\xff")},
		{"application/json", with("../../../etc/passwd")},
		{"application/json", with(strings.Repeat("x", 100<<10))},
		{"application/json", mixed()},
		{"application/json", `{"name":"x","topics":["a",`},
		{"application/json", `{"name"`},
		{"application/json", `[1,2,3]`},
		{"application/json", `"just a string"`},
		{"application/json", deep},
		{"application/json", wide},
		{"text/xml", `<a><b>1</b></a>`},
		{"application/x-www-form-urlencoded", form.Encode()},
		{"application/x-www-form-urlencoded", "a=%zz&b=%"},
		{"multipart/form-data; boundary=X", "--X\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n\x00\xff\r\n--X--\r\n"},
		{"multipart/form-data; boundary=X", "--X\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../x\"\r\n\r\nabc"},
		{"application/json", ""},
	}
}

func TestSurface_hostileInputs(t *testing.T) {
	rows := readRouteTable(t)
	rounds, _ := strconv.Atoi(os.Getenv("QUARRY_FUZZ_SURFACE"))
	seed, _ := strconv.ParseUint(os.Getenv("QUARRY_FUZZ_SEED"), 10, 64)
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("QUARRY_FUZZ_SEED=%d", seed)
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		fx := newSurfaceFixtures(t, s)
		rnd := rand.New(rand.NewPCG(seed, 1))
		client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		sent, statuses := 0, map[int]int{}
		send := func(row surfaceRow, path, ct, body string) {
			req, err := http.NewRequest(row.method, s.URL+"/api/v4"+path, strings.NewReader(body))
			if err != nil {
				return // not a URL a client could send
			}
			if body != "" || ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			req.Header.Set("Private-Token", fx.tokenFor(t, s, row))
			res, err := client.Do(req)
			sent++
			if err != nil {
				t.Errorf("%s %s (%s): %v", row.method, path, ct, err)
				return
			}
			b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
			res.Body.Close()
			statuses[res.StatusCode]++
			if res.StatusCode >= 500 {
				t.Errorf("%s %s (%s, %d bytes): %d %s", row.method, path, ct, len(body), res.StatusCode, b)
			}
		}
		bodies, queries := hostileBodies(rnd), hostileQueries()
		// Each row takes a share of each battery, the shares turning from
		// row to row, so every input meets many rows and the run stays a
		// few thousand requests.
		const share = 3
		for r, row := range rows {
			segs := strings.Split(row.path, "/")
			valid := fx.fill(segs, -1, "")
			// Each path parameter hostile in turn, the others valid.
			for i, seg := range segs {
				if !strings.HasPrefix(seg, "{") {
					continue
				}
				for j, v := range hostilePathValues {
					if (j+r)%share == 0 || rounds > 0 {
						send(row, fx.fill(segs, i, v), "", "")
					}
				}
			}
			// The battery of bodies (and, for reads, of queries).
			if row.method == "GET" || row.method == "HEAD" {
				for j, q := range queries {
					if (j+r)%share == 0 || rounds > 0 {
						send(row, valid+"?"+q, "", "")
					}
				}
				continue
			}
			for j, b := range bodies {
				if (j+r)%share == 0 || rounds > 0 {
					send(row, valid, b[0], b[1])
				}
			}
			for range rounds {
				b := hostileBodies(rnd)[rnd.IntN(len(bodies))]
				send(row, valid, b[0], b[1])
			}
		}
		t.Logf("%d requests, by status: %v", sent, statuses)
	}, shortPoll)
}

// fill substitutes the fixtures into a route's wildcards, v at segment
// hostile (-1: none).
func (f *surfaceFixtures) fill(segs []string, hostile int, v string) string {
	out := make([]string, len(segs))
	for i, seg := range segs {
		switch {
		case i == hostile:
			out[i] = v
		case strings.HasPrefix(seg, "{"):
			out[i] = f.value(segs, i)
		default:
			out[i] = seg
		}
	}
	return strings.Join(out, "/")
}

// hostileQueries are the query strings reads get (within the 8 KiB
// request line).
func hostileQueries() []string {
	var out []string
	for _, v := range []string{"9223372036854775808", "-1", "1e309", "%00", "%ff", "..%2F..%2F", "a,a,a"} {
		var b bytes.Buffer
		for i, k := range hostileKeys {
			if i > 0 {
				b.WriteByte('&')
			}
			b.WriteString(k + "=" + v + "&" + k + "[]=" + v)
		}
		out = append(out, b.String())
	}
	long := url.QueryEscape(strings.Repeat("x", 2<<10))
	return append(out, "search="+long+"&ref="+long+"&name="+long, "page=-5&per_page=0",
		"pagination=keyset&cursor=%00%ff&id_after=x&order_by=id", "per_page=100000000000000000000")
}

// tokenFor is the token a row runs with: the fixture administrator's,
// except on rows that would spend it (rotating or revoking itself), which
// get a fresh one each time.
func (f *surfaceFixtures) tokenFor(t *testing.T, s *apitest.Server, row surfaceRow) string {
	if strings.Contains(row.path, "personal_access_tokens") {
		return s.NewToken(t, f.admin.ID)
	}
	return f.admin.Token
}
