package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

func TestUserAPI_create(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		root := s.Root(t)
		u, resp, err := root.Users.CreateUser(&gitlab.CreateUserOptions{
			Email: gitlab.Ptr("Jane@Example.com"), Name: gitlab.Ptr("Jane Doe"), Username: gitlab.Ptr("jane"),
			Password: gitlab.Ptr("s3cure-enough-pw"), Bio: gitlab.Ptr("hi"), Location: gitlab.Ptr("Lyon"),
			Organization: gitlab.Ptr("Acme"), JobTitle: gitlab.Ptr("Dev"), Linkedin: gitlab.Ptr("jd"), Twitter: gitlab.Ptr("jd"),
			Skype: gitlab.Ptr("jd"), WebsiteURL: gitlab.Ptr("https://jane.example"), ProjectsLimit: gitlab.Ptr(int64(7)),
			Note: gitlab.Ptr("vip"), External: gitlab.Ptr(true), CanCreateGroup: gitlab.Ptr(false), ThemeID: gitlab.Ptr(int64(2)),
			ExternUID: gitlab.Ptr("cn=jane"), Provider: gitlab.Ptr("ldapmain"),
			SkipConfirmation: gitlab.Ptr(true),
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 201 {
			t.Errorf("status %d", resp.StatusCode)
		}
		if u.Username != "jane" || u.Email != "Jane@Example.com" || u.Name != "Jane Doe" || u.State != "active" || u.Bio != "hi" ||
			u.Location != "Lyon" || u.Organization != "Acme" || u.JobTitle != "Dev" || u.ProjectsLimit != 7 || u.Note != "vip" ||
			!u.External || u.CanCreateGroup || u.ThemeID != 2 || u.IsAdmin || u.ConfirmedAt == nil ||
			u.WebURL != s.URL+"/jane" || u.PrivateProfile || u.CreatedBy == nil || u.CreatedBy.Username != "root" {
			t.Errorf("created %+v", u)
		}
		if len(u.Identities) != 1 || u.Identities[0].Provider != "ldapmain" || u.Identities[0].ExternUID != "cn=jane" {
			t.Errorf("identities %+v", u.Identities)
		}
		// Defaults: empty bio, public profile, unconfirmed without skip.
		r := s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, JSON: map[string]any{
			"email": "min@example.com", "name": "Min", "username": "min", "reset_password": true, "private_profile": nil}}).Want(t, 201).Object(t)
		if r["bio"] != "" || r["private_profile"] != false || r["confirmed_at"] != nil || r["is_admin"] != false {
			t.Errorf("defaults %v %v %v", r["bio"], r["private_profile"], r["confirmed_at"])
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, JSON: map[string]any{
			"email": "rnd@example.com", "name": "Rnd", "username": "rnd", "force_random_password": true}}).Want(t, 201)
		// Avatar through multipart, served back.
		png := []byte("\x89PNG\r\n\x1a\navatar")
		r = s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, Multipart: map[string]string{
			"email": "pic@example.com", "name": "Pic", "username": "pic", "password": "picture-this-1"},
			Files: map[string]apitest.File{"avatar": {Name: "me.png", Content: png}}}).Want(t, 201).Object(t)
		av, _ := r["avatar_url"].(string)
		if got := s.Get(t, av, "").Want(t, 200); string(got.Body) != string(png) || got.Header.Get("Content-Type") != "image/png" {
			t.Errorf("avatar %q %q", av, got.Header.Get("Content-Type"))
		}
	})
}

