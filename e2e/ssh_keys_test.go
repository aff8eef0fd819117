package e2e

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"net/url"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/crypto/ssh"

	"quarry/internal/apitest"
)

// SSH keys and deploy keys, as GitLab's APIs give them
// (doc/api/user_keys.md, keys.md, deploy_keys.md; app/models/key.rb):
// shapes, validation messages, one owner per key, the application
// settings' type and size restrictions, and who may do what.

// authorizedKey returns a fresh public key of the kind ("ed25519",
// "rsa1024", "rsa2048", "ecdsa256", "ecdsa384") in authorized_keys form,
// with a comment.
func authorizedKey(t *testing.T, kind string) string {
	t.Helper()
	var pub any
	switch kind {
	case "ed25519":
		p, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pub = p
	case "rsa1024", "rsa2048":
		bits := 1024
		if kind == "rsa2048" {
			bits = 2048
		}
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		pub = &k.PublicKey
	case "ecdsa256", "ecdsa384":
		c := elliptic.P256()
		if kind == "ecdsa384" {
			c = elliptic.P384()
		}
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pub = &k.PublicKey
	default:
		t.Fatalf("unknown key kind %q", kind)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " someone@example.com"
}

// fingerprints gives a key's SHA256 ("SHA256:…") and MD5 fingerprints.
func fingerprints(t *testing.T, key string) (string, string) {
	t.Helper()
	pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return ssh.FingerprintSHA256(pk), ssh.FingerprintLegacyMD5(pk)
}

func addKey(t *testing.T, s *apitest.Server, path, token string, body map[string]any) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: path, Token: token, JSON: body})
}

