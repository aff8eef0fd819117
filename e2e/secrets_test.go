package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/app"
	"quarry/internal/model"
	"quarry/internal/secrets"
)

// secretsConfig has a manual job to play with variables; pushes make no
// pipeline.
const secretsConfig = capiNoPush + `
build: {script: [x]}
deploy: {script: [x], when: manual}
`

// secretsFixture is one of every secret Quarry keeps, made through the
// API, with the plain values a dump must not show.
type secretsFixture struct {
	p                        ciProject
	groupID                  int64
	apiPipeline, trigPipe    int64
	playedJob                int64
	projectToken, groupToken string
	instanceToken            string
	// plain maps each secret's name to its value.
	plain map[string]string
}

// secretValue is a value no dump holds by chance.
func secretValue(t *testing.T, what string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return what + "-" + hex.EncodeToString(b[:])
}

// makeSecrets stores a project and a group variable, a pipeline made
// through the API with a variable, a triggered pipeline with a variable,
// a manual job played with a variable, and the registration tokens of the
// project, the group and the instance.
func makeSecrets(t *testing.T, s *apitest.Server) secretsFixture {
	t.Helper()
	owner := s.NewUser(t, "keeper")
	f := secretsFixture{p: newCIProject(t, s, owner, "vault", map[string]string{".gitlab-ci.yml": secretsConfig}), plain: map[string]string{}}
	for _, k := range []string{"PROJECT_SECRET", "GROUP_SECRET", "API_SECRET", "TRIGGER_SECRET", "PLAY_SECRET"} {
		f.plain[k] = secretValue(t, strings.ToLower(k))
	}
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", f.p.ID), Token: owner.Token,
		JSON: map[string]any{"key": "PROJECT_SECRET", "value": f.plain["PROJECT_SECRET"]}}).Want(t, http.StatusCreated)
	var g struct {
		ID           int64  `json:"id"`
		RunnersToken string `json:"runners_token"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "Vaults", "path": "vaults"}}).
		Want(t, http.StatusCreated).JSON(t, &g)
	f.groupID, f.groupToken = g.ID, g.RunnersToken
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/variables", g.ID), Token: owner.Token,
		JSON: map[string]any{"key": "GROUP_SECRET", "value": f.plain["GROUP_SECRET"]}}).Want(t, http.StatusCreated)

	var pl pipelineJSON
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", f.p.ID), Token: owner.Token,
		JSON: map[string]any{"ref": "main", "variables": []map[string]any{{"key": "API_SECRET", "value": f.plain["API_SECRET"]}}}}).
		Want(t, http.StatusCreated).JSON(t, &pl)
	f.apiPipeline = pl.ID
	f.playedJob = f.p.job(t, pl.ID, "deploy").ID
	capiJobAction(t, f.p, owner.Token, f.playedJob, "play", map[string]any{"job_variables_attributes": []map[string]any{
		{"key": "PLAY_SECRET", "value": f.plain["PLAY_SECRET"]}}}).Want(t, http.StatusOK)

	tr := trigNew(t, s, f.p, owner.Token, "vault trigger")
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/trigger/pipeline", f.p.ID),
		Form: url.Values{"token": {tr.Token}, "ref": {"main"}, "variables[TRIGGER_SECRET]": {f.plain["TRIGGER_SECRET"]}}}).
		Want(t, http.StatusCreated).JSON(t, &pl)
	f.trigPipe = pl.ID

	var proj struct {
		RunnersToken string `json:"runners_token"`
	}
	s.Get(t, fmt.Sprintf("/projects/%d", f.p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &proj)
	f.projectToken = proj.RunnersToken
	var inst struct{ Token string }
	s.Do(t, apitest.Request{Method: "POST", Path: "/runners/reset_registration_token", Token: s.RootToken}).
		Want(t, http.StatusCreated).JSON(t, &inst)
	f.instanceToken = inst.Token
	if f.projectToken == "" || f.groupToken == "" || f.instanceToken == "" {
		t.Fatalf("registration tokens %q %q %q", f.projectToken, f.groupToken, f.instanceToken)
	}
	f.plain["project registration token"] = f.projectToken
	f.plain["group registration token"] = f.groupToken
	f.plain["instance registration token"] = f.instanceToken
	f.check(t, s)
	return f
}

// check reads every secret back through the API (the played job's
// variables through the store, which the runner's payload reads) and
// registers a runner with each registration token.
func (f secretsFixture) check(t *testing.T, s *apitest.Server) {
	t.Helper()
	f.p.s = s // after a restart
	variable := func(path, want string) {
		t.Helper()
		var v struct{ Value string }
		s.Get(t, path, f.p.Token).Want(t, http.StatusOK).JSON(t, &v)
		if v.Value != want {
			t.Errorf("%s = %q; want %q", path, v.Value, want)
		}
	}
	variable(fmt.Sprintf("/projects/%d/variables/PROJECT_SECRET", f.p.ID), f.plain["PROJECT_SECRET"])
	variable(fmt.Sprintf("/groups/%d/variables/GROUP_SECRET", f.groupID), f.plain["GROUP_SECRET"])
	for id, key := range map[int64]string{f.apiPipeline: "API_SECRET", f.trigPipe: "TRIGGER_SECRET"} {
		if got, want := strings.Join(trigPipelineVariables(t, f.p, id), " "), key+"="+f.plain[key]+" (env_var)"; got != want {
			t.Errorf("pipeline %d variables %s; want %s", id, got, want)
		}
	}
	j, err := s.App.DB.Job(ctx(t), f.playedJob)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.ManualVariables) != 1 || j.ManualVariables[0].Value != f.plain["PLAY_SECRET"] {
		t.Errorf("played job's variables %+v", j.ManualVariables)
	}
	var proj struct {
		RunnersToken string `json:"runners_token"`
	}
	s.Get(t, fmt.Sprintf("/projects/%d", f.p.ID), f.p.Token).Want(t, http.StatusOK).JSON(t, &proj)
	var g struct {
		RunnersToken string `json:"runners_token"`
	}
	s.Get(t, fmt.Sprintf("/groups/%d", f.groupID), f.p.Token).Want(t, http.StatusOK).JSON(t, &g)
	if proj.RunnersToken != f.projectToken || g.RunnersToken != f.groupToken {
		t.Errorf("registration tokens shown: project %q, group %q; want %q, %q", proj.RunnersToken, g.RunnersToken, f.projectToken, f.groupToken)
	}
	if st, err := s.App.CI.Settings(ctx(t)); err != nil || st.RunnersRegistrationToken != f.instanceToken {
		t.Errorf("instance registration token %q, %v; want %q", st.RunnersRegistrationToken, err, f.instanceToken)
	}
	for kind, token := range map[string]string{"project": f.projectToken, "group": f.groupToken, "instance": f.instanceToken} {
		var r struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": token, "description": kind}}).
			Want(t, http.StatusCreated).JSON(t, &r)
		if got, err := s.App.DB.Runner(ctx(t), r.ID); err != nil || got.Type != kind+"_type" {
			t.Errorf("runner of the %s token: %+v %v", kind, got.Type, err)
		}
	}
}

// databaseBytes is everything the server's database holds, as bytes: the
// SQLite files (the database, its write-ahead log) read byte by byte
// after the server stopped, or a pg_dump of the server's schema. It stops
// the server.
func databaseBytes(t *testing.T, s *apitest.Server) []byte {
	t.Helper()
	s.Stop()
	if path := s.SQLitePath(); path != "" {
		var all []byte
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			b, err := os.ReadFile(path + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return all
	}
	u, err := url.Parse(s.Target.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	cmd := exec.Command("pg_dump", "--no-owner", "-n", s.PostgresSchema(), u.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pg_dump: %v: %s", err, stderr.String())
	}
	return out
}

// wantNoPlainText fails for every secret of f the dump shows.
func (f secretsFixture) wantNoPlainText(t *testing.T, dump []byte) {
	t.Helper()
	// The dump is real: it shows the variables' keys.
	for _, k := range []string{"PROJECT_SECRET", "GROUP_SECRET", "API_SECRET", "TRIGGER_SECRET"} {
		if !bytes.Contains(dump, []byte(k)) {
			t.Fatalf("the dump (%d bytes) lacks the key %s", len(dump), k)
		}
	}
	for name, value := range f.plain {
		if bytes.Contains(dump, []byte(value)) {
			t.Errorf("the database shows the %s %q in plain text", name, value)
		}
	}
}

// TestSecrets_atRest: no CI/CD variable value (project, group), pipeline
// variable (API, trigger), played job's variable or registration token
// (project, group, instance) is in the database file or dump.
func TestSecrets_atRest(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := makeSecrets(t, s)
		f.wantNoPlainText(t, databaseBytes(t, s))
		fi, err := os.Stat(filepath.Join(s.DataDir, "secrets", "encryption-keys.json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("key file: %v, %v; want mode 0600", fi, err)
		}
	})
}

// rawDB opens the stopped server's database with SQL of its own, to read
// or write rows as another version of Quarry would have. q rebinds `?`
// for PostgreSQL.
func rawDB(t *testing.T, s *apitest.Server) (db *sql.DB, q func(string) string) {
	t.Helper()
	driver, dsn := "sqlite", "file:"+s.SQLitePath()+"?_pragma=busy_timeout(10000)"
	if s.Target.DatabaseURL != "" {
		driver, dsn = "pgx", s.Target.DatabaseURL
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, func(query string) string {
		if driver == "sqlite" {
			return query
		}
		n := 0
		var b strings.Builder
		for _, c := range query {
			if c == '?' {
				n++
				b.WriteString("$" + strconv.Itoa(n))
				continue
			}
			b.WriteRune(c)
		}
		return b.String()
	}
}

// restart starts the server again on its data folder and database.
func restart(t *testing.T, s *apitest.Server) *apitest.Server {
	t.Helper()
	s.Stop()
	return apitest.StartIn(t, s.Target, s.DataDir, shortPoll)
}

// TestSecrets_rotation: a rotation adds a current key and seals every
// secret with it; after a restart everything reads back, the key file
// holds both keys, and every stored value names the new key.
func TestSecrets_rotation(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := makeSecrets(t, s)
		cfg := s.App.Config
		keyFile := cfg.SecretsKeyPath()
		before, err := secrets.Load(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		s.Stop()
		old, next, err := app.RotateSecretsKey(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if old.KeyID != before.KeyID() || next.KeyID == old.KeyID || next.Resealed < len(f.plain) || next.Plain != 0 {
			t.Errorf("rotation %+v → %+v; want every value (%d) sealed again from %s", old, next, len(f.plain), before.KeyID())
		}
		after, err := secrets.Load(keyFile)
		if err != nil || after.KeyID() != next.KeyID || !after.Holds(before.KeyID()) || len(after.IDs()) != 2 {
			t.Fatalf("key file after rotation: %v (current %s), %v", after.IDs(), after.KeyID(), err)
		}

		db, q := rawDB(t, s)
		for _, query := range []string{"SELECT value FROM ci_variables", "SELECT value FROM ci_pipeline_variables",
			"SELECT manual_variables FROM ci_jobs WHERE manual_variables IS NOT NULL", "SELECT runners_token FROM projects",
			"SELECT runners_token FROM namespaces WHERE kind = 'group'", "SELECT runners_token FROM application_settings"} {
			rows, err := db.Query(q(query))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var v string
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				if id, ok := secrets.SealedWith(v); !ok || id != next.KeyID {
					t.Errorf("%s: a value sealed with %q (%v); want %s", query, id, ok, next.KeyID)
				}
				n++
			}
			if rows.Close(); n == 0 {
				t.Errorf("%s: no rows", query)
			}
		}
		db.Close()

		s = restart(t, s)
		f.check(t, s)
		// A new value is sealed with the new key and reads back; so does
		// one after a second restart (nothing left to seal).
		fresh := secretValue(t, "fresh")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", f.p.ID), Token: f.p.Token,
			JSON: map[string]any{"key": "FRESH", "value": fresh}}).Want(t, http.StatusCreated)
		s = restart(t, s)
		f.check(t, s)
		var v struct{ Value string }
		s.Get(t, fmt.Sprintf("/projects/%d/variables/FRESH", f.p.ID), f.p.Token).Want(t, http.StatusOK).JSON(t, &v)
		if v.Value != fresh {
			t.Errorf("FRESH = %q; want %q", v.Value, fresh)
		}
		f.plain["FRESH"] = fresh
		f.wantNoPlainText(t, databaseBytes(t, s))
	}, shortPoll)
}

// TestSecrets_upgradeFromPlainText: rows as a version that did not seal
// wrote them (values in plain text, registration tokens in the settings
// documents and the group's column, no digests, no record of a pass) are
// sealed on the next start, read back unchanged, and leave no plain text
// in the database file or dump.
func TestSecrets_upgradeFromPlainText(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := makeSecrets(t, s)
		s.Stop()
		db, q := rawDB(t, s)
		execSQL := func(query string, args ...any) {
			t.Helper()
			if _, err := db.Exec(q(query), args...); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}
		// withKey adds a key to the JSON document of a row.
		withKey := func(table string, id int64, key, value string) string {
			t.Helper()
			var doc string
			if err := db.QueryRow(q("SELECT settings FROM "+table+" WHERE id = ?"), id).Scan(&doc); err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatal(err)
			}
			m[key] = value
			b, _ := json.Marshal(m)
			return string(b)
		}
		execSQL("UPDATE ci_variables SET value = ? WHERE key = ?", f.plain["PROJECT_SECRET"], "PROJECT_SECRET")
		execSQL("UPDATE ci_variables SET value = ? WHERE key = ?", f.plain["GROUP_SECRET"], "GROUP_SECRET")
		legacy := secretValue(t, "legacy")
		f.plain["LEGACY_ONLY"] = legacy
		execSQL(`INSERT INTO ci_variables (project_id, key, value, variable_type, protected, masked, hidden, raw, environment_scope,
			created_at, updated_at) VALUES (?, 'LEGACY_ONLY', ?, 'env_var', FALSE, FALSE, FALSE, FALSE, '*', 0, 0)`, f.p.ID, legacy)
		execSQL("UPDATE ci_pipeline_variables SET value = ? WHERE key = ?", f.plain["API_SECRET"], "API_SECRET")
		execSQL("UPDATE ci_pipeline_variables SET value = ? WHERE key = ?", f.plain["TRIGGER_SECRET"], "TRIGGER_SECRET")
		manual, _ := json.Marshal([]model.Variable{{Key: "PLAY_SECRET", Value: f.plain["PLAY_SECRET"], VariableType: model.VarEnv}})
		execSQL("UPDATE ci_jobs SET manual_variables = ? WHERE id = ?", string(manual), f.playedJob)
		execSQL("UPDATE projects SET runners_token = NULL, runners_token_digest = NULL, settings = ? WHERE id = ?",
			withKey("projects", f.p.ID, "runners_token", f.projectToken), f.p.ID)
		execSQL("UPDATE namespaces SET runners_token = ?, runners_token_digest = NULL WHERE id = ?", f.groupToken, f.groupID)
		execSQL("UPDATE application_settings SET runners_token = NULL, runners_token_digest = NULL, settings = ? WHERE id = 1",
			withKey("application_settings", 1, "runners_registration_token", f.instanceToken))
		execSQL("DELETE FROM secrets_state")
		db.Close()

		s = restart(t, s)
		f.check(t, s)
		var v struct{ Value string }
		s.Get(t, fmt.Sprintf("/projects/%d/variables/LEGACY_ONLY", f.p.ID), f.p.Token).Want(t, http.StatusOK).JSON(t, &v)
		if v.Value != legacy {
			t.Errorf("LEGACY_ONLY = %q; want %q", v.Value, legacy)
		}
		// The pass is recorded: the next start reads nothing.
		rep, err := s.App.DB.SealSecrets(ctx(t))
		if err != nil || !rep.Current {
			t.Errorf("second pass %+v, %v; want nothing to do", rep, err)
		}
		f.wantNoPlainText(t, databaseBytes(t, s))
		s = restart(t, s)
		f.check(t, s)
	}, shortPoll)
}