func TestUserAPI_createBadInput(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.NewUser(t, "taken")
		plain := s.NewUser(t, "plain")
		readUser := s.NewToken(t, s.RootID(t), "read_user")
		post := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: token, JSON: body})
		}
		ok := map[string]any{"email": "n@example.com", "name": "N", "username": "newbie", "password": "long-enough-1"}
		with := func(k string, v any) map[string]any {
			m := map[string]any{}
			for a, b := range ok {
				m[a] = b
			}
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			return m
		}
		cases := []struct {
			name   string
			token  string
			body   map[string]any
			status int
			want   string
		}{
			{"anonymous", "", ok, 401, `{"message":"401 Unauthorized"}`},
			{"non-admin", plain.Token, ok, 403, `{"message":"403 Forbidden"}`},
			{"read_user scope", readUser, ok, 403, `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token.","scope":"api"}`},
			{"no email", s.RootToken, with("email", nil), 400, `{"error":"email is missing"}`},
			{"no name or username", s.RootToken, map[string]any{"email": "x@y.z", "password": "long-enough-1"}, 400, `{"error":"name is missing, username is missing"}`},
			{"no password", s.RootToken, with("password", nil), 400, `{"error":"password, reset_password, force_random_password are missing, at least one parameter must be provided"}`},
			{"extern_uid alone", s.RootToken, with("extern_uid", "x"), 400, `{"error":"extern_uid, provider provide all or none of parameters"}`},
			{"admin not boolean", s.RootToken, with("admin", "sure"), 400, `{"error":"admin is invalid"}`},
			{"taken email", s.RootToken, with("email", "TAKEN@example.com"), 409, `{"message":"Email has already been taken"}`},
			{"taken username", s.RootToken, with("username", "Taken"), 409, `{"message":"Username has already been taken"}`},
			{"short password", s.RootToken, with("password", "short"), 400, `{"message":{"password":["is too short (minimum is 8 characters)"]}}`},
			{"common password", s.RootToken, with("password", "password123"), 400, `{"message":{"password":["must not contain commonly used combinations of words and letters"]}}`},
			{"bad email", s.RootToken, with("email", "not-an-email"), 400, `{"message":{"email":["is invalid"]}}`},
			{"bad username", s.RootToken, with("username", "-dash"), 400, ""},
			{"reserved username", s.RootToken, with("username", "admin"), 400, `{"message":{"username":["admin is a reserved name"]}}`},
			{"long bio", s.RootToken, with("bio", strings.Repeat("b", 256)), 400, `{"message":{"bio":["is too long (maximum is 255 characters)"]}}`},
			{"negative limit", s.RootToken, with("projects_limit", -1), 400, `{"message":{"projects_limit":["must be greater than or equal to 0"]}}`},
			{"not my public email", s.RootToken, with("public_email", "other@example.com"), 400, `{"message":{"public_email":["is not an email you own"]}}`},
		}
		for _, c := range cases {
			r := post(c.token, c.body)
			if r.Status != c.status {
				t.Errorf("%s: status %d; want %d (%s)", c.name, r.Status, c.status, r.Body)
				continue
			}
			if c.want != "" {
				r.WantBody(t, c.want)
			}
		}
		// A group path is a namespace too: a validation error, not a conflict.
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken, JSON: map[string]any{"name": "Grp", "path": "grp"}}).Want(t, 201)
		post(s.RootToken, with("username", "grp")).Want(t, 400).WantBody(t, `{"message":{"username":["has already been taken"]}}`)
	})
}

