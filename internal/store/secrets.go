package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"quarry/internal/model"
)

// Secrets at rest. The values Quarry must show back later (CI/CD
// variable values, pipeline variables, the variables a job was played
// with, the variables of dotenv reports, registration tokens, geo node
// secrets) are sealed by the store on
// the way in and opened on the way out, so no service can forget and a
// database dump holds none of them. The store only calls a Sealer; the keys and the
// cipher live in internal/secrets, and the key is never in the database.

// Sealer seals and opens the secrets the store keeps. internal/secrets
// implements it; the application gives it to the DB (SetSealer) before
// the DB is used.
type Sealer interface {
	// Seal encrypts plaintext under the current key, bound to column.
	Seal(plaintext, column string) (string, error)
	// Open decrypts what Seal made for column, under whichever key sealed
	// it.
	Open(sealed, column string) (string, error)
	// KeyID names the current key.
	KeyID() string
	// Holds reports whether the sealer has the key named id.
	Holds(id string) bool
	// SealedWith names the key a stored value says it was sealed with;
	// ok is false for a value that is not in the sealed form (plain text
	// from before values were sealed).
	SealedWith(value string) (id string, ok bool)
}

// The sealed columns; each name is also the context its values are bound
// to, so a value moved to another column does not open.
const (
	sealVariableValue = "ci_variables.value"
	sealPipelineVar   = "ci_pipeline_variables.value"
	sealManualVars    = "ci_jobs.manual_variables"
	sealScheduleVar   = "ci_pipeline_schedule_variables.value"
	sealJobVariable   = "ci_job_variables.value"
	sealProjectToken  = "projects.runners_token"
	sealGroupToken    = "namespaces.runners_token"
	sealInstanceToken = "application_settings.runners_token"
)

// Unique indexes of registration token digests: a token registers for
// one project or one group.
const (
	UniqueProjectRunnersToken = "projects_runners_token_key"
	UniqueGroupRunnersToken   = "namespaces_runners_token_key"
)

// errNoSealer is the error of a DB used for secrets without a sealer.
var errNoSealer = errors.New("store: no secrets key (SetSealer was not called)")

// sealerRef is the one sealer of a DB, shared by its transactions.
type sealerRef struct{ s Sealer }

// SetSealer gives the DB the sealer of its secrets; call it before the DB
// is used. Without one, reading or writing a secret is an error.
func (db *DB) SetSealer(s Sealer) { db.seal.s = s }

func (tx *Tx) sealer() (Sealer, error) {
	if tx.seal == nil || tx.seal.s == nil {
		return nil, errNoSealer
	}
	return tx.seal.s, nil
}

// sealValue seals plain for column.
func (tx *Tx) sealValue(plain, column string) (string, error) {
	s, err := tx.sealer()
	if err != nil {
		return "", err
	}
	return s.Seal(plain, column)
}

// sealToken seals a registration token and gives its digest, both NULL
// for no token.
func (tx *Tx) sealToken(token, column string) (sealed, digest any, err error) {
	if token == "" {
		return nil, nil, nil
	}
	v, err := tx.sealValue(token, column)
	if err != nil {
		return nil, nil, err
	}
	return v, tokenDigest(token), nil
}

// tokenDigest is what a registration token is looked up by: the SHA-256 of
// the token in hex, as every other token's digest (auth.Digest).
func tokenDigest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// sealedText scans a sealed text column, opening it; NULL is "".
type sealedText struct {
	tx     *Tx
	s      *string
	column string
}

func (st sealedText) Scan(v any) error {
	var raw string
	if err := (nullString{&raw}).Scan(v); err != nil {
		return err
	}
	if raw == "" {
		*st.s = ""
		return nil
	}
	s, err := st.tx.sealer()
	if err != nil {
		return err
	}
	*st.s, err = s.Open(raw, st.column)
	return err
}

// sealedJSON scans a sealed JSON column into the value it points to (NULL
// leaves the zero value).
type sealedJSON struct {
	tx     *Tx
	v      any
	column string
}

func (sj sealedJSON) Scan(v any) error {
	var doc string
	if err := (sealedText{sj.tx, &doc, sj.column}).Scan(v); err != nil {
		return err
	}
	if doc == "" {
		return nil
	}
	return json.Unmarshal([]byte(doc), sj.v)
}

// SealReport is what SealSecrets did.
type SealReport struct {
	// KeyID is the key every stored secret is sealed with now.
	KeyID string
	// Current is true when the last pass had sealed everything with that
	// key already, and nothing was read.
	Current bool
	// Plain counts values found in plain text (written before values were
	// sealed) and sealed; Resealed, values moved from an older key.
	Plain, Resealed int
}

