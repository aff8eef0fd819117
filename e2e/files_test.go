package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// filesProject makes a public project and pushes files with the real git:
// nested paths, a binary file, a non-ASCII name and a submodule entry.
func filesProject(t *testing.T, s *apitest.Server, owner apitest.User, vis string) (int64, string) {
	t.Helper()
	var p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "files-" + vis, "visibility": vis, "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
	work := t.TempDir()
	git(t, work, "clone", "-q", repoDir(t, s, p.ID), "w")
	w := filepath.Join(work, "w")
	writeFile(t, filepath.Join(w, "docs", "guide", "intro.md"), "# Intro\n")
	if err := os.WriteFile(filepath.Join(w, "bin.dat"), []byte{0, 1, 2, 255, 254}, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w, "naïve café.txt"), "unicode\n")
	git(t, w, "add", ".")
	git(t, w, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/lib")
	git(t, w, "commit", "-q", "-m", "files")
	git(t, w, "push", "-q", "origin", "HEAD:main")
	return p.ID, git(t, w, "rev-parse", "HEAD")
}

func TestFiles_read(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id, head := filesProject(t, s, owner, "public")
		base := "/projects/" + itoa(id) + "/repository/files/"
		r := s.Get(t, base+url.PathEscape("docs/guide/intro.md")+"?ref=main", "").Want(t, 200)
		f := r.Object(t)
		content, _ := base64.StdEncoding.DecodeString(f["content"].(string))
		sum := sha256.Sum256([]byte("# Intro\n"))
		if string(content) != "# Intro\n" || f["file_name"] != "intro.md" || f["file_path"] != "docs/guide/intro.md" || f["size"] != float64(8) ||
			f["commit_id"] != head || f["last_commit_id"] != head || f["content_sha256"] != hex.EncodeToString(sum[:]) || f["ref"] != "main" || f["encoding"] != "base64" {
			t.Errorf("file %v", f)
		}
		if r.Header.Get("X-Service-Blob-Id") != f["blob_id"] || r.Header.Get("X-Gitlab-Last-Commit-Id") != head {
			t.Errorf("headers %v", r.Header)
		}
		// README's last commit is the first one, not HEAD.
		if rd := s.Get(t, base+"README.md?ref=main", "").Object(t); rd["last_commit_id"] == head || rd["commit_id"] != head {
			t.Errorf("README last commit %v", rd["last_commit_id"])
		}
		hd := s.Do(t, apitest.Request{Method: "HEAD", Path: base + url.PathEscape("naïve café.txt") + "?ref=" + head})
		if hd.Status != 200 || len(hd.Body) != 0 || hd.Header.Get("X-Service-Size") != "8" || hd.Header.Get("X-Service-File-Name") != "naïve café.txt" {
			t.Errorf("HEAD %d %q %v", hd.Status, hd.Body, hd.Header)
		}
		rawHead := s.Do(t, apitest.Request{Method: "HEAD", Path: base + "bin.dat/raw"})
		if rawHead.Status != 200 || len(rawHead.Body) != 0 || rawHead.Header.Get("X-Gitlab-Size") != "5" || rawHead.Header.Get("Content-Length") != "5" {
			t.Errorf("raw HEAD %d %q %v", rawHead.Status, rawHead.Body, rawHead.Header)
		}
		raw := s.Get(t, base+"bin.dat/raw", "").Want(t, 200)
		if string(raw.Body) != "\x00\x01\x02\xff\xfe" || raw.Header.Get("Content-Length") != "5" || raw.Header.Get("X-Service-Ref") != "main" {
			t.Errorf("raw %q %v", raw.Body, raw.Header)
		}
		s.Get(t, base+"README.md", "").Want(t, 400).WantBody(t, `{"error":"ref is missing"}`)
		s.Get(t, base+"README.md?ref=", "").Want(t, 400).WantBody(t, `{"error":"ref is empty"}`)
		s.Get(t, base+"nope.md?ref=main", "").Want(t, 404).WantBody(t, `{"message":"404 File Not Found"}`)
		s.Get(t, base+"docs?ref=main", "").Want(t, 404)
		s.Get(t, base+"README.md?ref=nobranch", "").Want(t, 404).WantBody(t, `{"message":"404 Commit Not Found"}`)
		for _, bad := range []string{"../etc/passwd", "docs/../../x", "/etc/passwd", "a//b"} {
			s.Get(t, base+url.PathEscape(bad)+"?ref=main", "").Want(t, 400).WantBody(t, `{"error":"file_path should be a valid file path"}`)
		}
		// Tree: root, nested, recursive, submodule.
		names := func(q string) string {
			var out []string
			for _, e := range s.Get(t, "/projects/"+itoa(id)+"/repository/tree?"+q, "").Want(t, 200).Array(t) {
				out = append(out, e["type"].(string)+":"+e["path"].(string)+":"+e["mode"].(string))
			}
			return strings.Join(out, ",")
		}
		if got := names("per_page=100"); got != "blob:README.md:100644,blob:bin.dat:100644,tree:docs:040000,blob:naïve café.txt:100644,tree:vendor:040000" {
			t.Errorf("root tree %s", got)
		}
		if got := names("path=vendor"); got != "commit:vendor/lib:160000" {
			t.Errorf("submodule %s", got)
		}
		if got := names("recursive=true&path=docs"); got != "tree:docs/guide:040000,blob:docs/guide/intro.md:100644" {
			t.Errorf("recursive %s", got)
		}
		s.Get(t, "/projects/"+itoa(id)+"/repository/tree?ref=nope", "").Want(t, 404).WantBody(t, `{"message":"404 Tree Not Found"}`)
		s.Get(t, "/projects/"+itoa(id)+"/repository/tree?path=README.md", "").Want(t, 404)
		// Keyset through the tree.
		seen := 0
		s.Walk(t, "/projects/"+itoa(id)+"/repository/tree?pagination=keyset&per_page=2&recursive=true", "", func(r *apitest.Response) {
			seen += len(r.Array(t))
		})
		if seen != 8 {
			t.Errorf("keyset tree saw %d entries", seen)
		}
		// Blobs.
		blob := s.Get(t, "/projects/"+itoa(id)+"/repository/blobs/"+f["blob_id"].(string), "").Want(t, 200).Object(t)
		if blob["size"] != float64(8) || blob["sha"] != f["blob_id"] {
			t.Errorf("blob %v", blob)
		}
		if got := s.Get(t, "/projects/"+itoa(id)+"/repository/blobs/"+f["blob_id"].(string)+"/raw", "").Want(t, 200); string(got.Body) != "# Intro\n" {
			t.Errorf("raw blob %q", got.Body)
		}
		s.Get(t, "/projects/"+itoa(id)+"/repository/blobs/"+strings.Repeat("a", 40), "").Want(t, 404).WantBody(t, `{"message":"404 Blob Not Found"}`)
		s.Get(t, "/projects/"+itoa(id)+"/repository/blobs/"+head, "").Want(t, 404)
	})
}

func TestFiles_readAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		guest := s.NewUser(t, "guest")
		id, _ := filesProject(t, s, owner, "private")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": guest.ID, "access_level": 10}}).Want(t, 201)
		path := "/projects/" + itoa(id) + "/repository/files/README.md?ref=main"
		s.Get(t, path, "").Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, path, guest.Token).Want(t, 403)
		s.Get(t, path, owner.Token).Want(t, 200)
		readRepo := s.NewToken(t, owner.ID, "read_repository")
		s.Get(t, path, readRepo).Want(t, 200)
		s.Get(t, "/projects/"+itoa(id)+"/repository/tree", readRepo).Want(t, 403)
	})
}
