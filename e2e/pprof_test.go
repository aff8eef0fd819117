package e2e

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"quarry/internal/app"
	cfgpkg "quarry/internal/config"
)

// --pprof-listen serves net/http/pprof on its own loopback listener, never
// on the API's; a non-loopback address stops the start. (SQLite only: the
// profiles do not touch the database.)
func TestPprofListen(t *testing.T) {
	t.Parallel()
	cfg := cfgpkg.Default()
	cfg.DataDir, cfg.Listen, cfg.PprofListen = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.PasswordCost, cfg.LogLevel = 4, "error"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sctx, stop := context.WithCancel(ctx)
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- a.Serve(sctx, func(addr net.Addr) { ready <- addr }) }()
	var api net.Addr
	select {
	case api = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-ctx.Done():
		t.Fatal("server did not start")
	}
	get := func(url string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	pp := a.PprofAddr()
	if pp == nil || !pp.(*net.TCPAddr).IP.IsLoopback() || pp.String() == api.String() {
		t.Fatalf("pprof address %v (API %v); want a loopback listener of its own", pp, api)
	}
	if code, body := get("http://" + pp.String() + "/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/: %d %.200q; want the index", code, body)
	}
	if code, body := get("http://" + pp.String() + "/debug/pprof/heap?debug=1"); code != 200 || !strings.Contains(body, "heap profile") {
		t.Errorf("GET /debug/pprof/heap: %d %.200q; want the heap profile", code, body)
	}
	if code, _ := get("http://" + api.String() + "/debug/pprof/"); code != 404 {
		t.Errorf("GET /debug/pprof/ on the API listener: %d; want 404", code)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	// Profiles stop with the server. The port, free again, may already
	// be another parallel test's listener: what must not answer there is
	// the profiles' index.
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + pp.String() + "/debug/pprof/"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(string(b), "goroutine") {
			t.Error("the pprof listener outlived the server")
		}
	}

	// An address on every interface is refused at start, even when the
	// configuration was not validated.
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		a.Config.PprofListen = addr
		err := a.Serve(ctx, func(net.Addr) { t.Errorf("%s: the server started", addr) })
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("serve with --pprof-listen %s: %v; want a loopback error", addr, err)
		}
	}
}
