package e2e

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"quarry/internal/app"
	cfgpkg "quarry/internal/config"
)

// An SSH address the operator chose that cannot be opened stops the
// start (only the default one, taken by another Quarry on the machine,
// is logged and skipped). SQLite only: no database question.
func TestSSHListen_takenAddressStopsTheStart(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := cfgpkg.Default()
	cfg.DataDir, cfg.Listen, cfg.SSHListen = t.TempDir(), "127.0.0.1:0", taken.Addr().String()
	cfg.PasswordCost, cfg.LogLevel = 4, "error"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	err = a.Serve(ctx, func(net.Addr) { t.Error("the server started with its SSH address taken") })
	if err == nil || !strings.Contains(err.Error(), "ssh listen") {
		t.Fatalf("serve: %v; want an ssh listen error", err)
	}
}