func TestUserAPI_getAndViews(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(bob.ID), Token: s.RootToken, JSON: map[string]any{"private_profile": true}}).Want(t, 200)
		// Normal view.
		m := s.Get(t, "/users/"+itoa(alice.ID), bob.Token).Want(t, 200).Object(t)
		for _, k := range []string{"id", "username", "name", "state", "avatar_url", "web_url", "created_at", "bio", "bot", "followers", "following", "public_email"} {
			if _, ok := m[k]; !ok {
				t.Errorf("normal view lacks %s", k)
			}
		}
		for _, k := range []string{"email", "is_admin", "identities", "last_sign_in_ip", "note"} {
			if _, ok := m[k]; ok {
				t.Errorf("normal view shows %s", k)
			}
		}
		// A private profile hides created_at from others.
		if m := s.Get(t, "/users/"+itoa(bob.ID), alice.Token).Object(t); m["created_at"] != nil {
			t.Error("private profile shows created_at")
		}
		// Administrator view.
		a, _, err := s.Root(t).Users.GetUser(int64(alice.ID), gitlab.GetUsersOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Email != "alice@example.com" || a.IsAdmin || a.Identities == nil {
			t.Errorf("admin view %+v", a)
		}
		raw := s.Get(t, "/users/"+itoa(alice.ID), s.RootToken).Object(t)
		for _, k := range []string{"email", "is_admin", "last_sign_in_at", "confirmed_at", "theme_id", "last_activity_on", "color_scheme_id",
			"projects_limit", "current_sign_in_at", "note", "identities", "can_create_group", "can_create_project", "two_factor_enabled",
			"external", "private_profile", "commit_email", "current_sign_in_ip", "last_sign_in_ip", "plan", "trial", "sign_in_count"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("admin view lacks %s", k)
			}
		}
		s.Get(t, "/users/"+itoa(unknownID), s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 User Not Found"}`)
		s.Get(t, "/users/alice", s.RootToken).Want(t, 404)
		s.Get(t, "/users/"+itoa(alice.ID), "").Want(t, 403)
		// Blocked users are hidden from non-admins.
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(bob.ID) + "/block", Token: s.RootToken}).Want(t, 201)
		s.Get(t, "/users/"+itoa(bob.ID), alice.Token).Want(t, 404)
		s.Get(t, "/users/"+itoa(bob.ID), s.RootToken).Want(t, 200)
	})
}

