package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"quarry/internal/buildinfo"
	"quarry/internal/runner"
)

const runnerUsage = `Usage: quarry runner <command> [flags]

Commands:
  register     --url URL --token TOKEN [--config FILE] [--description D]
               [--tag-list a,b] [--run-untagged] [--locked] [--builds-dir DIR]
  run          [--config FILE] [--concurrent N] [--builds-dir DIR]
  unregister   [--config FILE]

The runner is a client of the GitLab runner protocol (shell executor, bash);
it works against Quarry or GitLab. Its configuration, with its secret token,
is the JSON file --config (default quarry-runner.json, mode 0600).
"quarry runner <command> --help" lists a command's flags.
`

func runnerCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, runnerUsage)
		return nil
	}
	switch args[0] {
	case "register":
		return runnerRegister(args[1:], stdout, stderr)
	case "run":
		return runnerRun(args[1:], stderr)
	case "unregister":
		return runnerUnregister(args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown runner command %q\n%s", args[0], runnerUsage)
}

func runnerFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("runner "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: quarry runner %s [flags]\n\n", name)
		fs.PrintDefaults()
	}
	config := fs.String("config", runner.DefaultConfigFile, "the runner's configuration file (JSON, holds its token)")
	return fs, config
}

func runnerRegister(args []string, stdout, stderr io.Writer) error {
	fs, config := runnerFlags("register", stderr)
	var o runner.RegisterOptions
	var tags string
	fs.StringVar(&o.URL, "url", "", "the server's URL, e.g. http://127.0.0.1:8080 (required)")
	fs.StringVar(&o.Token, "token", "", "a registration token, or a runner authentication token glrt-… (required)")
	fs.StringVar(&o.Description, "description", hostname(), "the runner's description")
	fs.StringVar(&tags, "tag-list", "", "comma-separated tags")
	fs.BoolVar(&o.RunUntagged, "run-untagged", false, "also take untagged jobs (default: true when --tag-list is empty)")
	fs.BoolVar(&o.Locked, "locked", false, "lock the runner to its current projects")
	fs.StringVar(&o.BuildsDir, "builds-dir", "builds", "folder of the jobs' working folders")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("runner register: unexpected argument %q", fs.Arg(0))
	}
	if o.URL == "" || o.Token == "" {
		return errors.New("runner register: --url and --token are required")
	}
	for _, t := range strings.Split(tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			o.Tags = append(o.Tags, t)
		}
	}
	if !flagSet(fs, "run-untagged") && len(o.Tags) == 0 {
		o.RunUntagged = true // a runner without tags takes untagged jobs
	}
	// The machine keeps its system id across registrations.
	if old, err := runner.LoadConfig(*config); err == nil {
		o.SystemID = old.SystemID
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	o.Version, o.Revision = buildinfo.Version, buildinfo.Revision()
	cfg, err := runner.Register(context.Background(), o)
	if err != nil {
		return err
	}
	if err := runner.SaveConfig(*config, cfg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Runner registered successfully (id %d). Configuration saved to %s.\n", cfg.ID, *config)
	return nil
}

func runnerRun(args []string, stderr io.Writer) error {
	fs, config := runnerFlags("run", stderr)
	concurrent := fs.Int("concurrent", 0, "how many jobs run at once (default: the config's, else 1)")
	buildsDir := fs.String("builds-dir", "", "folder of the jobs' working folders (default: the config's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("runner run: unexpected argument %q", fs.Arg(0))
	}
	cfg, err := runner.LoadConfig(*config)
	if err != nil {
		return err
	}
	if *concurrent > 0 {
		cfg.Concurrent = *concurrent
	}
	if *buildsDir != "" {
		cfg.BuildsDir = *buildsDir
	}
	cfg.Version, cfg.Revision = buildinfo.Version, buildinfo.Revision()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runner.Run(ctx, cfg, slog.New(slog.NewTextHandler(stderr, nil)))
}

func runnerUnregister(args []string, stdout, stderr io.Writer) error {
	fs, config := runnerFlags("unregister", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("runner unregister: unexpected argument %q", fs.Arg(0))
	}
	cfg, err := runner.LoadConfig(*config)
	if err != nil {
		return err
	}
	if err := runner.Unregister(context.Background(), cfg); err != nil {
		return err
	}
	// The token is dead; keep the machine's system id for a later
	// registration.
	cfg.Token, cfg.ID, cfg.TokenExpiresAt = "", 0, ""
	if err := runner.SaveConfig(*config, cfg); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Runner unregistered.")
	return nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "quarry-runner"
	}
	return h
}
