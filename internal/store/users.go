package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"quarry/internal/model"
)

const userColumns = `u.id, u.username, u.email, u.unconfirmed_email, u.name, u.state, u.user_type,
	u.is_admin, u.external, u.can_create_group, u.projects_limit, u.password_hash, u.password_expires_at,
	u.bio, u.location, u.public_email, u.commit_email, u.skype, u.linkedin, u.twitter, u.discord,
	u.website_url, u.organization, u.job_title, u.pronouns, u.note, u.theme_id, u.color_scheme_id,
	u.private_profile, u.two_factor_enabled, u.avatar, u.confirmed_at, u.last_sign_in_at,
	u.current_sign_in_at, u.last_sign_in_ip, u.current_sign_in_ip, u.sign_in_count, u.last_activity_on,
	u.shared_runners_minutes_limit, u.extra_shared_runners_minutes_limit, u.namespace_id,
	u.created_by_id, u.created_at, u.updated_at, u.version, u.entity_version`

// userDest returns scan destinations for userColumns.
func userDest(u *model.User) []any {
	return []any{&u.ID, &u.Username, &u.Email, nullString{&u.UnconfirmedEmail}, &u.Name, &u.State, &u.Type,
		&u.Admin, &u.External, &u.CanCreateGroup, &u.ProjectsLimit, &u.PasswordHash, nullTSScan{&u.PasswordExpiresAt},
		&u.Bio, &u.Location, nullString{&u.PublicEmail}, nullString{&u.CommitEmail}, &u.Skype, &u.Linkedin, &u.Twitter, &u.Discord,
		&u.WebsiteURL, &u.Organization, &u.JobTitle, &u.Pronouns, &u.Note, &u.ThemeID, &u.ColorSchemeID,
		&u.PrivateProfile, &u.TwoFactorEnabled, nullString{&u.Avatar}, nullTSScan{&u.ConfirmedAt}, nullTSScan{&u.LastSignInAt},
		nullTSScan{&u.CurrentSignInAt}, nullString{&u.LastSignInIP}, nullString{&u.CurrentSignInIP}, &u.SignInCount, nullString{&u.LastActivityOn},
		nullInt{&u.SharedRunnersMinutesLimit}, nullInt{&u.ExtraSharedRunnersMinutesLimit}, nullInt64{&u.NamespaceID},
		nullInt64Ptr{&u.CreatedByID}, tsScan{&u.CreatedAt}, tsScan{&u.UpdatedAt}, &u.Version, &u.EntityVersion}
}

func scanUser(r *sql.Rows) (model.User, error) {
	var u model.User
	err := r.Scan(userDest(&u)...)
	return u, err
}

// userValues are the stored values of every column but id, in insert order.
func userValues(u *model.User) []any {
	return []any{u.Username, u.Email, emptyNull(u.UnconfirmedEmail), u.Name, string(u.State), string(u.Type),
		u.Admin, u.External, u.CanCreateGroup, u.ProjectsLimit, u.PasswordHash, nullMicros(u.PasswordExpiresAt),
		u.Bio, u.Location, emptyNull(u.PublicEmail), emptyNull(u.CommitEmail), u.Skype, u.Linkedin, u.Twitter, u.Discord,
		u.WebsiteURL, u.Organization, u.JobTitle, u.Pronouns, u.Note, u.ThemeID, u.ColorSchemeID,
		u.PrivateProfile, u.TwoFactorEnabled, emptyNull(u.Avatar), nullMicros(u.ConfirmedAt), nullMicros(u.LastSignInAt),
		nullMicros(u.CurrentSignInAt), emptyNull(u.LastSignInIP), emptyNull(u.CurrentSignInIP), u.SignInCount, emptyNull(u.LastActivityOn),
		u.SharedRunnersMinutesLimit, u.ExtraSharedRunnersMinutesLimit, zeroNull(u.NamespaceID),
		u.CreatedByID, micros(u.CreatedAt), micros(u.UpdatedAt)}
}

