package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/codeowners"
)

// CODEOWNERS: when the target branch's protection requires code owner
// approval, the owners of the paths a merge request changes must approve
// (a code_owner rule per section) before it merges; a change outside
// their paths needs none of them.
func TestCodeOwners_approvals(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "coowner")
		docsLead := s.NewUser(t, "codocs")
		p := newCIProject(t, s, owner, "coproject", nil)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": docsLead.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		p.commit(t, "main", map[string]string{
			".service/CODEOWNERS": "# owners\n[Documentation]\ndocs/ @codocs\n\n[Code][1]\n*.go @coowner\n",
			"docs/guide.md":       "guide\n",
		})
		s.Do(t, apitest.Request{Method: "PATCH", Path: fmt.Sprintf("/projects/%d/protected_branches/main", p.ID), Token: owner.Token,
			JSON: map[string]any{"code_owner_approval_required": true}}).Want(t, http.StatusOK)

		newMR := func(branch string, files map[string]string) mrJSON {
			p.commit(t, branch, files)
			var mr mrJSON
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: owner.Token,
				JSON: map[string]any{"source_branch": branch, "target_branch": "main", "title": "Change " + branch}}).
				Want(t, http.StatusCreated).JSON(t, &mr)
			return mr
		}
		type ruleJSON struct {
			Name              string `json:"name"`
			RuleType          string `json:"rule_type"`
			ApprovalsRequired int    `json:"approvals_required"`
			Approved          bool   `json:"approved"`
			EligibleApprovers []struct {
				Username string `json:"username"`
			} `json:"eligible_approvers"`
		}
		state := func(iid int64) []ruleJSON {
			var st struct {
				Rules []ruleJSON `json:"rules"`
			}
			s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/%d/approval_state", p.ID, iid), owner.Token).Want(t, http.StatusOK).JSON(t, &st)
			return st.Rules
		}

		docs := newMR("docs-change", map[string]string{"docs/guide.md": "better guide\n"})
		rules := state(docs.IID)
		if len(rules) != 1 || rules[0].RuleType != "code_owner" || rules[0].Name != "Documentation" || rules[0].ApprovalsRequired != 1 ||
			len(rules[0].EligibleApprovers) != 1 || rules[0].EligibleApprovers[0].Username != "codocs" || rules[0].Approved {
			t.Fatalf("code owner rules of a docs change: %+v", rules)
		}
		detailed := func(iid int64) string {
			var mr mrJSON
			s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/%d", p.ID, iid), owner.Token).Want(t, http.StatusOK).JSON(t, &mr)
			return mr.DetailedMergeStatus
		}
		if d := detailed(docs.IID); d != "not_approved" {
			t.Errorf("detailed_merge_status %q before the code owner approved; want not_approved", d)
		}
		merge := fmt.Sprintf("/projects/%d/merge_requests/%d/merge", p.ID, docs.IID)
		s.Do(t, apitest.Request{Method: "PUT", Path: merge, Token: owner.Token}).Want(t, http.StatusMethodNotAllowed)
		// The code owner of docs/ approves: the rule is met and the merge
		// goes through.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests/%d/approve", p.ID, docs.IID),
			Token: docsLead.Token}).Want(t, http.StatusCreated)
		if rules := state(docs.IID); !rules[0].Approved {
			t.Fatalf("the code owner approved, rule %+v", rules[0])
		}
		if d := detailed(docs.IID); d != "mergeable" {
			t.Errorf("detailed_merge_status %q once approved; want mergeable", d)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: merge, Token: owner.Token}).Want(t, http.StatusOK)

		// A change no section owns has no code owner rule.
		other := newMR("readme-change", map[string]string{"NOTES.txt": "notes\n"})
		if rules := state(other.IID); len(rules) != 0 {
			t.Errorf("rules of an unowned change: %+v", rules)
		}
	})
}

// coFixture is a project whose main branch requires code owner approval,
// owned by coowner, with codocs a developer.
type coFixture struct {
	s     *apitest.Server
	owner apitest.User
	p     ciProject
}

func newCOFixture(t *testing.T, s *apitest.Server, name string, codeOwners string) coFixture {
	t.Helper()
	f := coFixture{s: s, owner: s.NewUser(t, name+"-owner")}
	f.p = newCIProject(t, s, f.owner, name, map[string]string{"CODEOWNERS": codeOwners, "docs/guide.md": "guide\n"})
	s.Do(t, apitest.Request{Method: "PATCH", Path: fmt.Sprintf("/projects/%d/protected_branches/main", f.p.ID), Token: f.owner.Token,
		JSON: map[string]any{"code_owner_approval_required": true}}).Want(t, http.StatusOK)
	return f
}

// mr commits files on a new branch and opens a merge request of it into
// main.
func (f coFixture) mr(t *testing.T, branch string, files map[string]string) int64 {
	t.Helper()
	f.p.commit(t, branch, files)
	var mr mrJSON
	f.s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", f.p.ID), Token: f.owner.Token,
		JSON: map[string]any{"source_branch": branch, "target_branch": "main", "title": "Change " + branch}}).
		Want(t, http.StatusCreated).JSON(t, &mr)
	return mr.IID
}

