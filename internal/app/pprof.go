package app

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"

	"quarry/internal/config"
)

// pprofServer serves net/http/pprof on its own loopback listener
// (--pprof-listen): the profiles are never reachable through the API's
// listener, and the address is checked again here so that no caller can
// expose them on another interface.
type pprofServer struct {
	srv *http.Server
	ln  net.Listener
}

func startPprof(addr string, log *slog.Logger) (*pprofServer, error) {
	if err := config.LoopbackAddr(addr); err != nil {
		return nil, fmt.Errorf("pprof listen: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof listen: %w", err)
	}
	// A name resolving to a non-loopback address would pass the check on
	// the name: check where the listener is.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("pprof listen: %s is not a loopback address", ln.Addr())
	}
	// The command starts with heap profiling off (cmd/quarry): the
	// profiles served here sample allocations from now on, at Go's
	// default rate.
	if runtime.MemProfileRate == 0 {
		runtime.MemProfileRate = memProfileRate
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s := &pprofServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}
	go func() { _ = s.srv.Serve(ln) }()
	log.Info("pprof serving", "addr", ln.Addr().String())
	return s, nil
}

// memProfileRate is Go's default heap profiling rate (one sample every
// 512 KiB allocated), the rate --pprof-listen serves profiles at.
const memProfileRate = 512 * 1024

// close stops the listener and the profiles being served.
func (s *pprofServer) close() {
	if s != nil {
		_ = s.srv.Close()
	}
}