const userWritable = `username, email, unconfirmed_email, name, state, user_type,
	is_admin, external, can_create_group, projects_limit, password_hash, password_expires_at,
	bio, location, public_email, commit_email, skype, linkedin, twitter, discord,
	website_url, organization, job_title, pronouns, note, theme_id, color_scheme_id,
	private_profile, two_factor_enabled, avatar, confirmed_at, last_sign_in_at,
	current_sign_in_at, last_sign_in_ip, current_sign_in_ip, sign_in_count, last_activity_on,
	shared_runners_minutes_limit, extra_shared_runners_minutes_limit, namespace_id,
	created_by_id, created_at, updated_at`

var (
	userInsert = "INSERT INTO users (" + userWritable + ") VALUES (" + placeholders(43) + ")"
	userUpdate = "UPDATE users SET " + assignments(userWritable) + ", version = version + 1 WHERE id = ? AND version = ?"
)

// Unique indexes on users, as services test for them.
const (
	UniqueUsername = "users_username_key"
	UniqueEmail    = "users_email_key"
	UniqueTopPath  = "namespaces_top_path_key"
	UniqueFullPath = "namespaces_full_path_key"
)

// CreateUser inserts u with its personal namespace and preferences, and
// sets u.ID, u.NamespaceID and u.Version.
func (tx *Tx) CreateUser(ctx context.Context, u *model.User) error {
	id, err := tx.insert(ctx, userInsert, userValues(u)...)
	if err != nil {
		return err
	}
	u.ID, u.Version = id, 1
	nsID, err := tx.insert(ctx, `INSERT INTO namespaces (name, path, kind, owner_id, full_path, full_name, visibility, created_at, updated_at)
		VALUES (?, ?, 'user', ?, ?, ?, 'public', ?, ?)`, u.Name, u.Username, id, u.Username, u.Name, micros(u.CreatedAt), micros(u.CreatedAt))
	if err != nil {
		return err
	}
	u.NamespaceID = nsID
	if _, err := tx.exec(ctx, "UPDATE namespaces SET traversal = ? WHERE id = ?", fmt.Sprintf("%d/", nsID), nsID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, "UPDATE users SET namespace_id = ? WHERE id = ?", nsID, id); err != nil {
		return err
	}
	// A user owns their personal namespace.
	if _, err := tx.exec(ctx, "INSERT INTO namespace_authorizations (user_id, namespace_id, access_level) VALUES (?, ?, 50)", id, nsID); err != nil {
		return err
	}
	_, err = tx.exec(ctx, "INSERT INTO user_preferences (user_id) VALUES (?)", id)
	return err
}

// UpdateUser writes u if nobody changed it since it was read (u.Version);
// a lost race is model.ErrConflict. The personal namespace follows a
// changed username.
func (tx *Tx) UpdateUser(ctx context.Context, u *model.User) error {
	n, err := tx.execN(ctx, userUpdate, append(userValues(u), u.ID, u.Version)...)
	if err != nil {
		return err
	}
	if n == 0 {
		return model.Conflict("409 Conflict: Resource lock")
	}
	u.Version++
	tx.authWritten()
	if u.NamespaceID != 0 {
		_, err = tx.exec(ctx, "UPDATE namespaces SET path = ?, full_path = ?, name = ?, full_name = ?, updated_at = ? WHERE id = ? AND kind = 'user'",
			u.Username, u.Username, u.Name, u.Name, micros(u.UpdatedAt), u.NamespaceID)
	}
	return err
}

