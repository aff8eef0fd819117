package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tokens"
)

// Root account defaults.
const (
	RootUsername = "root"
	RootEmail    = "admin@example.com"
	RootName     = "Administrator"
)

// rootScopes are the scopes of root's first token: everything.
var rootScopes = []model.Scope{model.ScopeAPI, model.ScopeReadAPI, model.ScopeReadUser, model.ScopeReadRepository,
	model.ScopeWriteRepository, model.ScopeSudo, model.ScopeAdminMode}

// bootstrap creates the administrator and its first token on an empty
// database, writes the token (and the password, when generated) to the data
// folder and announces them once.
func (a *App) bootstrap(ctx context.Context) error {
	n, err := a.DB.CountUsers(ctx)
	if err != nil {
		return fmt.Errorf("count users: %w", err)
	}
	if n > 0 {
		return nil
	}
	password := a.Config.RootPassword
	if password == "" {
		password = auth.NewSecret("", 24)
	}
	hash, err := auth.HashPassword(password, a.Config.PasswordCost)
	if err != nil {
		return err
	}
	now := a.DB.Now().UTC()
	root := model.User{Username: RootUsername, Email: RootEmail, Name: RootName, State: model.UserActive,
		Type: model.UserHuman, Admin: true, CanCreateGroup: true, ProjectsLimit: 100000, PasswordHash: hash,
		ThemeID: 1, ColorSchemeID: 1, ConfirmedAt: &now, CreatedAt: now, UpdatedAt: now}
	if err := a.DB.InTx(ctx, func(tx *store.Tx) error { return tx.CreateUser(ctx, &root) }); err != nil {
		if store.IsUnique(err, store.UniqueUsername) {
			return nil // another process bootstrapped at the same time
		}
		return fmt.Errorf("create root: %w", err)
	}
	_, secret, err := a.Tokens.Issue(ctx, root.ID, tokens.CreateInput{Name: "initial root token", Scopes: rootScopes}, a.Config.RootToken, nil)
	if err != nil {
		return fmt.Errorf("create root token: %w", err)
	}
	path := a.Config.InitialRootTokenPath()
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	attrs := []any{"username", RootUsername, "token", secret, "token_file", path}
	var werr error
	if a.Config.RootPassword == "" {
		// A generated password is kept beside the token; a preset one is
		// known to whoever set it and never written to disk.
		attrs = append(attrs, "password", password)
		ppath := a.Config.InitialRootPasswordPath()
		switch err := writeNewFile(ppath, password+"\n"); {
		case err == nil:
			attrs = append(attrs, "password_file", ppath)
		case errors.Is(err, fs.ErrExist):
			a.log.Warn("first start: not replacing an existing password file; the new password is only in this log", "path", ppath)
		default:
			werr = fmt.Errorf("write %s: %w", ppath, err)
		}
	}
	// Announced even when the password file failed: the log is then the
	// only copy of the password.
	a.log.Warn("first start: created the administrator; its secrets are shown once and kept in the files named", attrs...)
	return werr
}

// writeNewFile creates path, readable by its owner only, holding content;
// it never replaces an existing file (fs.ErrExist).
func writeNewFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
