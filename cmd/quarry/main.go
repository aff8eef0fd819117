// Command quarry is the Quarry server: source hosting and CI/CD that speaks
// GitLab's /api/v4.
//
//	quarry [serve] [flags]   run the server (the default)
//	quarry migrate [flags]   apply database migrations and exit
//	quarry admin …           create users and tokens from the shell
//	quarry version           print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"quarry/internal/app"
	"quarry/internal/buildinfo"
	"quarry/internal/config"
	"quarry/internal/logbuf"
	"quarry/internal/memtrim"
)

func main() {
	// No heap profile is recorded unless --pprof-listen serves one
	// (app.startPprof turns sampling on): at Go's default rate every
	// sampled allocation site keeps a bucket for the process's lifetime,
	// 1–2 MiB of a long-running server that nobody reads.
	runtime.MemProfileRate = 0
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "quarry:", err)
			os.Exit(1)
		}
	}
}

const usage = `Usage: quarry <command> [flags]

Commands:
  serve     run the server (default)
  migrate   apply database migrations and exit
  admin     create users and personal access tokens (see quarry admin --help)
  runner    register and run a CI runner (see quarry runner --help)
  version   print the version

Run "quarry <command> --help" for a command's flags.
`

func run(args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, usage)
		return nil
	}
	switch cmd {
	case "serve":
		return serve(args, stderr)
	case "migrate":
		return migrate(args, stdout, stderr)
	case "admin":
		return admin(args, stdout, stderr)
	case "runner":
		return runnerCmd(args, stdout, stderr)
	case "version":
		fs := flag.NewFlagSet("version", flag.ContinueOnError)
		fs.SetOutput(stderr)
		if err := fs.Parse(args); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "quarry %s (revision %s, GitLab API %s)\n", buildinfo.Version, buildinfo.Revision(), buildinfo.APIVersion)
		return nil
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

// loadConfig parses the flags of a command: --config, the settings of
// groups and the command's own flags, which extra registers. Settings of
// other groups keep their defaults; --help lists only what the command
// reads.
func loadConfig(name string, args []string, stderr io.Writer, groups []config.Group, extra func(*flag.FlagSet)) (config.Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: quarry %s [flags]\n\n"+
			"A flag marked (env QUARRY_X) can also be set by that environment variable\n"+
			"or by the key x of the --config file (data_dir for --data-dir); the flag\n"+
			"wins over the environment, the environment over the file.\n\n", name)
		fs.PrintDefaults()
	}
	flags := config.Bind(fs, groups...)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	return flags.Load(config.Getenv)
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger { return slog.New(logHandler(cfg, w)) }

func logHandler(cfg config.Config, w io.Writer) slog.Handler {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// accessLogInterval is how long the server's access log lines may wait
// in memory to be written together (logbuf): a line a request would
// otherwise cost a system call each. Every other line, and any warning
// or error, is written at once with what waited before it.
const accessLogInterval = 100 * time.Millisecond

func serve(args []string, stderr io.Writer) error {
	cfg, err := loadConfig("serve", args, stderr, config.AllGroups, nil)
	if err != nil {
		return err
	}
	lw := logbuf.New(stderr, accessLogInterval)
	defer lw.Close()
	log := slog.New(logbuf.NewHandler(logHandler(cfg, lw), lw, "request"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Serve(ctx, func(net.Addr) {
		// What only the start used of the executable is given back
		// (memtrim: 25–30 MiB of a server's resident memory otherwise).
		if n, err := memtrim.Executable(); err != nil {
			log.Warn("executable's start pages kept", "err", err)
		} else {
			log.Debug("executable's start pages given back", "mapped_bytes", n)
		}
	})
}

func migrate(args []string, stdout, stderr io.Writer) error {
	// migrate prints its result and logs nothing: it reads where the data
	// lives, no more.
	cfg, err := loadConfig("migrate", args, stderr, []config.Group{config.Storage}, nil)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return err
	}
	db, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "applied %d migrations; schema version %d (%s)\n", n, v, db.Dialect)
	return nil
}
