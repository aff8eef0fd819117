package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/app"
	cfgpkg "quarry/internal/config"
	"quarry/internal/git/gittest"
	"quarry/internal/storetest"
)

// The environment that turns the e2e test binary into a Quarry server
// (TestMain runs moveChild instead of the tests), so that a test can kill
// it with SIGKILL mid-move: its data folder and database.
const (
	moveChildDir = "QUARRY_MOVE_CHILD_DATA_DIR"
	moveChildDB  = "QUARRY_MOVE_CHILD_DATABASE_URL"
)

// moveChild serves Quarry on the data folder with the storages of
// moveOpts until it is killed, after printing "ready <base URL>".
func moveChild() int {
	cfg := cfgpkg.Default()
	cfg.DataDir, cfg.DatabaseURL = os.Getenv(moveChildDir), os.Getenv(moveChildDB)
	cfg.PasswordCost, cfg.TaskLease, cfg.LogLevel = 4, 2*time.Second, "error"
	moveOpts(&cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	cfg.ExternalURL = "http://" + ln.Addr().String()
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	fmt.Println("ready", cfg.ExternalURL)
	return exitCode(http.Serve(ln, a.Handler))
}

func exitCode(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// startMoveChild starts the server process on dir and target; kill ends
// it with SIGKILL (also done when the test ends).
func startMoveChild(t *testing.T, target storetest.Target, dir string) (base string, kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), moveChildDir+"="+dir, moveChildDB+"="+target.DatabaseURL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	kill = func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
	t.Cleanup(kill)
	select {
	case line := <-lines:
		base, ok := strings.CutPrefix(line, "ready ")
		if !ok {
			t.Fatalf("server process: %q\n%s", line, stderr.String())
		}
		return base, kill
	case <-exited:
		t.Fatalf("server process ended\n%s", stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("server process silent\n%s", stderr.String())
	}
	return "", kill
}

// TestStorageMoves_killedMidCopy: the server is killed with SIGKILL while
// a move copies a repository of some size. After a restart the move ends
// finished or failed, never stuck; the project is writable, on exactly
// the storage the database names, whole there (git fsck), and clones and
// takes pushes.
func TestStorageMoves_killedMidCopy(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			target := apitest.NewTarget(t, d)
			dir := t.TempDir()
			first := apitest.StartIn(t, target, dir, moveOpts)
			owner := first.NewUser(t, "owner")
			p := smNewProject(t, first, owner, "heavy")
			rel := smDiskPath(t, first, p.ID)
			repo := filepath.Join(smRoot(first, "default"), rel)
			// A repository whose copy takes a moment: 24 MiB that do not
			// compress.
			big := make([]byte, 24<<20)
			if _, err := rand.Read(big); err != nil {
				t.Fatal(err)
			}
			tip := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
			head := gittest.Commit(t, repo, gittest.Files{"big.bin": string(big)}, gittest.Branch("main"), gittest.Parents(tip))
			first.Stop()

			base, kill := startMoveChild(t, target, dir)
			token := strings.TrimSpace(string(mustRead(t, filepath.Join(dir, "initial_root_token"))))
			var m smMove
			childDo(t, base, token, "POST", fmt.Sprintf("/projects/%d/repository_storage_moves", p.ID), `{"destination_storage_name":"second"}`, &m)
			// Killed as soon as the copy is being built on the
			// destination (or, should it be quicker than the test, as
			// soon as the move is seen past it).
			aside := filepath.Join(smRoot(first, "second"), rel) + ".moving-*"
			killedIn := ""
			for i, deadline := 0, time.Now().Add(30*time.Second); killedIn == ""; i++ {
				if found, _ := filepath.Glob(aside); len(found) > 0 {
					kill()
					killedIn = "mid-copy"
					break
				}
				if i%20 == 0 {
					childDo(t, base, token, "GET", fmt.Sprintf("/project_repository_storage_moves/%d", m.ID), "", &m)
					if m.State != "scheduled" && m.State != "started" {
						kill()
						killedIn = m.State
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("the move never started")
				}
				time.Sleep(time.Millisecond)
			}
			t.Logf("killed %s", killedIn)

			s := apitest.StartIn(t, target, dir, moveOpts)
			m = smWaitMove(t, s, fmt.Sprintf("/project_repository_storage_moves/%d", m.ID), inState("finished", "failed"))
			t.Logf("after the restart the move is %s (%v)", m.State, m.ErrorMessage)
			got := smGetProject(t, s, p.ID)
			pr, err := s.App.DB.ProjectByID(context.Background(), p.ID)
			if err != nil || pr.RepositoryReadOnly {
				t.Fatalf("the project is read-only after the restart (%v)", err)
			}
			want := map[string]string{"finished": "second", "failed": "default"}[m.State]
			other := map[string]string{"finished": "default", "failed": "second"}[m.State]
			if got.RepositoryStorage != want {
				t.Errorf("a %s move left the project on %q", m.State, got.RepositoryStorage)
			}
			if !smExists(smRoot(s, want), rel) {
				t.Fatalf("no repository on %s", want)
			}
			if smExists(smRoot(s, other), rel) {
				t.Errorf("a repository on %s as well", other)
			}
			gitOut(t, smRoot(s, want), "--git-dir", rel, "fsck", "--no-progress")
			if at := strings.TrimSpace(gitOut(t, smRoot(s, want), "--git-dir", rel, "rev-parse", "main")); at != head {
				t.Errorf("main at %s; want %s", at, head)
			}
			work := t.TempDir()
			gitOut(t, work, "clone", "-q", cloneURL(s, p.PathWithNamespace, "owner", owner.Token), "w")
			w := filepath.Join(work, "w")
			smCommit(t, w, "after.txt")
			gitOut(t, w, "push", "-q", "origin", "HEAD:main")
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// childDo calls the server process's API and decodes its answer into v.
func childDo(t *testing.T, base, token, method, path, body string, v any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+"/api/v4"+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("PRIVATE-TOKEN", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	res := &apitest.Response{Status: resp.StatusCode, Body: b}
	res.JSON(t, v)
}
