package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"quarry/internal/app"
	"quarry/internal/config"
)

const adminUsage = `Usage: quarry admin <command> [flags]

Commands:
  create-user          --username U --email E --name N [--password P] [--admin]
  create-token         --user U --name N [--scopes api,read_user] [--expires-at YYYY-MM-DD]
  rotate-secrets-key   add a fresh current key to the secrets key file and
                       seal every secret in the database with it
  rotate-oidc-key      make a new key to sign CI ID tokens (id_tokens:) with;
                       the key it replaces stays published until the next

All take the storage flags of "quarry serve" (--data-dir, --database-url)
and --secrets-key-file; create-user and create-token also take its account
flags (--token-prefix, --password-cost, and --root-password and --root-token
for a first start). "quarry admin <command> --help" lists them.
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
	case "rotate-secrets-key":
		return rotateSecretsKey(args[1:], stdout, stderr)
	case "rotate-oidc-key":
		return rotateOIDCKey(args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown admin command %q\n%s", args[0], adminUsage)
}

// adminGroups are the settings the admin commands read: where the data
// lives, and how users and tokens are made (also root's, when the command
// is the first start of an empty database).
var adminGroups = []config.Group{config.Storage, config.Secrets, config.Accounts}

// openApp starts the application without listening and without background
// workers, for scripting; it logs only warnings (the first start's).
func openApp(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (*app.App, error) {
	cfg, err := loadConfig(name, args, stderr, adminGroups, extra)
	if err != nil {
		return nil, err
	}
	cfg.LogLevel = "warn"
	cfg.TaskWorkers = 0 // tasks enqueued here run in the server
	return app.New(context.Background(), cfg, newLogger(cfg, stderr))
}

func createUser(args []string, stdout, stderr io.Writer) error {
	var nu app.NewUser
	a, err := openApp("admin create-user", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&nu.Username, "username", "", "username (required)")
		fs.StringVar(&nu.Email, "email", "", "e-mail (required)")
		fs.StringVar(&nu.Name, "name", "", "full name (required)")
		fs.StringVar(&nu.Password, "password", "", "password (default: random)")
		fs.BoolVar(&nu.Admin, "admin", false, "make the user an administrator")
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if nu.Username == "" || nu.Email == "" || nu.Name == "" {
		return errors.New("--username, --email and --name are required")
	}
	u, err := a.CreateUser(context.Background(), nu)
	if err != nil {
		return app.Describe(err)
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
	secret, err := a.CreateToken(context.Background(), user, name, scopes, expires)
	if err != nil {
		return app.Describe(err)
	}
	fmt.Fprintln(stdout, secret)
	return nil
}

// rotateSecretsKey adds a key to the secrets key file and seals every
// secret with it; the older keys stay in the file. Servers sharing the
// file read it again by themselves; a server with a copy of its own needs
// the new file.
func rotateSecretsKey(args []string, stdout, stderr io.Writer) error {
	cfg, err := loadConfig("admin rotate-secrets-key", args, stderr, []config.Group{config.Storage, config.Secrets}, nil)
	if err != nil {
		return err
	}
	cfg.LogLevel = "warn"
	old, next, err := app.RotateSecretsKey(context.Background(), cfg, newLogger(cfg, stderr))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "secrets key rotated: %s is current (was %s); %d values sealed again, %d sealed from plain text\n",
		next.KeyID, old.KeyID, next.Resealed, old.Plain+next.Plain)
	fmt.Fprintf(stdout, "the file %s keeps the older keys; copy it to every process sharing the database\n", cfg.SecretsKeyPath())
	return nil
}

// rotateOIDCKey makes a new signing key for CI ID tokens. The key it
// replaces stays in the JWKS (GET /oauth/discovery/keys), so tokens of
// jobs running now still verify; the rotation after next drops it, so
// rotate no more often than the longest job timeout.
func rotateOIDCKey(args []string, stdout, stderr io.Writer) error {
	a, err := openApp("admin rotate-oidc-key", args, stderr, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	kid, err := a.OIDC.Rotate(context.Background())
	if err != nil {
		return app.Describe(err)
	}
	fmt.Fprintf(stdout, "oidc signing key rotated: %s signs ID tokens; the previous key stays published until the next rotation\n", kid)
	return nil
}
