package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// BenchmarkCloneSSH clones the make-tree repository (benchFiles files)
// with `git clone --bare` over SSH (the OpenSSH client, an ed25519 key)
// and over HTTP, from 1 and from 50 clients at once, on one server
// without the pack cache (git over SSH does not use it: the same work on
// both sides). It reports clones a second.
//
//	go test ./e2e -run '^$' -bench CloneSSH -benchtime 3x
func BenchmarkCloneSSH(b *testing.B) {
	s, port := sshServer(b, storetest.Target{Name: "sqlite"}, &testClock{now: time.Now().UTC()}, withPackCache(0))
	seedMakeTree(b, s, "big-repo")
	key, pub := sshIdentity(b, "ed25519")
	s.Do(b, apitest.Request{Method: "POST", Path: "/user/keys", Token: s.RootToken, JSON: map[string]any{"title": "bench", "key": pub}}).
		Want(b, http.StatusCreated)
	sshURL := "ssh://git@127.0.0.1:" + port + "/root/big-repo.git"
	for _, proto := range []string{"http", "ssh"} {
		for _, clients := range []int{1, 50} {
			clone := func(base string, c int) error {
				dir := filepath.Join(base, fmt.Sprintf("c%d", c))
				var out string
				var err error
				if proto == "ssh" {
					out, err = gitSSH(base, key, "clone", "-q", "--bare", sshURL, dir)
				} else {
					out, err = gitRun(base, "clone", "-q", "--bare", cloneURL(s, "root/big-repo", "", ""), dir)
				}
				if err != nil {
					return fmt.Errorf("clone over %s: %v: %s", proto, err, out)
				}
				return nil
			}
			b.Run(fmt.Sprintf("proto=%s/clients=%d", proto, clients), func(b *testing.B) {
				cloneStorm(b, s, clients, clone)
			})
		}
	}
}
