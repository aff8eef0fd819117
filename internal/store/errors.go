package store

import (
	"database/sql"
	"errors"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"quarry/internal/model"
)

// UniqueError reports a unique constraint that refused a write. Constraint
// is the index's name as the migrations declare it, on both engines.
type UniqueError struct {
	Constraint string
	err        error
}

func (e *UniqueError) Error() string {
	return "unique constraint " + e.Constraint + ": " + e.err.Error()
}

// Is makes a UniqueError count as model.ErrConflict.
func (e *UniqueError) Is(target error) bool { return target == model.ErrConflict }

// IsUnique reports whether err is a violation of the named unique index.
func IsUnique(err error, constraint string) bool {
	var u *UniqueError
	return errors.As(err, &u) && u.Constraint == constraint
}

var sqliteIndexName = regexp.MustCompile(`UNIQUE constraint failed: index '([^']+)'`)

// sqliteColumnUniques names the unique indexes SQLite reports by their
// columns (indexes on plain columns); PostgreSQL reports the index name.
var sqliteColumnUniques = map[string]string{
	"project_group_links.project_id, project_group_links.group_id": UniqueGroupLink,
	"personal_access_tokens.token_digest":                          "personal_access_tokens_digest_key",
	"identities.user_id, identities.provider":                      "identities_user_provider_key",
	"members.source_type, members.source_id, members.user_id":      "members_source_user_key",
	"user_preferences.user_id":                                     "user_preferences_user_key",
	"projects.runners_token_digest":                                UniqueProjectRunnersToken,
	"namespaces.runners_token_digest":                              UniqueGroupRunnersToken,
	"application_settings.runners_token_digest":                    "application_settings_runners_token_key",
	"geo_nodes.access_key":                                         UniqueGeoAccessKey,
	"geo_nodes.is_primary":                                         UniqueGeoNodePrimary,
	"environments.project_id, environments.name":                   UniqueEnvironmentName,
	"environments.project_id, environments.slug":                   UniqueEnvironmentSlug,
}

// mapErr turns driver errors into model kinds: no rows → ErrNotFound, unique
// violations → *UniqueError. Every query result passes through it once.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return model.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505":
			return &UniqueError{Constraint: pe.ConstraintName, err: err}
		case "23503":
			return &Error{msg: "foreign key violation", err: err, kind: model.ErrConflict}
		case "40P01", "40001":
			// A deadlock victim or a serialization failure: the
			// transaction was rolled back whole and the caller may try
			// again, a lost race like any other (409), never a 500.
			return &Error{msg: "transaction rolled back by the database (" + pe.Code + ")", err: err, kind: model.ErrConflict}
		case "22021", "22P05":
			// Text PostgreSQL cannot store (a NUL byte, invalid UTF-8):
			// the caller's input, a 400 on both engines' behalf.
			return model.BadRequest("a parameter holds characters that cannot be stored")
		}
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			msg := se.Error()
			if m := sqliteIndexName.FindStringSubmatch(msg); m != nil {
				return &UniqueError{Constraint: m[1], err: err}
			}
			if i := strings.Index(msg, "UNIQUE constraint failed: "); i >= 0 {
				cols := msg[i+len("UNIQUE constraint failed: "):]
				if j := strings.Index(cols, " ("); j >= 0 {
					cols = cols[:j]
				}
				if name, ok := sqliteColumnUniques[cols]; ok {
					return &UniqueError{Constraint: name, err: err}
				}
				return &UniqueError{Constraint: cols, err: err}
			}
			return &UniqueError{err: err}
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return &Error{msg: "foreign key violation", err: err, kind: model.ErrConflict}
		}
	}
	return err
}

// Error is a classified driver error.
type Error struct {
	msg  string
	err  error
	kind error
}

func (e *Error) Error() string        { return e.msg + ": " + e.err.Error() }
func (e *Error) Unwrap() []error      { return []error{e.err, e.kind} }
func (e *Error) Is(target error) bool { return target == e.kind }