func TestSSHKeys_userKeys(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob := s.NewUser(t, "keyalice"), s.NewUser(t, "keybob")
		ac, bc := s.Client(t, alice.Token), s.Client(t, bob.Token)
		key := authorizedKey(t, "ed25519")
		sha, md5 := fingerprints(t, key)

		// Add, read back: the key without its comment, the owner's name
		// and host instead.
		k, _, err := ac.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("laptop"), Key: gitlab.Ptr("  " + key + "\n")})
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Fields(key)
		if want := fields[0] + " " + fields[1] + " Keyalice (127.0.0.1)"; k.Key != want || k.Title != "laptop" || k.UsageType != "auth_and_signing" || k.ExpiresAt != nil || k.CreatedAt == nil {
			t.Errorf("added key: %+v; want key %q", k, want)
		}
		raw := s.Get(t, "/user/keys/"+itoa(k.ID), alice.Token).Want(t, 200).Object(t)
		for _, f := range []string{"id", "title", "created_at", "expires_at", "last_used_at", "key", "usage_type"} {
			if _, ok := raw[f]; !ok {
				t.Errorf("key entity lacks %q: %v", f, raw)
			}
		}
		if len(raw) != 7 {
			t.Errorf("key entity fields: %v", raw)
		}
		list, _, err := ac.Users.ListSSHKeys(nil)
		if err != nil || len(list) != 1 || list[0].ID != k.ID {
			t.Fatalf("own list: %v %v", list, err)
		}
		// Anyone lists a user's keys, by id or username.
		for _, ref := range []string{itoa(alice.ID), "keyalice"} {
			r := s.Get(t, "/users/"+ref+"/keys", "").Want(t, 200).Array(t)
			if len(r) != 1 || r[0]["title"] != "laptop" {
				t.Errorf("keys of %s: %v", ref, r)
			}
		}
		if got, _, err := bc.Users.GetSSHKeyForUser(alice.ID, k.ID); err != nil || got.ID != k.ID {
			t.Errorf("key of a user: %v %v", got, err)
		}
		s.Get(t, "/users/nosuchuser/keys", "").Want(t, 404).WantBody(t, `{"message":"404 User Not Found"}`)
		s.Get(t, "/users/"+itoa(bob.ID)+"/keys/"+itoa(k.ID), "").Want(t, 404).WantBody(t, `{"message":"404 Key Not Found"}`)

		// Another user's key is not the caller's.
		s.Get(t, "/user/keys/"+itoa(k.ID), bob.Token).Want(t, 404).WantBody(t, `{"message":"404 Key Not Found"}`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/user/keys/" + itoa(k.ID), Token: bob.Token}).Want(t, 404)
		s.Get(t, "/user/keys", "").Want(t, 401)

		// A key belongs to one user.
		addKey(t, s, "/user/keys", bob.Token, map[string]any{"title": "mine", "key": key}).
			Want(t, 400).WantBody(t, `{"message":{"fingerprint_sha256":["has already been taken"]}}`)

		// Bad input, GitLab's messages.
		forbidden := "type is forbidden. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK"
		for _, c := range []struct {
			name string
			body map[string]any
			want string
		}{
			{"malformed", map[string]any{"title": "x", "key": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQnotakey"},
				`{"message":{"key":["` + forbidden + `"],"fingerprint_sha256":["cannot be generated"]}}`},
			{"not a key", map[string]any{"title": "x", "key": "hello world"},
				`{"message":{"key":["` + forbidden + `","is invalid"],"fingerprint_sha256":["cannot be generated"]}}`},
			{"type mismatch", map[string]any{"title": "x", "key": "ssh-rsa " + strings.Fields(authorizedKey(t, "ed25519"))[1]},
				`{"message":{"key":["` + forbidden + `"],"fingerprint_sha256":["cannot be generated"]}}`},
			{"blank title", map[string]any{"title": " ", "key": authorizedKey(t, "ed25519")},
				`{"message":{"title":["can't be blank"]}}`},
			{"long title", map[string]any{"title": strings.Repeat("t", 256), "key": authorizedKey(t, "ed25519")},
				`{"message":{"title":["is too long (maximum is 255 characters)"]}}`},
			{"expired", map[string]any{"title": "x", "key": authorizedKey(t, "ed25519"), "expires_at": "2020-01-01T00:00:00Z"},
				`{"message":{"key":["has expired"]}}`},
			{"missing", map[string]any{}, `{"error":"key is missing, title is missing"}`},
			{"usage", map[string]any{"title": "x", "key": authorizedKey(t, "ed25519"), "usage_type": "login"},
				`{"error":"usage_type does not have a valid value"}`},
			{"bad date", map[string]any{"title": "x", "key": authorizedKey(t, "ed25519"), "expires_at": "soon"},
				`{"error":"expires_at is invalid"}`},
		} {
			addKey(t, s, "/user/keys", bob.Token, c.body).Want(t, 400).WantBody(t, c.want)
		}
		if huge := addKey(t, s, "/user/keys", bob.Token, map[string]any{"title": "x", "key": "ssh-ed25519 " + strings.Repeat("A", 6000)}); huge.Status != 400 ||
			!strings.Contains(string(huge.Body), "is too long (maximum is 5000 characters)") {
			t.Errorf("huge key: %d %s", huge.Status, huge.Body)
		}

		// Usage type and expiry kept; an RSA and an ECDSA key.
		exp := time.Now().AddDate(1, 0, 0).UTC().Truncate(24 * time.Hour)
		for _, kind := range []string{"rsa2048", "ecdsa384"} {
			got := addKey(t, s, "/user/keys", bob.Token, map[string]any{"title": kind, "key": authorizedKey(t, kind), "usage_type": "auth",
				"expires_at": exp.Format("2006-01-02")}).Want(t, 201).Object(t)
			if got["usage_type"] != "auth" || got["expires_at"] != exp.Format("2006-01-02T15:04:05.000Z") {
				t.Errorf("%s key: %v", kind, got)
			}
		}

		// Administrators add and remove other users' keys.
		root := s.Root(t)
		other := authorizedKey(t, "ecdsa256")
		if _, resp, err := bc.Users.AddSSHKeyForUser(alice.ID, &gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("x"), Key: gitlab.Ptr(other)}); err == nil || resp.StatusCode != 403 {
			t.Errorf("non-admin adds for another user: %v", err)
		}
		ak, _, err := root.Users.AddSSHKeyForUser(alice.ID, &gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("by admin"), Key: gitlab.Ptr(other)})
		if err != nil || !strings.HasSuffix(ak.Key, " Keyalice (127.0.0.1)") {
			t.Fatalf("admin adds for a user: %v %v", ak, err)
		}
		addKey(t, s, "/users/"+itoa(s.AbsentID(t))+"/keys", s.RootToken, map[string]any{"title": "x", "key": authorizedKey(t, "ed25519")}).
			Want(t, 404).WantBody(t, `{"message":"404 User Not Found"}`)
		if resp, err := bc.Users.DeleteSSHKeyForUser(alice.ID, ak.ID); err == nil || resp.StatusCode != 403 {
			t.Errorf("non-admin deletes another user's key: %v", err)
		}
		if _, err := root.Users.DeleteSSHKeyForUser(alice.ID, ak.ID); err != nil {
			t.Fatal(err)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(bob.ID) + "/keys/" + itoa(k.ID), Token: s.RootToken}).Want(t, 404).
			WantBody(t, `{"message":"404 Key Not Found"}`)

		// Keys by id and by fingerprint, for administrators, with the user.
		wk, _, err := root.Keys.GetKeyWithUser(k.ID)
		if err != nil || wk.User.Username != "keyalice" || wk.Title != "laptop" {
			t.Errorf("key with user: %+v %v", wk, err)
		}
		s.Get(t, "/keys/"+itoa(k.ID), bob.Token).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Get(t, "/keys/"+itoa(s.AbsentID(t)), s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)
		for _, fp := range []string{sha, md5, "sha256:" + strings.TrimPrefix(sha, "SHA256:")} {
			got := s.Get(t, "/keys?fingerprint="+url.QueryEscape(fp), s.RootToken).Want(t, 200).Object(t)
			if got["id"] != float64(k.ID) || got["user"].(map[string]any)["username"] != "keyalice" {
				t.Errorf("by fingerprint %s: %v", fp, got)
			}
		}
		if got, _, err := root.Keys.GetKeyByFingerprint(&gitlab.GetKeyByFingerprintOptions{Fingerprint: md5}); err != nil || got.ID != k.ID {
			t.Errorf("client by fingerprint: %v %v", got, err)
		}
		s.Get(t, "/keys?fingerprint="+url.QueryEscape(sha), bob.Token).Want(t, 403)
		s.Get(t, "/keys?fingerprint=nonsense", s.RootToken).Want(t, 400).WantBody(t, `{"message":"Failed to return the key"}`)
		s.Get(t, "/keys?fingerprint=SHA256:abc", s.RootToken).Want(t, 400)
		s.Get(t, "/keys", s.RootToken).Want(t, 400).WantBody(t, `{"error":"fingerprint is missing"}`)
		unknown, _ := fingerprints(t, authorizedKey(t, "ed25519"))
		s.Get(t, "/keys?fingerprint="+url.QueryEscape(unknown), s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Key Not Found"}`)

		// Removing a key frees its fingerprint.
		if _, err := ac.Users.DeleteSSHKey(k.ID); err != nil {
			t.Fatal(err)
		}
		s.Get(t, "/user/keys/"+itoa(k.ID), alice.Token).Want(t, 404)
		addKey(t, s, "/user/keys", bob.Token, map[string]any{"title": "now mine", "key": key}).Want(t, 201)

		// A user's keys go with the user.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(bob.ID) + "?hard_delete=true", Token: s.RootToken}).Want(t, 204)
		addKey(t, s, "/user/keys", alice.Token, map[string]any{"title": "back", "key": key}).Want(t, 201)
	})
}

