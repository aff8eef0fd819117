package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// TestWeb_issueNotes: the issue page lists the comments the viewer sees
// (Markdown rendered, internal ones for reporters up), shows the votes,
// and takes comments from who may comment, without JavaScript; a locked
// discussion, an empty, a huge or an anonymous comment, and a private
// project's issue for an outsider are refused.
func TestWeb_issueNotes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebIssueFixture(t, s, "public")
		iid := f.issue(t, f.gus.Token, map[string]any{"title": "Talk"})
		notes := fmt.Sprintf("/issues/%d/notes", iid)
		eve, rita, gus, anon := f.signedIn(t, "eve"), f.signedIn(t, "rita"), f.signedIn(t, "gus"), newBrowser(s)

		anon.get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, `data-testid="no-notes"`, `data-testid="issue-upvotes">👍 0<`).
			lacks(t, `data-testid="note-form"`)
		eve.get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, `data-testid="note-form"`, `action="/wi/app/-/issues/1/notes"`).
			lacks(t, `data-testid="note-internal-input"`)
		rita.get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, `data-testid="note-internal-input"`)

		// An outsider comments; the body is Markdown.
		r := f.post(t, eve, f.page(iid, "/notes"), url.Values{"note": {"Looks **bad** <script>x</script>"}}).want(t, http.StatusSeeOther)
		if loc := r.Header.Get("Location"); loc != f.page(iid, "#notes") {
			t.Errorf("Location %q; want %q", loc, f.page(iid, "#notes"))
		}
		got := f.api(t, "GET", notes, f.alice.Token, nil).Want(t, http.StatusOK).Array(t)
		if len(got) != 1 || got[0]["body"] != "Looks **bad** <script>x</script>" || got[0]["author"].(map[string]any)["username"] != "eve" {
			t.Fatalf("notes after the form: %v", got)
		}
		anon.get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, `<strong>bad</strong>`, `data-testid="note-author">`).
			lacks(t, "<script>x</script>")

		// A reporter's internal note: seen by reporters up only; a guest's
		// internal box is dropped (the service saves it public).
		f.post(t, rita, f.page(iid, "/notes"), url.Values{"note": {"reporters only"}, "internal": {"1"}}).want(t, http.StatusSeeOther)
		f.post(t, gus, f.page(iid, "/notes"), url.Values{"note": {"guest public"}, "internal": {"1"}}).want(t, http.StatusSeeOther)
		rita.get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, "reporters only", `data-testid="note-internal"`, "guest public")
		f.signedIn(t, "alice").get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, "reporters only")
		for _, b := range []*browser{gus, eve, anon} {
			b.get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, "guest public").lacks(t, "reporters only", `data-testid="note-internal"`)
		}

		// Votes.
		f.api(t, "POST", fmt.Sprintf("/issues/%d/award_emoji", iid), f.eve.Token, map[string]any{"name": "thumbsup"}).Want(t, http.StatusCreated)
		f.api(t, "POST", fmt.Sprintf("/issues/%d/award_emoji", iid), f.gus.Token, map[string]any{"name": "thumbsup"}).Want(t, http.StatusCreated)
		f.api(t, "POST", fmt.Sprintf("/issues/%d/award_emoji", iid), f.rita.Token, map[string]any{"name": "thumbsdown"}).Want(t, http.StatusCreated)
		anon.get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, `data-testid="issue-upvotes">👍 2<`, `data-testid="issue-downvotes">👎 1<`)

		// Bad input: the page again with an alert, nothing made.
		f.post(t, eve, f.page(iid, "/notes"), url.Values{"note": {"   "}}).want(t, http.StatusBadRequest).
			contains(t, `data-testid="alert">The comment is empty.<`)
		f.post(t, eve, f.page(iid, "/notes"), url.Values{"note": {strings.Repeat("x", 1_000_001)}}).want(t, http.StatusBadRequest).
			contains(t, `data-testid="alert">The comment is too long`)
		f.post(t, eve, f.page(iid, "/notes"), url.Values{"note": {strings.Repeat("x", 5<<20)}}).want(t, http.StatusRequestEntityTooLarge)
		f.post(t, eve, f.page(99, "/notes"), url.Values{"note": {"x"}}).want(t, http.StatusNotFound)
		f.post(t, eve, f.page(iid, "/notes/x"), url.Values{"note": {"x"}}).want(t, http.StatusNotFound)
		r = f.post(t, anon, f.page(iid, "/notes"), url.Values{"note": {"x"}})
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in") {
			t.Errorf("anonymous comment: %d %q; want a sign-in", r.Status, r.Header.Get("Location"))
		}

		// A locked discussion: no form for an outsider, and a refusal;
		// members still comment.
		f.api(t, "PUT", fmt.Sprintf("/issues/%d", iid), f.rita.Token, map[string]any{"discussion_locked": true}).Want(t, http.StatusOK)
		eve.get(t, f.page(iid, "")).want(t, http.StatusOK).lacks(t, `data-testid="note-form"`)
		f.post(t, eve, f.page(iid, "/notes"), url.Values{"note": {"let me in"}}).want(t, http.StatusForbidden).
			contains(t, `data-testid="alert">You are not allowed to comment on this issue.<`)
		f.post(t, gus, f.page(iid, "/notes"), url.Values{"note": {"member on a lock"}}).want(t, http.StatusSeeOther)
		if n := len(f.api(t, "GET", notes, f.alice.Token, nil).Want(t, http.StatusOK).Array(t)); n != 4 {
			t.Errorf("%d notes; want 4", n)
		}
	})
}

// TestWeb_issueNotesPrivate: a private project's issue takes no
// outsider's comment (404), and its page lists them for members only.
func TestWeb_issueNotesPrivate(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebIssueFixture(t, s, "private")
		iid := f.issue(t, f.gus.Token, map[string]any{"title": "Hidden"})
		f.api(t, "POST", fmt.Sprintf("/issues/%d/notes", iid), f.gus.Token, map[string]any{"body": "members talk"}).Want(t, http.StatusCreated)
		eve := f.signedIn(t, "eve")
		eve.get(t, f.page(iid, "")).want(t, http.StatusNotFound).lacks(t, "members talk")
		f.post(t, eve, f.page(iid, "/notes"), url.Values{"note": {"x"}}).want(t, http.StatusNotFound)
		f.signedIn(t, "gus").get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, "members talk", `data-testid="note-form"`)
	})
}