// DeleteUser removes a user and everything that belongs to it alone.
func (tx *Tx) DeleteUser(ctx context.Context, id int64) error {
	tx.authWritten()
	for _, q := range []string{
		"DELETE FROM members WHERE user_id = ?",
		"DELETE FROM custom_attributes WHERE source_type = 'User' AND source_id = ?",
		"DELETE FROM namespaces WHERE owner_id = ? AND kind = 'user'",
		"DELETE FROM users WHERE id = ?",
	} {
		if _, err := tx.exec(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

// UserByID returns one user or model.ErrNotFound.
func (tx *Tx) UserByID(ctx context.Context, id int64) (model.User, error) {
	var u model.User
	err := tx.row(ctx, userDest(&u), "SELECT "+userColumns+" FROM users u WHERE u.id = ?", id)
	return u, err
}

// UserByUsername finds a user by username, ignoring case.
func (tx *Tx) UserByUsername(ctx context.Context, username string) (model.User, error) {
	var u model.User
	err := tx.row(ctx, userDest(&u), "SELECT "+userColumns+" FROM users u WHERE lower(u.username) = ?", strings.ToLower(username))
	return u, err
}

// byRef looks a resource up by id when ref is one (model.ParseID), else by
// its path or name: how the API's :id names things.
func byRef[T any](ctx context.Context, ref string, byID func(context.Context, int64) (T, error), byName func(context.Context, string) (T, error)) (T, error) {
	if id, ok := model.ParseID(ref); ok {
		return byID(ctx, id)
	}
	return byName(ctx, ref)
}

// UserByRef finds a user by id ("12") or username (any case), as the API's
// :id and :user_id name users.
func (tx *Tx) UserByRef(ctx context.Context, ref string) (model.User, error) {
	return byRef(ctx, ref, tx.UserByID, tx.UserByUsername)
}

// UserByEmail finds a user by primary e-mail, ignoring case.
func (tx *Tx) UserByEmail(ctx context.Context, email string) (model.User, error) {
	var u model.User
	err := tx.row(ctx, userDest(&u), "SELECT "+userColumns+" FROM users u WHERE lower(u.email) = ?", strings.ToLower(email))
	return u, err
}

// EmailTaken reports whether another user than exceptID uses email as
// primary or pending e-mail.
func (tx *Tx) EmailTaken(ctx context.Context, email string, exceptID int64) (bool, error) {
	var n int
	e := strings.ToLower(email)
	err := tx.row(ctx, []any{&n}, `SELECT COUNT(*) FROM users WHERE (lower(email) = ? OR lower(unconfirmed_email) = ?) AND id <> ?`, e, e, exceptID)
	return n > 0, err
}

// UsernameTaken reports whether another user than exceptID has username.
func (tx *Tx) UsernameTaken(ctx context.Context, username string, exceptID int64) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM users WHERE lower(username) = ? AND id <> ?", strings.ToLower(username), exceptID)
	return n > 0, err
}

// TopLevelPathTaken reports whether a top-level namespace other than
// exceptNamespace uses path.
func (tx *Tx) TopLevelPathTaken(ctx context.Context, path string, exceptNamespace int64) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM namespaces WHERE parent_id IS NULL AND lower(path) = ? AND id <> ?", strings.ToLower(path), exceptNamespace)
	return n > 0, err
}

// CountUsers counts every account.
func (tx *Tx) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM users")
	return n, err
}

var userOrderColumns = map[string]string{"id": "u.id", "name": "u.name", "username": "u.username",
	"created_at": "u.created_at", "updated_at": "u.updated_at"}

