package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/tokens"
	"quarry/internal/users"
)

// rootActor is the administrator the command-line admin tools act as.
func (a *App) rootActor(ctx context.Context) (auth.Actor, error) {
	u, err := a.DB.UserByUsername(ctx, RootUsername)
	if err != nil {
		return auth.Anonymous, fmt.Errorf("find %s: %w", RootUsername, err)
	}
	u.Admin = true
	return auth.Actor{User: &u}, nil
}

// NewUser describes a user created from the command line.
type NewUser struct {
	Username, Email, Name, Password string
	Admin                           bool
}

// CreateUser makes a confirmed user with the rules of the API; an empty
// password gives a random one.
func (a *App) CreateUser(ctx context.Context, nu NewUser) (model.User, error) {
	actor, err := a.rootActor(ctx)
	if err != nil {
		return model.User{}, err
	}
	in := users.CreateInput{SkipConfirmation: true, ForceRandomPassword: nu.Password == ""}
	in.Username, in.Email, in.Name, in.Admin = &nu.Username, &nu.Email, &nu.Name, &nu.Admin
	if nu.Password != "" {
		in.Password = &nu.Password
	}
	return a.Users.Create(ctx, actor, in)
}

// CreateToken issues a personal access token for the user named by ref (id
// or username) and returns its secret.
func (a *App) CreateToken(ctx context.Context, ref, name, scopes, expiresAt string) (string, error) {
	actor, err := a.rootActor(ctx)
	if err != nil {
		return "", err
	}
	owner, err := a.Users.ByIDOrUsername(ctx, actor, ref)
	if err != nil {
		return "", err
	}
	in := tokens.CreateInput{Name: name, ExpiresAt: expiresAt}
	for _, s := range strings.Split(scopes, ",") {
		if s = strings.TrimSpace(s); !model.ValidScope(s) {
			return "", fmt.Errorf("unknown scope %q", s)
		}
		in.Scopes = append(in.Scopes, model.Scope(s))
	}
	_, secret, err := a.Tokens.Create(ctx, actor, owner.ID, in)
	return secret, err
}

// Describe makes a service error readable on a terminal.
func Describe(err error) error {
	var e *model.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		return fmt.Errorf("%s", e.Fields.String())
	}
	return err
}