func TestUserAPI_list(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		for _, n := range []string{"carol", "dave", "erin"} {
			s.NewUser(t, n)
		}
		ext := s.NewUser(t, "extern")
		blocked := s.NewUser(t, "blocky")
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(ext.ID), Token: s.RootToken, JSON: map[string]any{"external": true, "public_email": "extern@example.com"}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(blocked.ID) + "/block", Token: s.RootToken}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(ext.ID) + "/custom_attributes/team", Token: s.RootToken, JSON: map[string]any{"value": "red"}}).Want(t, 200)
		names := func(q, token string) string {
			var out []string
			for _, u := range s.Get(t, "/users?per_page=100&"+q, token).Want(t, 200).Array(t) {
				out = append(out, u["username"].(string))
			}
			return strings.Join(out, ",")
		}
		carol := s.NewUser(t, "viewer")
		cases := []struct{ q, token, want string }{
			{"", s.RootToken, "viewer,blocky,extern,erin,dave,carol,root"},
			{"", carol.Token, "viewer,extern,erin,dave,carol,root"},
			{"order_by=username&sort=asc", s.RootToken, "blocky,carol,dave,erin,extern,root,viewer"},
			{"order_by=username&sort=asc", carol.Token, "viewer,extern,erin,dave,carol,root"},
			{"search=ER", s.RootToken, "viewer,extern,erin"},
			{"search=extern@example.com", carol.Token, "extern"},
			{"search=erin@example.com", s.RootToken, "erin"},
			{"search=erin@example.com", carol.Token, ""},
			{"username=DAVE", carol.Token, "dave"},
			{"active=true", s.RootToken, "viewer,extern,erin,dave,carol,root"},
			{"blocked=true", s.RootToken, "blocky"},
			{"external=true", s.RootToken, "extern"},
			{"exclude_external=true", s.RootToken, "viewer,blocky,erin,dave,carol,root"},
			{"exclude_internal=true", s.RootToken, "viewer,blocky,extern,erin,dave,carol,root"},
			{"admins=true", s.RootToken, "root"},
			{"two_factor=enabled", s.RootToken, ""},
			{"without_projects=true", s.RootToken, "viewer,blocky,extern,erin,dave,carol,root"},
			{"custom_attributes[team]=red", s.RootToken, "extern"},
			{"created_after=2000-01-01T00:00:00Z&created_before=2100-01-01", s.RootToken, "viewer,blocky,extern,erin,dave,carol,root"},
			{"created_before=2000-01-01", s.RootToken, ""},
			{"username=dave", "", "dave"},
		}
		for _, c := range cases {
			if got := names(c.q, c.token); got != c.want {
				t.Errorf("GET /users?%s: %s; want %s", c.q, got, c.want)
			}
		}
		s.Get(t, "/users", "").Want(t, 403).WantBody(t, `{"message":"403 Forbidden - Not authorized to access /api/v4/users"}`)
		s.Get(t, "/users?order_by=email", s.RootToken).Want(t, 400).WantBody(t, `{"error":"order_by does not have a valid value"}`)
		s.Get(t, "/users?active=maybe", s.RootToken).Want(t, 400).WantBody(t, `{"error":"active is invalid"}`)
		s.Get(t, "/users?created_after=yesterday", s.RootToken).Want(t, 400)
		s.Get(t, "/users?extern_uid=x", s.RootToken).Want(t, 400)
		// with_custom_attributes for admins only.
		for _, u := range s.Get(t, "/users?with_custom_attributes=true&username=extern", s.RootToken).Array(t) {
			if fmt.Sprint(u["custom_attributes"]) != "[map[key:team value:red]]" {
				t.Errorf("custom attributes %v", u["custom_attributes"])
			}
		}
		// Offset pagination headers.
		r := s.Get(t, "/users?per_page=3&page=2", s.RootToken).Want(t, 200)
		h := r.Header
		if h.Get("X-Total") != "7" || h.Get("X-Total-Pages") != "3" || h.Get("X-Page") != "2" || h.Get("X-Per-Page") != "3" ||
			h.Get("X-Next-Page") != "3" || h.Get("X-Prev-Page") != "1" {
			t.Errorf("headers %v", h)
		}
		if _, ok := h["X-Next-Page"]; !ok {
			t.Error("X-Next-Page missing")
		}
		link := h.Get("Link")
		for _, rel := range []string{`rel="prev"`, `rel="next"`, `rel="first"`, `rel="last"`} {
			if !strings.Contains(link, rel) {
				t.Errorf("Link lacks %s: %s", rel, link)
			}
		}
		last := s.Get(t, "/users?per_page=3&page=3", s.RootToken)
		if v, ok := last.Header["X-Next-Page"]; !ok || v[0] != "" {
			t.Errorf("last page X-Next-Page %v", v)
		}
		if got := s.Get(t, "/users?per_page=500", s.RootToken).Header.Get("X-Per-Page"); got != "100" {
			t.Errorf("per_page clamp %s", got)
		}
		if got := s.Get(t, "/users?page=9", s.RootToken).Want(t, 200).Array(t); len(got) != 0 {
			t.Error("past the end not empty")
		}
		// Keyset by name: every user once, in order.
		var seen []string
		s.Walk(t, "/users?pagination=keyset&order_by=username&sort=asc&per_page=2", s.RootToken, func(r *apitest.Response) {
			for _, u := range r.Array(t) {
				seen = append(seen, u["username"].(string))
			}
			if r.Header.Get("X-Total") != "" {
				t.Error("keyset page reports totals")
			}
		})
		if strings.Join(seen, ",") != "blocky,carol,dave,erin,extern,root,viewer" {
			t.Errorf("keyset order %v", seen)
		}
	})
}