// userList is the conditions and order of a user list.
func (tx *Tx) userList(f model.UserFilter) (where, order) {
	var w where
	if f.VisibleStatesOnly {
		w.add("u.state NOT IN ('blocked', 'banned', 'ldap_blocked', 'blocked_pending_approval')")
	}
	if f.Username != "" {
		w.add("lower(u.username) = ?", strings.ToLower(f.Username))
	}
	if f.Search != "" {
		pat := likePattern(f.Search)
		email := strings.ToLower(f.Search)
		if f.SearchEmails {
			w.add("("+tx.ilike("u.name")+" OR "+tx.ilike("u.username")+" OR lower(u.email) = ? OR lower(u.public_email) = ?)", pat, pat, email, email)
		} else {
			w.add("("+tx.ilike("u.name")+" OR "+tx.ilike("u.username")+" OR lower(u.public_email) = ?)", pat, pat, email)
		}
	}
	if f.Active {
		// GitLab's active users are active humans and bots, not the
		// instance's internal accounts.
		w.add("u.state = 'active' AND u.user_type NOT IN ('ghost', 'alert_bot', 'support_bot')")
	}
	if f.Blocked {
		w.add("u.state IN ('blocked', 'ldap_blocked')")
	}
	if f.External {
		w.add("u.external = TRUE")
	}
	if f.ExcludeExternal {
		w.add("u.external = FALSE")
	}
	if f.ExcludeInternal {
		w.add("u.user_type NOT IN ('ghost', 'alert_bot', 'support_bot')")
	}
	if f.Admins {
		w.add("u.is_admin = TRUE")
	}
	if f.WithoutProjects {
		w.add("NOT EXISTS (SELECT 1 FROM members m WHERE m.user_id = u.id AND m.source_type = 'Project' AND m.pending = FALSE)")
	}
	switch f.TwoFactor {
	case "enabled":
		w.add("u.two_factor_enabled = TRUE")
	case "disabled":
		w.add("u.two_factor_enabled = FALSE")
	}
	if f.Provider != "" && f.ExternUID != "" {
		w.add("EXISTS (SELECT 1 FROM identities i WHERE i.user_id = u.id AND i.provider = ? AND lower(i.extern_uid) = ?)", f.Provider, strings.ToLower(f.ExternUID))
	}
	if f.SAMLProviderID != nil {
		w.add("EXISTS (SELECT 1 FROM identities i WHERE i.user_id = u.id AND i.saml_provider_id = ?)", *f.SAMLProviderID)
	}
	if f.CreatedBefore != nil {
		w.add("u.created_at <= ?", micros(*f.CreatedBefore))
	}
	if f.CreatedAfter != nil {
		w.add("u.created_at >= ?", micros(*f.CreatedAfter))
	}
	w.customAttrsCond(AttrsUser, "u.id", f.CustomAttributes)
	col := userOrderColumns[f.OrderBy]
	if col == "" {
		col = "u.id"
	}
	return w, order{column: col, desc: f.Desc}
}

// ListUsers returns one page of users matching f.
func (tx *Tx) ListUsers(ctx context.Context, f model.UserFilter, page model.Page) ([]model.User, model.PageInfo, error) {
	w, ord := tx.userList(f)
	spec := listSpec[model.User]{
		columns: userColumns, from: "users u", idCol: "u.id", where: w,
		order: ord, keyNotNull: true,
		scan: scanUser,
		keyOf: func(u model.User) (any, int64) {
			switch f.OrderBy {
			case "name":
				return u.Name, u.ID
			case "username":
				return u.Username, u.ID
			case "created_at":
				return micros(u.CreatedAt), u.ID
			case "updated_at":
				return micros(u.UpdatedAt), u.ID
			}
			return nil, u.ID
		},
	}
	spec.countRow = w.countRow("", "users")
	return list(ctx, tx, spec, page)
}

// UserHead is a user of a list page by its versions: the user's, and its
// creator's (CreatorID 0: none).
type UserHead struct {
	ID, EntityVersion         int64
	CreatedAt                 time.Time
	CreatorID, CreatorVersion int64
	CreatorCreatedAt          time.Time
}

// ListUserHeads is ListUsers by the users' heads: the same conditions and
// order, in one statement with the count of an offset page, no wide row
// read. The caller takes the entities from its copies at the heads'
// versions and reads the misses (UsersByIDs).
func (tx *Tx) ListUserHeads(ctx context.Context, f model.UserFilter, page model.Page) ([]UserHead, model.PageInfo, error) {
	w, ord := tx.userList(f)
	type keyed struct {
		h   UserHead
		key any
	}
	spec := listSpec[keyed]{
		columns: ord.column + `, u.id, u.entity_version, u.created_at,
			COALESCE(cr.id, 0), COALESCE(cr.entity_version, 0), COALESCE(cr.created_at, 0)`,
		from: "users u LEFT JOIN users cr ON cr.id = u.created_by_id", countFrom: "users u", idCol: "u.id",
		where: w, order: ord, keyNotNull: true,
		keyOf: func(k keyed) (any, int64) { return k.key, k.h.ID },
		scanCounted: func(r *sql.Rows, n *int) (keyed, error) {
			var k keyed
			dest := []any{&k.key, &k.h.ID, &k.h.EntityVersion, tsScan{&k.h.CreatedAt},
				&k.h.CreatorID, &k.h.CreatorVersion, tsScan{&k.h.CreatorCreatedAt}}
			if n != nil {
				dest = append(dest, n)
			}
			err := r.Scan(dest...)
			if b, ok := k.key.([]byte); ok {
				k.key = string(b)
			}
			return k, err
		}}
	spec.countRow = w.countRow("", "users")
	ks, info, err := list(ctx, tx, spec, page)
	hs := make([]UserHead, len(ks))
	for i := range ks {
		hs[i] = ks[i].h
	}
	return hs, info, err
}