// SealSecrets brings every stored secret under the sealer's current key,
// and records that it did: values in plain text (rows of a version that
// did not seal, found on the first start after an upgrade) are sealed, and
// registration tokens get their digests; values of older keys (after a
// rotation) are sealed again with the current one. It reads nothing when
// the last pass recorded the current key, so it is cheap on every start,
// and it is idempotent: a pass cut short is finished by the next. Each row
// is rewritten by compare-and-set on the value it read, so a concurrent
// write of that row wins and is left alone (it is sealed already).
//
// On SQLite, a pass that sealed plain text rewrites the database file
// (VACUUM) and empties the write-ahead log, so the plain text does not
// linger in free pages. On PostgreSQL old row versions stay in the table
// files until vacuumed; a dump shows none.
func (db *DB) SealSecrets(ctx context.Context) (SealReport, error) {
	s, err := db.sealer()
	if err != nil {
		return SealReport{}, err
	}
	var state string
	err = db.row(ctx, []any{&state}, "SELECT key_id FROM secrets_state WHERE id = 1")
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return SealReport{}, fmt.Errorf("secrets state: %w", err)
	}
	p := &sealPass{db: db, s: s, cur: s.KeyID(), upgrade: state == ""}
	p.rep.KeyID = p.cur
	if state == p.cur {
		p.rep.Current = true
		return p.rep, nil
	}
	if state != "" && !s.Holds(state) {
		return p.rep, fmt.Errorf("the database's secrets are sealed with key %s, which the secrets key file lacks "+
			"(every process on one database needs the same key file)", state)
	}
	for _, c := range []secretColumn{
		{table: "ci_variables", column: "value", context: sealVariableValue, pk: []pkColumn{{name: "id"}}},
		{table: "ci_pipeline_variables", column: "value", context: sealPipelineVar, pk: []pkColumn{{name: "pipeline_id"}, {name: "key", text: true}}},
		{table: "ci_jobs", column: "manual_variables", context: sealManualVars, pk: []pkColumn{{name: "id"}}},
		{table: "ci_pipeline_schedule_variables", column: "value", context: sealScheduleVar, pk: []pkColumn{{name: "schedule_id"}, {name: "key", text: true}}},
		{table: "ci_job_variables", column: "value", context: sealJobVariable, pk: []pkColumn{{name: "job_id"}, {name: "key", text: true}}},
		{table: "geo_nodes", column: "secret_access_key", context: sealGeoSecret, pk: []pkColumn{{name: "id"}}},
		{table: "oidc_signing_keys", column: "private_key", context: sealOIDCKey, pk: []pkColumn{{name: "generation"}}},
	} {
		if err := p.column(ctx, c); err != nil {
			return p.rep, err
		}
	}
	if err := p.projectTokens(ctx); err != nil {
		return p.rep, err
	}
	if err := p.groupTokens(ctx); err != nil {
		return p.rep, err
	}
	if err := p.instanceToken(ctx); err != nil {
		return p.rep, err
	}
	if p.rep.Plain > 0 && db.Dialect == SQLite {
		if _, err := db.w.ExecContext(ctx, "VACUUM"); err != nil {
			return p.rep, fmt.Errorf("vacuum after sealing: %w", mapErr(err))
		}
		if _, err := db.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return p.rep, fmt.Errorf("checkpoint after sealing: %w", mapErr(err))
		}
	}
	err = db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `INSERT INTO secrets_state (id, key_id, updated_at) VALUES (1, ?, ?)
			ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, updated_at = excluded.updated_at`, p.cur, micros(tx.Now()))
		return err
	})
	return p.rep, err
}

// sealPass is one run of SealSecrets.
type sealPass struct {
	db  *DB
	s   Sealer
	cur string
	// upgrade is true before the first pass finished: a value that does
	// not open may be plain text that only looks sealed.
	upgrade bool
	rep     SealReport
}

// sealBatch is how many rows a pass reads and rewrites at a time.
const sealBatch = 200

// reseal decides what a stored value becomes: unchanged (sealed with the
// current key), sealed again from an older key, or sealed from plain
// text. plain is the value's plain text.
func (p *sealPass) reseal(value, column string, where func() string) (next, plain string, changed bool, err error) {
	id, sealed := p.s.SealedWith(value)
	switch {
	case sealed && id == p.cur:
		plain, err = p.s.Open(value, column)
		if err == nil {
			return value, plain, false, nil
		}
		if !p.upgrade {
			return "", "", false, fmt.Errorf("%s of %s: %w", column, where(), err)
		}
	case sealed:
		plain, err = p.s.Open(value, column)
		if err == nil {
			next, err = p.s.Seal(plain, column)
			p.rep.Resealed++
			return next, plain, true, err
		}
		if !p.upgrade {
			return "", "", false, fmt.Errorf("%s of %s: %w", column, where(), err)
		}
	}
	// Plain text (or, before the first pass, text that only looks sealed).
	next, err = p.s.Seal(value, column)
	p.rep.Plain++
	return next, value, true, err
}