func TestUserAPI_update(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		s.NewUser(t, "bob")
		put := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(alice.ID), Token: token, JSON: body})
		}
		r := put(s.RootToken, map[string]any{"bio": "new bio", "public_email": "alice@example.com", "admin": true, "password": "brand-new-pass-9"}).Want(t, 200).Object(t)
		if r["bio"] != "new bio" || r["public_email"] != "alice@example.com" || r["is_admin"] != true {
			t.Errorf("update %v %v %v", r["bio"], r["public_email"], r["is_admin"])
		}
		put(s.RootToken, map[string]any{"public_email": "bob@example.com"}).Want(t, 400).WantBody(t, `{"message":{"public_email":["is not an email you own"]}}`)
		// Without skip_reconfirmation the address waits for confirmation.
		r = put(s.RootToken, map[string]any{"email": "new@example.com"}).Want(t, 200).Object(t)
		if r["email"] != "alice@example.com" {
			t.Errorf("email changed without confirmation: %v", r["email"])
		}
		r = put(s.RootToken, map[string]any{"email": "new@example.com", "skip_reconfirmation": true}).Want(t, 200).Object(t)
		if r["email"] != "new@example.com" {
			t.Errorf("email %v", r["email"])
		}
		// Clashes with another user: the spec says these answer 404.
		put(s.RootToken, map[string]any{"email": "BOB@example.com"}).Want(t, 404).WantBody(t, `{"message":"Email has already been taken"}`)
		put(s.RootToken, map[string]any{"username": "BOB"}).Want(t, 404).WantBody(t, `{"message":"Username has already been taken"}`)
		r = put(s.RootToken, map[string]any{"username": "alicia"}).Want(t, 200).Object(t)
		if r["username"] != "alicia" || r["web_url"] != s.URL+"/alicia" {
			t.Errorf("rename %v", r["username"])
		}
		put(alice.Token, map[string]any{"bio": "x"}).Want(t, 200) // alice is an admin now
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(unknownID), Token: s.RootToken, JSON: map[string]any{"bio": "x"}}).Want(t, 404).
			WantBody(t, `{"message":"404 User Not Found"}`)
		put(s.RootToken, map[string]any{"theme_id": 99}).Want(t, 400)
	})
}

func TestUserAPI_deleteAndIdentities(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		root := s.Root(t)
		u, _, err := root.Users.CreateUser(&gitlab.CreateUserOptions{Email: gitlab.Ptr("g@example.com"), Name: gitlab.Ptr("G"),
			Username: gitlab.Ptr("gone"), Password: gitlab.Ptr("long-enough-1"), ExternUID: gitlab.Ptr("uid-1"), Provider: gitlab.Ptr("github")})
		if err != nil {
			t.Fatal(err)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(u.ID) + "/identities/gitlab", Token: s.RootToken}).Want(t, 404).
			WantBody(t, `{"message":"404 Identity Not Found"}`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(u.ID) + "/identities/github", Token: s.RootToken}).Want(t, 204)
		if got, _, _ := root.Users.GetUser(u.ID, gitlab.GetUsersOptions{}); len(got.Identities) != 0 {
			t.Errorf("identity left: %v", got.Identities)
		}
		plain := s.NewUser(t, "plain")
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(u.ID), Token: plain.Token}).Want(t, 403)
		// A sole group owner is refused without hard_delete.
		owner := s.NewUser(t, "owner")
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "Solo", "path": "solo"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(owner.ID), Token: s.RootToken}).Want(t, 409).
			WantBody(t, `{"message":"User cannot be removed while is the sole-owner of a group"}`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(owner.ID) + "?hard_delete=true", Token: s.RootToken}).Want(t, 204)
		s.Get(t, "/groups/solo", s.RootToken).Want(t, 404) // removed with its only owner
		if _, err := root.Users.DeleteUser(u.ID); err != nil {
			t.Fatal(err)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(u.ID), Token: s.RootToken}).Want(t, 404)
		s.Get(t, "/users/"+itoa(u.ID), s.RootToken).Want(t, 404)
		// The username is free again.
		s.NewUser(t, "gone")
	})
}

