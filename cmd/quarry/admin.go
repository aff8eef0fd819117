package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"quarry/internal/app"
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/tokens"
	"quarry/internal/users"
)

const adminUsage = `Usage: quarry admin <command> [flags]

Commands:
  create-user    --username U --email E --name N [--password P] [--admin]
  create-token   --user U --name N [--scopes api,read_user] [--expires-at YYYY-MM-DD]

Both take the storage flags of "quarry serve" (--data-dir, --database-url, …).
`

func admin(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, adminUsage)
		return nil
	}
	switch args[0] {
	case "create-user":
		return createUser(args[1:], stdout, stderr)
	case "create-token":
		return createToken(args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown admin command %q\n%s", args[0], adminUsage)
}

// openApp starts the application without listening, for scripting.
func openApp(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (*app.App, error) {
	cfg, _, err := loadConfig(name, args, stderr, extra)
	if err != nil {
		return nil, err
	}
	cfg.LogLevel = "warn"
	return app.New(context.Background(), cfg, newLogger(cfg, stderr))
}

// rootActor is the administrator the admin commands act as.
func rootActor(ctx context.Context, a *app.App) (auth.Actor, error) {
	u, err := a.DB.UserByUsername(ctx, app.RootUsername)
	if err != nil {
		return auth.Anonymous, fmt.Errorf("find %s: %w", app.RootUsername, err)
	}
	u.Admin = true
	return auth.Actor{User: &u}, nil
}

func createUser(args []string, stdout, stderr io.Writer) error {
	var username, email, name, password string
	var isAdmin bool
	a, err := openApp("admin create-user", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&username, "username", "", "username (required)")
		fs.StringVar(&email, "email", "", "e-mail (required)")
		fs.StringVar(&name, "name", "", "full name (required)")
		fs.StringVar(&password, "password", "", "password (default: random)")
		fs.BoolVar(&isAdmin, "admin", false, "make the user an administrator")
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if username == "" || email == "" || name == "" {
		return errors.New("--username, --email and --name are required")
	}
	ctx := context.Background()
	actor, err := rootActor(ctx, a)
	if err != nil {
		return err
	}
	in := users.CreateInput{SkipConfirmation: true, ForceRandomPassword: password == ""}
	in.Username, in.Email, in.Name, in.Admin = &username, &email, &name, &isAdmin
	if password != "" {
		in.Password = &password
	}
	u, err := a.Users.Create(ctx, actor, in)
	if err != nil {
		return describe(err)
	}
	fmt.Fprintf(stdout, "created user %s (id %d)\n", u.Username, u.ID)
	return nil
}

func createToken(args []string, stdout, stderr io.Writer) error {
	var user, name, scopes, expires string
	a, err := openApp("admin create-token", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&user, "user", "", "username or id of the token's owner (required)")
		fs.StringVar(&name, "name", "", "token name (required)")
		fs.StringVar(&scopes, "scopes", "api", "comma-separated scopes")
		fs.StringVar(&expires, "expires-at", "", "expiry date YYYY-MM-DD (default: in a year)")
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if user == "" || name == "" {
		return errors.New("--user and --name are required")
	}
	ctx := context.Background()
	actor, err := rootActor(ctx, a)
	if err != nil {
		return err
	}
	owner, err := a.Users.ByIDOrUsername(ctx, actor, user)
	if err != nil {
		return describe(err)
	}
	in := tokens.CreateInput{Name: name, ExpiresAt: expires}
	for _, s := range strings.Split(scopes, ",") {
		if s = strings.TrimSpace(s); !model.ValidScope(s) {
			return fmt.Errorf("unknown scope %q", s)
		}
		in.Scopes = append(in.Scopes, model.Scope(s))
	}
	_, secret, err := a.Tokens.Create(ctx, actor, owner.ID, in)
	if err != nil {
		return describe(err)
	}
	fmt.Fprintln(stdout, secret)
	return nil
}

// describe makes a service error readable on a terminal.
func describe(err error) error {
	var e *model.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		return errors.New(e.Fields.String())
	}
	return err
}
