package e2e

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// Git over SSH with the real OpenSSH client and the real git: keys
// added through the API, clone and push with the permissions of git over
// HTTP (protected branches, deploy keys read-only until can_push), the
// push's pipeline, refused keys (removed, expired, a blocked user's), the
// greeting and refused commands.

// sshServer starts a server whose SSH server listens on a port of its
// own (127.0.0.1:0), with a clock the test moves.
func sshServer(t testing.TB, target storetest.Target, clock *testClock, opts ...apitest.Option) (*apitest.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := apitest.Start(t, target, append(opts, func(c *config) {
		c.SSHListen = ln.Addr().String()
		c.Clock = clock.Now
	})...)
	if s.App.SSH == nil {
		ln.Close()
		t.Fatal("no SSH server")
	}
	served := make(chan error, 1)
	go func() { served <- s.App.SSH.Serve(ln) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-served; err != nil {
			t.Errorf("ssh serve: %v", err)
		}
	})
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return s, port
}

// sshIdentity writes a new private key of a kind (ed25519, ecdsa, rsa)
// to a file and returns its path and the public key's authorized_keys
// line.
func sshIdentity(t testing.TB, kind string) (string, string) {
	t.Helper()
	var priv, pub any
	switch kind {
	case "ed25519":
		p, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		priv, pub = k, p
	case "ecdsa":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		priv, pub = k, k.Public()
	case "rsa":
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		priv, pub = k, k.Public()
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_"+kind)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
}

// sshCommand is the OpenSSH client git runs: the key only, no agent, no
// configuration, no known hosts, no prompt.
func sshCommand(key string) string {
	return "ssh -F /dev/null -i " + key + " -o IdentitiesOnly=yes -o IdentityAgent=none -o StrictHostKeyChecking=no" +
		" -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=20"
}

// gitSSH runs git in dir with key as its SSH identity.
func gitSSH(dir, key string, args ...string) (string, error) {
	return gitRun(dir, append([]string{"-c", "core.sshCommand=" + sshCommand(key)}, args...)...)
}

// sshClone clones url with key into a new folder and returns the working
// copy, its later pushes made with the same key.
func sshClone(t *testing.T, p ciProject, url, key string) *pushClone {
	t.Helper()
	work := t.TempDir()
	if out, err := gitSSH(work, key, "clone", "-q", url, "w"); err != nil {
		t.Fatalf("clone %s over SSH: %v\n%s", url, err, out)
	}
	c := &pushClone{t: t, p: p, dir: filepath.Join(work, "w")}
	c.git("config", "core.sshCommand", sshCommand(key))
	return c
}

// sshRun runs the OpenSSH client against the server with a command
// ("" for none) and returns what it printed and its exit code.
func sshRun(t *testing.T, key, port, command string) (string, int) {
	t.Helper()
	args := strings.Fields(strings.TrimPrefix(sshCommand(key), "ssh "))
	args = append(args, "-T", "-p", port, "git@127.0.0.1")
	if command != "" {
		args = append(args, command)
	}
	cmd := exec.Command("ssh", args...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	return string(out), code
}

func TestGitSSH_cloneAndPush(t *testing.T) {
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &testClock{now: time.Now().UTC()}
		s, port := sshServer(t, target, clock)
		owner, dev := s.NewUser(t, "sshowner"), s.NewUser(t, "sshdev")
		ownerKey, ownerPub := sshIdentity(t, "ed25519")
		devKey, devPub := sshIdentity(t, "ecdsa")
		deployKey, deployPub := sshIdentity(t, "rsa")
		ownerKeyID := itoa(int64(addKey(t, s, "/user/keys", owner.Token, map[string]any{"title": "owner", "key": ownerPub}).Want(t, http.StatusCreated).Object(t)["id"].(float64)))
		devKeyID := int64(addKey(t, s, "/user/keys", dev.Token, map[string]any{"title": "dev", "key": devPub}).Want(t, http.StatusCreated).Object(t)["id"].(float64))

		p := newCIProject(t, s, owner, "viassh", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		url := s.Get(t, "/projects/"+itoa(p.ID), owner.Token).Want(t, 200).Object(t)["ssh_url_to_repo"].(string)
		if want := "ssh://git@127.0.0.1:" + port + "/sshowner/viassh.git"; url != want {
			t.Fatalf("ssh_url_to_repo %q; want %q", url, want)
		}
		// A project's page offers the URL the API hands out.
		web := webProject(t, s, owner.Token, "viasshweb", "public")
		newBrowser(s).get(t, "/sshowner/viasshweb").want(t, http.StatusOK).contains(t, web["ssh_url_to_repo"].(string))
		if want := "ssh://git@127.0.0.1:" + port + "/sshowner/viasshweb.git"; web["ssh_url_to_repo"] != want {
			t.Errorf("ssh_url_to_repo %q; want %q", web["ssh_url_to_repo"], want)
		}

		// The greeting, and commands that are not git's refused.
		if out, code := sshRun(t, ownerKey, port, ""); code != 0 || !strings.Contains(out, "Welcome to Quarry, @sshowner!") {
			t.Errorf("greeting: %d %q", code, out)
		}
		if out, code := sshRun(t, ownerKey, port, "ls -la"); code == 0 || !strings.Contains(out, "Disallowed command") {
			t.Errorf("ls: %d %q", code, out)
		}
		if out, code := sshRun(t, ownerKey, port, "git-upload-pack 'sshowner/nothing.git'"); code == 0 ||
			!strings.Contains(out, "ERROR: The project you were looking for could not be found or you don't have permission to view it.") {
			t.Errorf("missing project: %d %q", code, out)
		}

		// Clone and push over SSH; the push makes its pipeline. The key's
		// use is recorded.
		if k := s.Get(t, "/user/keys/"+ownerKeyID, owner.Token).Want(t, 200).Object(t); k["last_used_at"] == nil {
			t.Errorf("last_used_at after the greeting: %v", k)
		}
		c := sshClone(t, p, url, ownerKey)
		sha := c.commit("over ssh", map[string]string{"ssh.txt": "hello\n"})
		c.pushRefs("HEAD:main")
		if pl := pushPipeline(t, p, "main", sha); pl.Status != "pending" || pl.User == nil || pl.User.ID != owner.ID {
			t.Errorf("push pipeline: %+v", pl)
		}
		// Push options reach the pipeline as over HTTP.
		skipped := c.commit("skip me", map[string]string{"skip.txt": "x\n"})
		c.git("push", "-q", "-o", "ci.skip", "origin", "HEAD:refs/heads/skipped")
		if pl := pushPipeline(t, p, "skipped", skipped); pl.Status != "skipped" {
			t.Errorf("ci.skip over SSH: %+v", pl)
		}
		// git archive --remote (git-upload-archive).
		if out, err := gitSSH(t.TempDir(), ownerKey, "archive", "--remote="+url, "--format=tar", "main", "ssh.txt"); err != nil || !strings.Contains(out, "hello") {
			t.Errorf("archive over SSH: %v\n%.200s", err, out)
		}
		if got := s.Get(t, "/projects/"+itoa(p.ID)+"/repository/branches/main", owner.Token).Want(t, 200).Object(t)["commit"].(map[string]any)["id"]; got != sha {
			t.Errorf("main at %v; want %s", got, sha)
		}
		// Protocol v2; the wiki, cloned and pushed.
		if out, err := gitSSH(t.TempDir(), ownerKey, "-c", "protocol.version=2", "ls-remote", url); err != nil || !strings.Contains(out, sha) {
			t.Errorf("ls-remote v2: %v %s", err, out)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/wikis", Token: owner.Token,
			JSON: map[string]any{"title": "home", "content": "hello"}}).Want(t, http.StatusCreated)
		w := sshClone(t, p, strings.TrimSuffix(url, ".git")+".wiki.git", ownerKey)
		w.commit("wiki over ssh", map[string]string{"page.md": "# page\n"})
		w.pushRefs("HEAD")
		s.Get(t, "/projects/"+itoa(p.ID)+"/wikis/page", owner.Token).Want(t, 200)

		// A snippet's repository, at its ssh_url_to_repo.
		sid := newSnippet(t, s, owner.Token, "/snippets", "Over SSH", "private", "snip.txt", "snippet body")
		surl := s.Get(t, "/snippets/"+itoa(sid), owner.Token).Want(t, 200).Object(t)["ssh_url_to_repo"].(string)
		if want := "ssh://git@127.0.0.1:" + port + "/snippets/" + itoa(sid) + ".git"; surl != want {
			t.Errorf("snippet ssh_url_to_repo %q; want %q", surl, want)
		}
		sn := sshClone(t, p, surl, ownerKey)
		if b, err := os.ReadFile(filepath.Join(sn.dir, "snip.txt")); err != nil || string(b) != "snippet body" {
			t.Errorf("snippet clone: %q %v", b, err)
		}
		if out, err := gitSSH(t.TempDir(), devKey, "ls-remote", surl); err == nil || !strings.Contains(out, "could not be found") {
			t.Errorf("another user's private snippet: %v\n%s", err, out)
		}

		// A developer pushes branches, not the protected default branch.
		d := sshClone(t, p, url, devKey)
		d.commit("dev work", map[string]string{"dev.txt": "x\n"})
		if out, err := gitRun(d.dir, "push", "origin", "HEAD:main"); err == nil ||
			!strings.Contains(out, "You are not allowed to push code to protected branches on this project.") {
			t.Errorf("developer's push to main: %v\n%s", err, out)
		}
		d.pushRefs("HEAD:refs/heads/feature")

		// A deploy key reads, and pushes only once it may.
		dk := addKey(t, s, "/projects/"+itoa(p.ID)+"/deploy_keys", owner.Token, map[string]any{"title": "deploy", "key": deployPub}).
			Want(t, http.StatusCreated).Object(t)
		k := sshClone(t, p, url, deployKey)
		k.commit("by deploy key", map[string]string{"deploy.txt": "x\n"})
		if out, err := gitRun(k.dir, "push", "origin", "HEAD:refs/heads/deploy"); err == nil ||
			!strings.Contains(out, "This deploy key does not have write access to this project.") {
			t.Errorf("read-only deploy key pushes: %v\n%s", err, out)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID) + "/deploy_keys/" + itoa(int64(dk["id"].(float64))),
			Token: owner.Token, JSON: map[string]any{"can_push": true}}).Want(t, 200)
		k.pushRefs("HEAD:refs/heads/deploy")
		if out, err := gitRun(k.dir, "push", "origin", "HEAD:main"); err == nil || !strings.Contains(out, "protected branches") {
			t.Errorf("deploy key pushes to a protected branch: %v\n%s", err, out)
		}
		if out, code := sshRun(t, deployKey, port, ""); code != 0 || !strings.Contains(out, "Welcome to Quarry, Anonymous!") {
			t.Errorf("deploy key's greeting: %d %q", code, out)
		}
		// Another project's repository is not the deploy key's.
		other := newCIProject(t, s, owner, "other", nil)
		if out, err := gitSSH(t.TempDir(), deployKey, "ls-remote", strings.Replace(url, "viassh", "other", 1)); err == nil ||
			!strings.Contains(out, "could not be found") {
			t.Errorf("deploy key on another project %d: %v\n%s", other.ID, err, out)
		}

		// enabled_git_access_protocol: http closes SSH.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{"enabled_git_access_protocol": "http"}}).Want(t, 200)
		if out, err := gitSSH(t.TempDir(), ownerKey, "ls-remote", url); err == nil || !strings.Contains(out, "Git access over SSH is not allowed") {
			t.Errorf("ssh with http only: %v\n%s", err, out)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{"enabled_git_access_protocol": ""}}).Want(t, 200)
		if out, err := gitSSH(t.TempDir(), ownerKey, "ls-remote", url); err != nil {
			t.Errorf("ssh with both protocols: %v\n%s", err, out)
		}

		// A key for signing only does not sign in.
		signKey, signPub := sshIdentity(t, "ed25519")
		addKey(t, s, "/user/keys", dev.Token, map[string]any{"title": "signing", "key": signPub, "usage_type": "signing"}).Want(t, http.StatusCreated)
		if out, err := gitSSH(t.TempDir(), signKey, "ls-remote", url); err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("signing key: %v\n%s", err, out)
		}

		// A removed key, a blocked user's key: refused.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/user/keys/" + itoa(devKeyID), Token: dev.Token}).Want(t, http.StatusNoContent)
		if out, err := gitSSH(t.TempDir(), devKey, "ls-remote", url); err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("removed key: %v\n%s", err, out)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(owner.ID) + "/block", Token: s.RootToken}).Want(t, http.StatusCreated)
		if out, err := gitSSH(t.TempDir(), ownerKey, "ls-remote", url); err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("blocked user's key: %v\n%s", err, out)
		}

		// An expired key: valid until tomorrow, refused once the clock
		// has passed it.
		exp := clock.Now().Add(24 * time.Hour)
		expKey, expPub := sshIdentity(t, "ed25519")
		addKey(t, s, "/user/keys", dev.Token, map[string]any{"title": "soon", "key": expPub, "expires_at": exp.Format(time.RFC3339)}).Want(t, http.StatusCreated)
		if out, err := gitSSH(t.TempDir(), expKey, "ls-remote", url); err != nil {
			t.Errorf("key before its expiry: %v\n%s", err, out)
		}
		clock.Set(exp.Add(time.Minute))
		if out, err := gitSSH(t.TempDir(), expKey, "ls-remote", url); err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("expired key: %v\n%s", err, out)
		}
	})
}