// IdentitiesOf returns the identities of the given users, by user id.
func (tx *Tx) IdentitiesOf(ctx context.Context, userIDs []int64) (map[int64][]model.Identity, error) {
	out := map[int64][]model.Identity{}
	if len(userIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(userIDs))
	for i, id := range userIDs {
		args[i] = id
	}
	err := tx.each(ctx, "SELECT id, user_id, provider, extern_uid, saml_provider_id FROM identities WHERE user_id IN ("+placeholders(len(args))+") ORDER BY id", args,
		func(r *sql.Rows) error {
			var i model.Identity
			if err := r.Scan(&i.ID, &i.UserID, &i.Provider, &i.ExternUID, nullInt64Ptr{&i.SAMLProviderID}); err != nil {
				return err
			}
			out[i.UserID] = append(out[i.UserID], i)
			return nil
		})
	return out, err
}

// UniqueIdentity is the index that allows one extern_uid per provider.
const UniqueIdentity = "identities_provider_uid_key"

// SetIdentity links the user to provider, replacing an earlier link.
func (tx *Tx) SetIdentity(ctx context.Context, i model.Identity) error {
	if _, err := tx.exec(ctx, "DELETE FROM identities WHERE user_id = ? AND provider = ?", i.UserID, i.Provider); err != nil {
		return err
	}
	_, err := tx.exec(ctx, "INSERT INTO identities (user_id, provider, extern_uid, saml_provider_id, created_at) VALUES (?, ?, ?, ?, ?)",
		i.UserID, i.Provider, i.ExternUID, i.SAMLProviderID, micros(tx.Now()))
	return err
}