// owners reads a merge request's approval state (200) and returns its
// code_owner rules as "section: approver approver…" (eligible approvers
// by username, sorted), in order, and whether the merge request is
// approved (GET …/approvals).
func (f coFixture) owners(t *testing.T, iid int64) (rules []string, approved bool) {
	t.Helper()
	var st struct {
		Rules []struct {
			Name              string `json:"name"`
			RuleType          string `json:"rule_type"`
			EligibleApprovers []struct {
				Username string `json:"username"`
			} `json:"eligible_approvers"`
		} `json:"rules"`
	}
	f.s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/%d/approval_state", f.p.ID, iid), f.owner.Token).
		Want(t, http.StatusOK).JSON(t, &st)
	for _, r := range st.Rules {
		if r.RuleType != "code_owner" {
			continue
		}
		var names []string
		for _, u := range r.EligibleApprovers {
			names = append(names, u.Username)
		}
		slices.Sort(names)
		rules = append(rules, strings.TrimSpace(r.Name+": "+strings.Join(names, " ")))
	}
	var a struct {
		Approved bool `json:"approved"`
	}
	f.s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/%d/approvals", f.p.ID, iid), f.owner.Token).
		Want(t, http.StatusOK).JSON(t, &a)
	return rules, a.Approved
}

// paddedCodeOwners is text followed by comment lines up to exactly size
// bytes.
func paddedCodeOwners(text string, size int) string {
	var b strings.Builder
	b.WriteString(text)
	for b.Len() < size {
		n := min(size-b.Len(), 100)
		if n < 3 {
			b.WriteString(strings.Repeat("\n", n))
			continue
		}
		b.WriteString("#" + strings.Repeat("x", n-2) + "\n")
	}
	return b.String()
}

// entriesCodeOwners is text followed by n entries of their own files.
func entriesCodeOwners(text string, n int) string {
	var b strings.Builder
	b.WriteString(text)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "/generated/f%d @nobody\n", i)
	}
	return b.String()
}

// A CODEOWNERS over a bound (1 MiB, 10,000 entries) is invalid: no
// code_owner rules come from it, and the approval state answers as
// without one (a 6 MiB file is not even read). A file at the bounds
// gives its rules.
func TestCodeOwners_invalidFile(t *testing.T) {
	const docs = "[Documentation]\ndocs/ @codocs\n"
	type limitCase struct {
		name, file string
		want       []string
	}
	cases := []limitCase{
		{"at-size-bound", paddedCodeOwners(docs, codeowners.MaxFileBytes), []string{"Documentation: codocs"}},
		{"over-size-bound", paddedCodeOwners(docs, codeowners.MaxFileBytes+1), nil},
		{"six-mib", paddedCodeOwners(docs, 6<<20), nil},
		{"at-entries-bound", entriesCodeOwners(docs, codeowners.MaxEntries), []string{"Documentation: codocs"}},
		{"over-entries-bound", entriesCodeOwners(docs, codeowners.MaxEntries+1), nil},
	}
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.NewUser(t, "codocs")
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				f := newCOFixture(t, s, "co-"+c.name, c.file)
				iid := f.mr(t, "docs-change", map[string]string{"docs/guide.md": "better guide\n"})
				for range 2 { // the second read answers from the caches
					rules, approved := f.owners(t, iid)
					if !slices.Equal(rules, c.want) || approved != (c.want == nil) {
						t.Fatalf("code owner rules %q, approved %v; want %q", rules, approved, c.want)
					}
				}
			})
		}
	})
}

// The rules follow the target branch's CODEOWNERS (a new blob) and the
// source branch's pushes (a new head) — never served stale from the
// caches — and the owners' users and groups are resolved on every read.
func TestCodeOwners_followFilePushesAndMembers(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.NewUser(t, "codocs")
		lead := s.NewUser(t, "colead")
		v1 := "[Documentation]\ndocs/ @codocs\n[Code]\n*.go @colead\n[Team]\ndocs/ @coteam @colate\n"
		f := newCOFixture(t, s, "cofollow", v1)
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: f.owner.Token, JSON: map[string]any{"name": "coteam", "path": "coteam"}}).
			Want(t, http.StatusCreated).JSON(t, &g)
		iid := f.mr(t, "docs-change", map[string]string{"docs/guide.md": "better guide\n"})
		want := func(step string, rules ...string) {
			t.Helper()
			for range 2 { // the second read answers from the caches
				if got, _ := f.owners(t, iid); !slices.Equal(got, rules) {
					t.Fatalf("%s: code owner rules %q; want %q", step, got, rules)
				}
			}
		}
		// coteam's only member is its creator, the merge request's author,
		// who may not approve it.
		want("first read", "Documentation: codocs", "Team:")

		// CODEOWNERS changes on the target branch: the merge request's
		// commits did not move, the file did.
		f.p.commit(t, "main", map[string]string{"CODEOWNERS": strings.Replace(v1, "docs/ @codocs", "docs/ @colead", 1)})
		want("CODEOWNERS changed on main", "Documentation: colead", "Team:")

		// A push to the source branch changes the paths (once the merge
		// request follows it: the refs-changed event moves its sha).
		head := f.p.commit(t, "docs-change", map[string]string{"tool.go": "package tool\n"})
		eventually(t, "the merge request's sha follows the push", func() bool {
			var mr mrJSON
			s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/%d", f.p.ID, iid), f.owner.Token).Want(t, http.StatusOK).JSON(t, &mr)
			return mr.SHA == head
		})
		want("pushed a .go file", "Documentation: colead", "Code: colead", "Team:")

		// Back to the first file (its blob again) at the new head.
		f.p.commit(t, "main", map[string]string{"CODEOWNERS": v1})
		want("CODEOWNERS restored", "Documentation: codocs", "Code: colead", "Team:")

		// Owners are users and groups as they are now: a member joins the
		// group, a user named in the file signs up.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g.ID), Token: f.owner.Token,
			JSON: map[string]any{"user_id": lead.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		s.NewUser(t, "colate")
		want("members changed", "Documentation: codocs", "Code: colead", "Team: colate colead")
	})
}
