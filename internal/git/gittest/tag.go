package gittest

import (
	"strings"
	"testing"
)

// Tag creates refs/tags/<name> pointing at target (an id or any revision)
// and returns the id the tag ref holds. An empty message makes a
// lightweight tag (the ref names target itself); otherwise the tag is
// annotated with message (a final newline is added when missing), tagged by DefaultCommitter at BaseTime, so its id
// is fixed too. An existing tag of that name fails the test.
func Tag(t testing.TB, repo, name, target, message string) string {
	t.Helper()
	ref := "refs/tags/" + name
	if message == "" {
		id := mustResolve(t, repo, target+"^{object}")
		// The empty old value: create, never move an existing tag.
		if _, err := run(repo, nil, nil, "--git-dir="+repo, "update-ref", "--end-of-options", ref, id, ""); err != nil {
			t.Fatal(err)
		}
		return id
	}
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	env := []string{"GIT_COMMITTER_NAME=" + DefaultCommitter.Name, "GIT_COMMITTER_EMAIL=" + DefaultCommitter.Email,
		"GIT_COMMITTER_DATE=" + stamp(BaseTime)}
	if _, err := run(repo, env, nil, "--git-dir="+repo, "tag", "--annotate", "--no-sign", "--cleanup=verbatim",
		"--message="+message, "--end-of-options", name, target); err != nil {
		t.Fatal(err)
	}
	return mustResolve(t, repo, ref)
}