// DeleteIdentity removes the user's link to provider; model.ErrNotFound
// when there was none.
func (tx *Tx) DeleteIdentity(ctx context.Context, userID int64, provider string) error {
	n, err := tx.execN(ctx, "DELETE FROM identities WHERE user_id = ? AND provider = ?", userID, provider)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// UserStatus returns the user's status, or model.ErrNotFound.
func (tx *Tx) UserStatus(ctx context.Context, userID int64) (model.UserStatus, error) {
	s := model.UserStatus{UserID: userID}
	err := tx.row(ctx, []any{&s.Emoji, &s.Message, &s.Availability, nullTSScan{&s.ClearStatusAt}},
		"SELECT emoji, message, availability, clear_status_at FROM user_statuses WHERE user_id = ?", userID)
	return s, err
}

// SetUserStatus stores the user's status.
func (tx *Tx) SetUserStatus(ctx context.Context, s model.UserStatus) error {
	if err := tx.ClearUserStatus(ctx, s.UserID); err != nil {
		return err
	}
	_, err := tx.exec(ctx, "INSERT INTO user_statuses (user_id, emoji, message, availability, clear_status_at) VALUES (?, ?, ?, ?, ?)",
		s.UserID, s.Emoji, s.Message, s.Availability, nullMicros(s.ClearStatusAt))
	return err
}

// ClearUserStatus removes the user's status.
func (tx *Tx) ClearUserStatus(ctx context.Context, userID int64) error {
	_, err := tx.exec(ctx, "DELETE FROM user_statuses WHERE user_id = ?", userID)
	return err
}

// UserPreferences returns the user's preferences.
func (tx *Tx) UserPreferences(ctx context.Context, userID int64) (model.UserPreferences, error) {
	p := model.UserPreferences{UserID: userID}
	err := tx.row(ctx, []any{&p.ID, &p.ViewDiffsFileByFile, &p.ShowWhitespaceInDiffs, &p.PassUserIdentitiesToCIJWT},
		"SELECT id, view_diffs_file_by_file, show_whitespace_in_diffs, pass_user_identities_to_ci_jwt FROM user_preferences WHERE user_id = ?", userID)
	return p, err
}

// UpdateUserPreferences writes the user's preferences.
func (tx *Tx) UpdateUserPreferences(ctx context.Context, p model.UserPreferences) error {
	_, err := tx.exec(ctx, "UPDATE user_preferences SET view_diffs_file_by_file = ?, show_whitespace_in_diffs = ?, pass_user_identities_to_ci_jwt = ? WHERE user_id = ?",
		p.ViewDiffsFileByFile, p.ShowWhitespaceInDiffs, p.PassUserIdentitiesToCIJWT, p.UserID)
	return err
}

// SoleOwnedGroups lists the groups where the user is the only owner.
func (tx *Tx) SoleOwnedGroups(ctx context.Context, userID int64) ([]int64, error) {
	var ids []int64
	err := tx.each(ctx, `SELECT m.source_id FROM members m
		WHERE m.user_id = ? AND m.source_type = 'Namespace' AND m.access_level = 50 AND m.pending = FALSE
		AND NOT EXISTS (SELECT 1 FROM members o WHERE o.source_type = 'Namespace' AND o.source_id = m.source_id
			AND o.access_level = 50 AND o.pending = FALSE AND o.user_id <> m.user_id)
		ORDER BY m.source_id`, []any{userID}, func(r *sql.Rows) error {
		var id int64
		err := r.Scan(&id)
		ids = append(ids, id)
		return err
	})
	return ids, err
}

// SetLastActivityAt records the day a user was last active if the row is
// still at entity_version version (a compare-and-set): it returns the
// version the write moved the row to, or 0 when the row had moved or the
// day was recorded already (nothing written).
func (tx *Tx) SetLastActivityAt(ctx context.Context, userID int64, day string, version int64) (int64, error) {
	// Moving entity_version in the statement keeps SQLite's trigger out
	// and gives PostgreSQL's the same result: version + 1.
	n, err := tx.execN(ctx, `UPDATE users SET last_activity_on = ?, entity_version = entity_version + 1
		WHERE id = ? AND entity_version = ? AND (last_activity_on IS NULL OR last_activity_on < ?)`, day, userID, version, day)
	if err != nil || n != 1 {
		return 0, err
	}
	return version + 1, nil
}

// SetLastActivity records the day a user was last active.
func (tx *Tx) SetLastActivity(ctx context.Context, userID int64, day string) error {
	_, err := tx.exec(ctx, "UPDATE users SET last_activity_on = ? WHERE id = ? AND (last_activity_on IS NULL OR last_activity_on < ?)", day, userID, day)
	return err
}

// UsersByIDs loads several users at once, by id.
func (tx *Tx) UsersByIDs(ctx context.Context, ids []int64) (map[int64]model.User, error) {
	out := map[int64]model.User{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	err := tx.each(ctx, "SELECT "+userColumns+" FROM users u WHERE u.id IN ("+placeholders(len(args))+")", args, func(r *sql.Rows) error {
		u, err := scanUser(r)
		out[u.ID] = u
		return err
	})
	return out, err
}

// DeactivateDormantUsers deactivates the active human users last active
// before cutoffDay (YYYY-MM-DD), or never active and created before
// cutoff; it reports how many. A user whose state changed meanwhile is
// left as it is (the state is the guard).
func (tx *Tx) DeactivateDormantUsers(ctx context.Context, cutoffDay string, cutoff time.Time) (int64, error) {
	tx.authWritten()
	return tx.execN(ctx, `UPDATE users SET state = 'deactivated', updated_at = ?
		WHERE state = 'active' AND user_type = 'human'
		AND ((last_activity_on IS NOT NULL AND last_activity_on <> '' AND last_activity_on < ?)
		  OR ((last_activity_on IS NULL OR last_activity_on = '') AND created_at < ?))`,
		micros(tx.Now()), cutoffDay, micros(cutoff))
}