func TestUserAPI_states(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		u := s.NewUser(t, "stately")
		path := "/users/" + itoa(u.ID)
		post := func(action string) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: path + "/" + action, Token: s.RootToken})
		}
		post("block").Want(t, 201).WantBody(t, `true`)
		post("block").Want(t, 201).WantBody(t, `null`)
		s.Get(t, "/user", u.Token).Want(t, 403).WantBody(t, `{"message":"403 Forbidden - Your account has been blocked."}`)
		post("deactivate").Want(t, 403).WantBody(t, `{"message":"403 Forbidden - A blocked user cannot be deactivated by the API"}`)
		post("activate").Want(t, 403).WantBody(t, `{"message":"403 Forbidden - A blocked user must be unblocked to be activated"}`)
		post("unblock").Want(t, 201).WantBody(t, `true`)
		s.Get(t, "/user", u.Token).Want(t, 200)
		// Active today: not deactivatable.
		post("deactivate").Want(t, 403).WantBody(t, `{"message":"403 Forbidden - The user you are trying to deactivate has been active in the past 90 days and cannot be deactivated"}`)
		dormant := s.NewUser(t, "dormant")
		dpath := "/users/" + itoa(dormant.ID)
		// dormant's token was never used: deactivate works.
		s.Do(t, apitest.Request{Method: "POST", Path: dpath + "/deactivate", Token: s.RootToken}).Want(t, 201).WantBody(t, `true`)
		s.Do(t, apitest.Request{Method: "POST", Path: dpath + "/deactivate", Token: s.RootToken}).Want(t, 201).WantBody(t, `null`)
		s.Get(t, "/user", dormant.Token).Want(t, 403)
		s.Do(t, apitest.Request{Method: "POST", Path: dpath + "/unblock", Token: s.RootToken}).Want(t, 403).
			WantBody(t, `{"message":"403 Forbidden - Deactivated users cannot be unblocked by the API"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: dpath + "/activate", Token: s.RootToken}).Want(t, 201).WantBody(t, `true`)
		s.Get(t, "/user", dormant.Token).Want(t, 200)
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(s.RootID(t)) + "/block", Token: s.RootToken}).Want(t, 403).
			WantBody(t, `{"message":"403 Forbidden - The API initiating user cannot be blocked by the API"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(unknownID) + "/block", Token: s.RootToken}).Want(t, 404)
		s.Do(t, apitest.Request{Method: "POST", Path: path + "/block", Token: u.Token}).Want(t, 403)
	})
}

func TestUserAPI_currentUserAndSudo(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "me")
		me, _, err := s.Client(t, u.Token).Users.CurrentUser()
		if err != nil {
			t.Fatal(err)
		}
		if me.Username != "me" || me.Email != "me@example.com" {
			t.Errorf("current user %+v", me)
		}
		m := s.Get(t, "/user", u.Token).Object(t)
		if _, ok := m["is_admin"]; ok {
			t.Error("non-admin sees is_admin")
		}
		if m := s.Get(t, "/user", s.RootToken).Object(t); m["is_admin"] != true {
			t.Error("admin view lacks is_admin")
		}
		s.Get(t, "/user", "").Want(t, 401)
		// Sudo by id or username, header or parameter.
		for _, req := range []apitest.Request{
			{Path: "/user", Token: s.RootToken, Header: map[string]string{"Sudo": "me"}},
			{Path: "/user?sudo=" + itoa(u.ID), Token: s.RootToken},
		} {
			if got := s.Do(t, req).Want(t, 200).Object(t); got["username"] != "me" {
				t.Errorf("sudo acted as %v", got["username"])
			}
		}
		s.Do(t, apitest.Request{Path: "/user", Token: s.RootToken, Header: map[string]string{"Sudo": "ghostly"}}).Want(t, 404).
			WantBody(t, `{"message":"404 User with ID or username 'ghostly' Not Found"}`)
		s.Do(t, apitest.Request{Path: "/user", Token: u.Token, Header: map[string]string{"Sudo": "root"}}).Want(t, 403).
			WantBody(t, `{"message":"403 Forbidden - Must be admin to use sudo"}`)
		apiOnly := s.NewToken(t, s.RootID(t), "api")
		s.Do(t, apitest.Request{Path: "/user", Token: apiOnly, Header: map[string]string{"Sudo": "me"}}).Want(t, 403)
	})
}

