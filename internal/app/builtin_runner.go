package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"quarry/internal/auth"
	"quarry/internal/buildinfo"
	"quarry/internal/model"
	"quarry/internal/runner"
	"quarry/internal/runners"
	"quarry/internal/store"
)

// The built-in runner (quarry serve --with-runner N): an instance runner
// that is Quarry's own runner client, running inside the server process
// and speaking the public protocol to it over HTTP, for a laptop with
// nothing else installed. Its registration is kept in
// <data-dir>/builtin-runner.json (0600, it holds the runner's token);
// it is made on the first start that asks for it.

// builtinRunnerConfig returns the built-in runner's configuration,
// registering it first when the data folder has none (or its runner was
// deleted).
func (a *App) builtinRunnerConfig(ctx context.Context, url string) (runner.Config, error) {
	path := filepath.Join(a.Config.DataDir, "builtin-runner.json")
	cfg, err := runner.LoadConfig(path)
	if err == nil {
		if _, aerr := a.Runners.Authenticate(ctx, cfg.Token); aerr == nil {
			cfg.URL = url
			return cfg, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return cfg, err
	}
	var root model.User
	if err := a.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		root, err = tx.UserByUsername(ctx, "root")
		return err
	}); err != nil {
		return cfg, fmt.Errorf("built-in runner: the administrator: %w", err)
	}
	r, token, err := a.Runners.Create(ctx, auth.Actor{User: &root}, runners.CreateInput{RunnerType: model.RunnerInstance,
		RegisterInput: runners.RegisterInput{Description: "quarry built-in runner"}})
	if err != nil {
		return cfg, fmt.Errorf("built-in runner: %w", err)
	}
	cfg = runner.Config{URL: url, Token: token, ID: r.ID, SystemID: runner.NewSystemID(), Description: r.Description,
		BuildsDir: filepath.Join(a.Config.DataDir, "runner-builds")}
	return cfg, runner.SaveConfig(path, cfg)
}

// runBuiltinRunner runs the built-in runner with n jobs at once until ctx
// ends.
func (a *App) runBuiltinRunner(ctx context.Context, url string, n int) error {
	cfg, err := a.builtinRunnerConfig(ctx, url)
	if err != nil {
		return err
	}
	cfg.Concurrent, cfg.Version, cfg.Revision = n, buildinfo.Version, buildinfo.Revision()
	return runner.Run(ctx, cfg, a.log.With("component", "builtin-runner"))
}