func TestSSHKeys_restrictions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "keyrestrict")
		set := func(body map[string]any) {
			t.Helper()
			s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: body}).Want(t, 200)
		}
		set(map[string]any{"rsa_key_restriction": 2048, "ed25519_key_restriction": -1, "dsa_key_restriction": -1})
		addKey(t, s, "/user/keys", u.Token, map[string]any{"title": "small", "key": authorizedKey(t, "rsa1024")}).
			Want(t, 400).WantBody(t, `{"message":{"key":["must be at least 2048 bits"]}}`)
		addKey(t, s, "/user/keys", u.Token, map[string]any{"title": "rsa", "key": authorizedKey(t, "rsa2048")}).Want(t, 201)
		addKey(t, s, "/user/keys", u.Token, map[string]any{"title": "ed", "key": authorizedKey(t, "ed25519")}).
			Want(t, 400).WantBody(t, `{"message":{"key":["type is forbidden. Must be RSA, ECDSA, ECDSA_SK, or ED25519_SK"]}}`)
		// Deploy keys obey the same restrictions.
		addKey(t, s, "/deploy_keys", s.RootToken, map[string]any{"title": "ed", "key": authorizedKey(t, "ed25519")}).
			Want(t, 400).WantBody(t, `{"message":{"key":["type is forbidden. Must be RSA, ECDSA, ECDSA_SK, or ED25519_SK"]}}`)
		set(map[string]any{"ecdsa_key_restriction": 384})
		addKey(t, s, "/user/keys", u.Token, map[string]any{"title": "p256", "key": authorizedKey(t, "ecdsa256")}).
			Want(t, 400).WantBody(t, `{"message":{"key":["must be at least 384 bits"]}}`)
		addKey(t, s, "/user/keys", u.Token, map[string]any{"title": "p384", "key": authorizedKey(t, "ecdsa384")}).Want(t, 201)
		// Back to any size: the refused key goes in.
		set(map[string]any{"ed25519_key_restriction": 0})
		addKey(t, s, "/user/keys", u.Token, map[string]any{"title": "ed", "key": authorizedKey(t, "ed25519")}).Want(t, 201)
	})
}