func TestUserAPI_statusAndPreferences(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "moody")
		s.Get(t, "/user/status", u.Token).Want(t, 200).WantBody(t, `{"emoji":null,"availability":null,"message":null,"message_html":null,"clear_status_at":null}`)
		st, _, err := s.Client(t, u.Token).Users.SetUserStatus(&gitlab.UserStatusOptions{Message: gitlab.Ptr("on <b>leave</b>"), ClearStatusAfter: gitlab.Ptr(gitlab.ClearStatusAfter1Day)})
		if err != nil {
			t.Fatal(err)
		}
		if st.Emoji != "speech_balloon" || st.Message != "on <b>leave</b>" || st.MessageHTML != "on &lt;b&gt;leave&lt;/b&gt;" || st.ClearStatusAt == nil ||
			st.ClearStatusAt.Before(time.Now().Add(23*time.Hour)) {
			t.Errorf("status %+v", st)
		}
		// Anyone reads a user's status, by id or username.
		for _, ref := range []string{itoa(u.ID), "moody"} {
			if m := s.Get(t, "/users/"+ref+"/status", "").Want(t, 200).Object(t); m["message"] != "on <b>leave</b>" {
				t.Errorf("status by %s: %v", ref, m)
			}
		}
		s.Get(t, "/users/nobody/status", "").Want(t, 404)
		put := func(body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "PUT", Path: "/user/status", Token: u.Token, JSON: body})
		}
		put(map[string]any{"emoji": "no_such_emoji_here"}).Want(t, 400).WantBody(t, `{"message":{"emoji":["does not exist"]}}`)
		put(map[string]any{"message": strings.Repeat("m", 101)}).Want(t, 400)
		put(map[string]any{"clear_status_after": "2_weeks"}).Want(t, 400).WantBody(t, `{"error":"clear_status_after does not have a valid value"}`)
		put(map[string]any{"availability": "away"}).Want(t, 400)
		r := put(map[string]any{"emoji": "coffee", "availability": "busy"}).Want(t, 200).Object(t)
		if r["emoji"] != "coffee" || r["availability"] != "busy" || r["message"] != "" {
			t.Errorf("put status %v", r)
		}
		r = s.Do(t, apitest.Request{Method: "PATCH", Path: "/user/status", Token: u.Token, JSON: map[string]any{"message": "brb"}}).Want(t, 200).Object(t)
		if r["emoji"] != "coffee" || r["message"] != "brb" {
			t.Errorf("patch status %v", r)
		}
		put(map[string]any{}).Want(t, 200)
		s.Get(t, "/user/status", u.Token).WantBody(t, `{"emoji":null,"availability":null,"message":null,"message_html":null,"clear_status_at":null}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/user/status", JSON: map[string]any{"emoji": "coffee"}}).Want(t, 401)

		// Preferences.
		p := s.Get(t, "/user/preferences", u.Token).Want(t, 200).Object(t)
		if p["user_id"] != float64(u.ID) || p["view_diffs_file_by_file"] != false || p["show_whitespace_in_diffs"] != true {
			t.Errorf("preferences %v", p)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: "/user/preferences", Token: u.Token, JSON: map[string]any{"view_diffs_file_by_file": true}}).
			Want(t, 400).WantBody(t, `{"error":"show_whitespace_in_diffs is missing"}`)
		p = s.Do(t, apitest.Request{Method: "PUT", Path: "/user/preferences", Token: u.Token, JSON: map[string]any{"view_diffs_file_by_file": true, "show_whitespace_in_diffs": false}}).Want(t, 200).Object(t)
		if p["view_diffs_file_by_file"] != true || p["show_whitespace_in_diffs"] != false {
			t.Errorf("preferences after put %v", p)
		}
		s.Get(t, "/user/preferences", "").Want(t, 401)
	})
}

func TestUserAPI_customAttributes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "tagged")
		base := "/users/" + itoa(u.ID) + "/custom_attributes"
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/k", Token: u.Token, JSON: map[string]any{"value": "v"}}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/k", Token: s.RootToken}).Want(t, 400).WantBody(t, `{"error":"value is missing"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/k", Token: s.RootToken, JSON: map[string]any{"value": "v"}}).Want(t, 200).WantBody(t, `{"key":"k","value":"v"}`)
		s.Get(t, base, s.RootToken).Want(t, 200).WantBody(t, `[{"key":"k","value":"v"}]`)
		s.Get(t, base+"/k", s.RootToken).Want(t, 200).WantBody(t, `{"key":"k","value":"v"}`)
		s.Get(t, base+"/nope", s.RootToken).Want(t, 404)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/k", Token: s.RootToken}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/k", Token: s.RootToken}).Want(t, 404)
	})
}
