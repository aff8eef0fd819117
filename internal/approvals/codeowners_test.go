package approvals

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/codeowners"
	"quarry/internal/git"
	"quarry/internal/git/catfile"
	"quarry/internal/git/gitrepo"
	"quarry/internal/git/gittest"
	"quarry/internal/model"
)

// codeOwnersWorld is a service with no database (codeOwnersFile needs
// none), its log kept, and a real repository.
func codeOwnersWorld(t *testing.T) (*Service, *bytes.Buffer, *gitrepo.Repo, string) {
	t.Helper()
	runner, err := git.NewRunner("", filepath.Join(t.TempDir(), "git-home"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	storages, err := gitrepo.NewStorages(runner, map[string]string{"default": root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(storages.Close)
	path := gittest.InitRepo(t, filepath.Join(root, "p.git"))
	repo, err := storages.Open("default", "p.git")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s := &Service{storages: storages, log: slog.New(slog.NewTextHandler(&logs, nil)), caches: newCodeOwnerCaches()}
	return s, &logs, repo, path
}

// TestCodeOwnersFile_limits: a CODEOWNERS blob over a bound of
// codeowners.Parse gives no index and is logged once (a second read
// answers from the cache); one over the size bound is not even read.
func TestCodeOwnersFile_limits(t *testing.T) {
	s, logs, repo, path := codeOwnersWorld(t)
	pad := func(text string, size int) string {
		return text + strings.Repeat("#"+strings.Repeat("x", 98)+"\n", (size-len(text))/100) +
			strings.Repeat("\n", (size-len(text))%100)
	}
	var many, sections strings.Builder
	for i := range codeowners.MaxEntries + 1 {
		fmt.Fprintf(&many, "/f%d @u\n", i)
	}
	for i := range codeowners.MaxSections + 1 {
		fmt.Fprintf(&sections, "[S%d]\n/f @u\n", i)
	}
	files := gittest.Files{
		"small":          "docs/ @docs\n",
		"at-size":        pad("docs/ @docs\n", codeowners.MaxFileBytes),
		"over-size":      pad("docs/ @docs\n", codeowners.MaxFileBytes+1),
		"over-entries":   many.String(),
		"over-sections":  sections.String(),
		"at-entries":     strings.Join(strings.SplitAfter(many.String(), "\n")[:codeowners.MaxEntries], ""),
		"empty":          "",
		"only-a-comment": "# nobody owns anything\n",
	}
	commit := git.ObjectID(gittest.Commit(t, path, files))
	p := model.Project{ID: 42}
	for _, c := range []struct {
		name   string
		blob   string // a file of the commit; "" for a blob that does not exist
		size   int64  // of the blob that does not exist
		reason string // logged when the file is invalid
	}{
		{name: "small", blob: "small"},
		{name: "at the size bound", blob: "at-size"},
		{name: "over the size bound", blob: "over-size", reason: "file of 1048577 bytes is larger than 1048576 bytes"},
		{name: "6 MiB, never read (its id names nothing)", size: 6 << 20, reason: "file of 6291456 bytes is larger than 1048576 bytes"},
		{name: "at the entries bound", blob: "at-entries"},
		{name: "over the entries bound", blob: "over-entries", reason: "line 10001: more than 10000 entries"},
		{name: "over the sections bound", blob: "over-sections", reason: "line 2001: more than 1000 sections"},
		{name: "empty", blob: "empty"},
		{name: "only a comment", blob: "only-a-comment"},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := catfile.ObjectInfo{OID: git.ObjectID(strings.Repeat("f", 40)), Type: "blob", Size: c.size}
			if c.blob != "" {
				var err error
				if info, err = repo.ObjectAt(context.Background(), commit, c.blob); err != nil {
					t.Fatal(err)
				}
			}
			logs.Reset()
			for read := range 2 {
				f, err := s.codeOwnersFile(context.Background(), p, repo, info, "CODEOWNERS")
				if err != nil {
					t.Fatalf("read %d: %v", read, err)
				}
				if (f.index == nil) != (c.reason != "") || (f.invalid == nil) != (c.reason == "") {
					t.Fatalf("read %d: index %v, invalid %v; want invalid only with %q", read, f.index != nil, f.invalid, c.reason)
				}
			}
			if got := strings.Count(logs.String(), "CODEOWNERS ignored"); got != min(len(c.reason), 1) {
				t.Errorf("logged %d times: %s", got, logs)
			}
			if c.reason != "" && (!strings.Contains(logs.String(), c.reason) || !strings.Contains(logs.String(), "project_id=42") ||
				!strings.Contains(logs.String(), "blob="+string(info.OID))) {
				t.Errorf("log %q; want the reason %q, the project and the blob", logs, c.reason)
			}
		})
	}
}