func TestDeployKeys(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		maint, dev, outsider := s.NewUser(t, "dkmaint"), s.NewUser(t, "dkdev"), s.NewUser(t, "dkout")
		mc, root := s.Client(t, maint.Token), s.Root(t)
		project := func(name string) int64 {
			p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": name, "visibility": "private"}}).
				Want(t, 201).Object(t)
			id := int64(p["id"].(float64))
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: s.RootToken,
				JSON: map[string]any{"user_id": maint.ID, "access_level": 40}}).Want(t, 201)
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: s.RootToken,
				JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
			return id
		}
		p1, p2, p3 := project("dk1"), project("dk2"), project("dk3")
		key := authorizedKey(t, "ed25519")
		sha, md5 := fingerprints(t, key)

		dk, _, err := mc.DeployKeys.AddDeployKey(p1, &gitlab.AddDeployKeyOptions{Title: gitlab.Ptr("ci"), Key: gitlab.Ptr(key)})
		if err != nil {
			t.Fatal(err)
		}
		if dk.Key != key || dk.Fingerprint != md5 || dk.FingerprintSHA256 != sha || dk.CanPush || dk.Title != "ci" {
			t.Errorf("deploy key: %+v", dk)
		}
		raw := s.Get(t, "/projects/"+itoa(p1)+"/deploy_keys/"+itoa(dk.ID), maint.Token).Want(t, 200).Object(t)
		for _, f := range []string{"id", "title", "created_at", "expires_at", "last_used_at", "key", "usage_type", "fingerprint", "fingerprint_sha256", "can_push"} {
			if _, ok := raw[f]; !ok {
				t.Errorf("deploy key entity lacks %q: %v", f, raw)
			}
		}
		list, _, err := mc.DeployKeys.ListProjectDeployKeys(p1, nil)
		if err != nil || len(list) != 1 || list[0].ID != dk.ID {
			t.Errorf("project's deploy keys: %v %v", list, err)
		}

		// Maintainers only: a developer is refused, an outsider does not
		// see the project.
		s.Get(t, "/projects/"+itoa(p1)+"/deploy_keys", dev.Token).Want(t, 403)
		addKey(t, s, "/projects/"+itoa(p1)+"/deploy_keys", dev.Token, map[string]any{"title": "x", "key": authorizedKey(t, "ed25519")}).Want(t, 403)
		s.Get(t, "/projects/"+itoa(p1)+"/deploy_keys", outsider.Token).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, "/projects/"+itoa(p1)+"/deploy_keys", "").Want(t, 401)

		// The same key on another project the caller maintains is the same
		// deploy key, enabled there too; adding it again changes nothing.
		again, _, err := mc.DeployKeys.AddDeployKey(p2, &gitlab.AddDeployKeyOptions{Title: gitlab.Ptr("other title"), Key: gitlab.Ptr(key), CanPush: gitlab.Ptr(true)})
		if err != nil || again.ID != dk.ID || !again.CanPush || again.Title != "ci" {
			t.Errorf("same key on a second project: %+v %v", again, err)
		}
		if same, _, err := mc.DeployKeys.AddDeployKey(p1, &gitlab.AddDeployKeyOptions{Title: gitlab.Ptr("x"), Key: gitlab.Ptr(key)}); err != nil || same.ID != dk.ID || same.CanPush {
			t.Errorf("same key on the same project: %+v %v", same, err)
		}
		if en, resp, err := mc.DeployKeys.EnableDeployKey(p3, dk.ID); err != nil || resp.StatusCode != 201 || en.ID != dk.ID {
			t.Errorf("enable: %+v %v", en, err)
		}
		// A key the caller has no project of is not theirs to enable.
		other := s.NewUser(t, "dkother")
		op := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: other.Token, JSON: map[string]any{"name": "mine"}}).Want(t, 201).Object(t)
		opid := itoa(int64(op["id"].(float64)))
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + opid + "/deploy_keys/" + itoa(dk.ID) + "/enable", Token: other.Token}).
			Want(t, 404).WantBody(t, `{"message":"404 Deploy key Not Found"}`)
		addKey(t, s, "/projects/"+opid+"/deploy_keys", other.Token, map[string]any{"title": "x", "key": key}).
			Want(t, 400).WantBody(t, `{"message":{"deploy_key.fingerprint_sha256":["has already been taken"]}}`)

		// can_push per project.
		up, _, err := mc.DeployKeys.UpdateDeployKey(p1, dk.ID, &gitlab.UpdateDeployKeyOptions{CanPush: gitlab.Ptr(true), Title: gitlab.Ptr("renamed")})
		if err != nil || !up.CanPush || up.Title != "renamed" {
			t.Errorf("update: %+v %v", up, err)
		}
		if p3k, _, err := mc.DeployKeys.GetDeployKey(p3, dk.ID); err != nil || p3k.CanPush {
			t.Errorf("can_push stays per project: %+v %v", p3k, err)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p1) + "/deploy_keys/" + itoa(dk.ID), Token: maint.Token, JSON: map[string]any{}}).
			Want(t, 400).WantBody(t, `{"error":"title, can_push are missing, at least one parameter must be provided"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p1) + "/deploy_keys/" + itoa(s.AbsentID(t)), Token: maint.Token, JSON: map[string]any{"can_push": true}}).
			Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)

		// A user's key is not a deploy key, nor the other way round.
		userKey := authorizedKey(t, "ecdsa256")
		addKey(t, s, "/user/keys", dev.Token, map[string]any{"title": "dev", "key": userKey}).Want(t, 201)
		addKey(t, s, "/projects/"+itoa(p1)+"/deploy_keys", maint.Token, map[string]any{"title": "x", "key": userKey}).
			Want(t, 400).WantBody(t, `{"message":{"deploy_key.fingerprint_sha256":["has already been taken"]}}`)
		addKey(t, s, "/user/keys", dev.Token, map[string]any{"title": "x", "key": key}).
			Want(t, 400).WantBody(t, `{"message":{"fingerprint_sha256":["has already been taken"]}}`)
		addKey(t, s, "/projects/"+itoa(p1)+"/deploy_keys", maint.Token, map[string]any{"title": "x", "key": "ssh-ed25519 AAAA"}).
			Want(t, 400).WantBody(t, `{"message":{"deploy_key.key":["type is forbidden. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK"],"deploy_key.fingerprint_sha256":["cannot be generated"]}}`)

		// The instance's deploy keys: administrators list them with their
		// projects and add public ones any maintainer may enable.
		if _, resp, err := mc.DeployKeys.ListAllDeployKeys(nil); err == nil || resp.StatusCode != 403 {
			t.Errorf("non-admin lists all deploy keys: %v", err)
		}
		all, _, err := root.DeployKeys.ListAllDeployKeys(nil)
		if err != nil || len(all) != 1 || len(all[0].ProjectsWithWriteAccess) != 2 || len(all[0].ProjectsWithReadonlyAccess) != 1 {
			t.Fatalf("all deploy keys: %v %v", all, err)
		}
		if all[0].ProjectsWithReadonlyAccess[0].ID != p3 {
			t.Errorf("read-only project: %+v", all[0].ProjectsWithReadonlyAccess[0])
		}
		public := authorizedKey(t, "rsa2048")
		if _, resp, err := mc.DeployKeys.AddInstanceDeployKey(&gitlab.AddInstanceDeployKeyOptions{Title: gitlab.Ptr("pub"), Key: gitlab.Ptr(public)}); err == nil || resp.StatusCode != 403 {
			t.Errorf("non-admin adds an instance key: %v", err)
		}
		ik, resp, err := root.DeployKeys.AddInstanceDeployKey(&gitlab.AddInstanceDeployKeyOptions{Title: gitlab.Ptr("pub"), Key: gitlab.Ptr(public)})
		if err != nil || resp.StatusCode != 201 || ik.Key != public {
			t.Fatalf("instance key: %+v %v", ik, err)
		}
		if pub := s.Get(t, "/deploy_keys?public=true", s.RootToken).Want(t, 200).Array(t); len(pub) != 1 || pub[0]["id"] != float64(ik.ID) {
			t.Errorf("public deploy keys: %v", pub)
		}
		if _, _, err := s.Client(t, other.Token).DeployKeys.EnableDeployKey(opid, ik.ID); err != nil {
			t.Errorf("a maintainer enables a public key: %v", err)
		}
		// The key found by fingerprint is a deploy key, with its creator.
		byFP := s.Get(t, "/keys?fingerprint="+url.QueryEscape(sha), s.RootToken).Want(t, 200).Object(t)
		if byFP["fingerprint_sha256"] != sha || byFP["user"].(map[string]any)["username"] != "dkmaint" {
			t.Errorf("deploy key by fingerprint: %v", byFP)
		}

		// Removing: from one project it stays on the others; from the last
		// one it is gone, unless public.
		if _, err := mc.DeployKeys.DeleteDeployKey(p1, dk.ID); err != nil {
			t.Fatal(err)
		}
		s.Get(t, "/projects/"+itoa(p1)+"/deploy_keys/"+itoa(dk.ID), maint.Token).Want(t, 404)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(p1) + "/deploy_keys/" + itoa(dk.ID), Token: maint.Token}).
			Want(t, 404).WantBody(t, `{"message":"404 Deploy key Not Found"}`)
		for _, p := range []int64{p2, p3} {
			if _, err := mc.DeployKeys.DeleteDeployKey(p, dk.ID); err != nil {
				t.Fatal(err)
			}
		}
		s.Get(t, "/keys/"+itoa(dk.ID), s.RootToken).Want(t, 404)
		if _, err := s.Client(t, other.Token).DeployKeys.DeleteDeployKey(opid, ik.ID); err != nil {
			t.Fatal(err)
		}
		s.Get(t, "/keys/"+itoa(ik.ID), s.RootToken).Want(t, 200)
		// The freed key may be anyone's now.
		addKey(t, s, "/user/keys", dev.Token, map[string]any{"title": "x", "key": key}).Want(t, 201)
	})
}

// A pasted key may come with trailing spaces and a comment of several
// words; the stored key collapses the whitespace.
func TestDeployKeys_normalisedText(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "norm"}}).Want(t, 201).Object(t)
		f := strings.Fields(authorizedKey(t, "ed25519"))
		got := addKey(t, s, "/projects/"+itoa(int64(p["id"].(float64)))+"/deploy_keys", s.RootToken,
			map[string]any{"title": "n", "key": "\t" + f[0] + "   " + f[1] + "  deploy   bot \r\n"}).Want(t, 201).Object(t)
		if got["key"] != f[0]+" "+f[1]+" deploy bot" {
			t.Errorf("stored key %q", got["key"])
		}
		if _, ok := got["can_push"]; !ok {
			t.Errorf("no can_push: %v", got)
		}
	})
}