// pkColumn is one column of a table's primary key.
type pkColumn struct {
	name string
	text bool
}

// secretColumn is a sealed column of a table, read in keyset pages by the
// table's primary key.
type secretColumn struct {
	table, column, context string
	pk                     []pkColumn
}

func (c secretColumn) keys() string {
	s := ""
	for i, k := range c.pk {
		if i > 0 {
			s += ", "
		}
		s += k.name
	}
	return s
}

// column seals every value of c.
func (p *sealPass) column(ctx context.Context, c secretColumn) error {
	keys := c.keys()
	marks := placeholders(len(c.pk))
	sel := "SELECT " + keys + ", " + c.column + " FROM " + c.table + " WHERE " + c.column + " IS NOT NULL AND (" + keys + ") > (" +
		marks + ") ORDER BY " + keys + " LIMIT " + fmt.Sprint(sealBatch)
	upd := "UPDATE " + c.table + " SET " + c.column + " = ? WHERE "
	for _, k := range c.pk {
		upd += k.name + " = ? AND "
	}
	upd += c.column + " = ?"
	after := make([]any, len(c.pk))
	for i, k := range c.pk {
		after[i] = int64(0)
		if k.text {
			after[i] = ""
		}
	}
	for {
		type change struct {
			key       []any
			old, next string
		}
		var changes []change
		n := 0
		err := p.db.each(ctx, sel, after, func(r *sql.Rows) error {
			n++
			key := make([]any, len(c.pk))
			dest := make([]any, len(c.pk)+1)
			for i, k := range c.pk {
				if k.text {
					key[i] = new(string)
				} else {
					key[i] = new(int64)
				}
				dest[i] = key[i]
			}
			var value string
			dest[len(c.pk)] = &value
			if err := r.Scan(dest...); err != nil {
				return err
			}
			for i, k := range key {
				if s, ok := k.(*string); ok {
					key[i] = *s
				} else {
					key[i] = *k.(*int64)
				}
			}
			after = key
			next, _, changed, err := p.reseal(value, c.context, func() string { return fmt.Sprintf("%s %v", c.table, key) })
			if err != nil {
				return err
			}
			if changed {
				changes = append(changes, change{key, value, next})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seal %s.%s: %w", c.table, c.column, err)
		}
		if len(changes) > 0 {
			err = p.db.InTx(ctx, func(tx *Tx) error {
				for _, ch := range changes {
					args := append(append([]any{ch.next}, ch.key...), ch.old)
					if _, err := tx.exec(ctx, upd, args...); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("seal %s.%s: %w", c.table, c.column, err)
			}
		}
		if n < sealBatch {
			return nil
		}
	}
}

// legacyToken takes a registration token out of a settings document of a
// version that kept it there: the token ("" if none) and the document
// without it (the same text when it had none).
func legacyToken(doc, key string) (token, rest string, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		return "", doc, err
	}
	raw, ok := m[key]
	if !ok {
		return "", doc, nil
	}
	_ = json.Unmarshal(raw, &token) // null or not a string: no token
	delete(m, key)
	b, err := json.Marshal(m)
	return token, string(b), err
}

// tokenRow is a row holding a registration token: its sealed column, its
// digest and, for projects and the instance, the settings document older
// versions kept it in.
type tokenRow struct {
	id                  int64
	sealed, digest, doc string
}

// token brings one registration token to its sealed form under the
// current key with its digest; ok is false when nothing changes.
func (p *sealPass) token(r tokenRow, column, docKey string) (next tokenRow, ok bool, err error) {
	next = r
	legacy := ""
	if docKey != "" {
		if legacy, next.doc, err = legacyToken(r.doc, docKey); err != nil {
			return r, false, fmt.Errorf("%s of row %d: settings: %w", column, r.id, err)
		}
	}
	plain := ""
	switch {
	case r.sealed != "":
		next.sealed, plain, _, err = p.reseal(r.sealed, column, func() string { return fmt.Sprint("row ", r.id) })
	case legacy != "":
		next.sealed, err = p.s.Seal(legacy, column)
		plain = legacy
		p.rep.Plain++
	}
	if err != nil {
		return r, false, err
	}
	next.digest = ""
	if plain != "" {
		next.digest = tokenDigest(plain)
	}
	return next, next != r, nil
}

// tokens seals the registration tokens of one table, reading pages of
// rows with sel (id after ?, then the page size) and writing each changed
// row with upd (sealed, digest[, doc], then the id and the old sealed
// value and doc for the compare-and-set).
func (p *sealPass) tokens(ctx context.Context, what, column, docKey, sel, upd string) error {
	var after int64
	for {
		var changes [][2]tokenRow
		n := 0
		err := p.db.each(ctx, sel, []any{after, sealBatch}, func(r *sql.Rows) error {
			n++
			var row tokenRow
			dest := []any{&row.id, nullString{&row.sealed}, nullString{&row.digest}}
			if docKey != "" {
				dest = append(dest, &row.doc)
			}
			if err := r.Scan(dest...); err != nil {
				return err
			}
			after = row.id
			next, changed, err := p.token(row, column, docKey)
			if changed {
				changes = append(changes, [2]tokenRow{row, next})
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("seal %s: %w", what, err)
		}
		if len(changes) > 0 {
			err = p.db.InTx(ctx, func(tx *Tx) error {
				for _, ch := range changes {
					old, next := ch[0], ch[1]
					args := []any{emptyNull(next.sealed), emptyNull(next.digest)}
					if docKey != "" {
						args = append(args, next.doc)
					}
					args = append(args, old.id, old.sealed)
					if docKey != "" {
						args = append(args, old.doc)
					}
					if _, err := tx.exec(ctx, upd, args...); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("seal %s: %w", what, err)
			}
		}
		if n < sealBatch {
			return nil
		}
	}
}

func (p *sealPass) projectTokens(ctx context.Context) error {
	return p.tokens(ctx, "project registration tokens", sealProjectToken, "runners_token",
		"SELECT id, runners_token, runners_token_digest, settings FROM projects WHERE id > ? ORDER BY id LIMIT ?",
		`UPDATE projects SET runners_token = ?, runners_token_digest = ?, settings = ?
			WHERE id = ? AND COALESCE(runners_token, '') = ? AND settings = ?`)
}

func (p *sealPass) groupTokens(ctx context.Context) error {
	return p.tokens(ctx, "group registration tokens", sealGroupToken, "",
		"SELECT id, runners_token, runners_token_digest FROM namespaces WHERE id > ? AND runners_token IS NOT NULL ORDER BY id LIMIT ?",
		"UPDATE namespaces SET runners_token = ?, runners_token_digest = ? WHERE id = ? AND COALESCE(runners_token, '') = ?")
}

func (p *sealPass) instanceToken(ctx context.Context) error {
	return p.tokens(ctx, "the instance registration token", sealInstanceToken, "runners_registration_token",
		"SELECT id, runners_token, runners_token_digest, settings FROM application_settings WHERE id > ? ORDER BY id LIMIT ?",
		`UPDATE application_settings SET runners_token = ?, runners_token_digest = ?, settings = ?
			WHERE id = ? AND COALESCE(runners_token, '') = ? AND settings = ?`)
}

// ProjectIDByRunnersToken finds the project whose registration token this
// is, by the token's digest.
func (tx *Tx) ProjectIDByRunnersToken(ctx context.Context, token string) (int64, error) {
	var id int64
	err := tx.row(ctx, []any{&id}, "SELECT id FROM projects WHERE runners_token_digest = ?", tokenDigest(token))
	return id, err
}

// GroupIDByRunnersToken finds the group whose registration token this is,
// by the token's digest.
func (tx *Tx) GroupIDByRunnersToken(ctx context.Context, token string) (int64, error) {
	var id int64
	err := tx.row(ctx, []any{&id}, "SELECT id FROM namespaces WHERE runners_token_digest = ? AND kind = 'group'", tokenDigest(token))
	return id, err
}

// IsInstanceRunnersToken reports whether token is the instance's
// registration token, by its digest.
func (tx *Tx) IsInstanceRunnersToken(ctx context.Context, token string) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM application_settings WHERE runners_token_digest = ?", tokenDigest(token))
	return n > 0, err
}

// SetProjectRunnersToken replaces a project's registration token.
func (tx *Tx) SetProjectRunnersToken(ctx context.Context, id int64, token string) error {
	sealed, digest, err := tx.sealToken(token, sealProjectToken)
	if err != nil {
		return err
	}
	n, err := tx.execN(ctx, "UPDATE projects SET runners_token = ?, runners_token_digest = ? WHERE id = ?", sealed, digest, id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// SetGroupRunnersToken replaces a group's registration token.
func (tx *Tx) SetGroupRunnersToken(ctx context.Context, id int64, token string) error {
	sealed, digest, err := tx.sealToken(token, sealGroupToken)
	if err != nil {
		return err
	}
	n, err := tx.execN(ctx, "UPDATE namespaces SET runners_token = ?, runners_token_digest = ? WHERE id = ? AND kind = 'group'", sealed, digest, id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}
