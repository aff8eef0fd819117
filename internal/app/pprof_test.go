package app

import (
	"io"
	"log/slog"
	"runtime"
	"testing"
)

// The command starts with heap profiling off (cmd/quarry); serving the
// profiles turns it on at Go's default rate, and leaves a rate someone
// chose (a test's -memprofilerate) as it was.
func TestStartPprof_memProfileRate(t *testing.T) {
	saved := runtime.MemProfileRate
	defer func() { runtime.MemProfileRate = saved }()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct{ before, want int }{
		{0, memProfileRate},
		{4096, 4096},
	} {
		runtime.MemProfileRate = tc.before
		s, err := startPprof("127.0.0.1:0", log)
		if err != nil {
			t.Fatal(err)
		}
		got := runtime.MemProfileRate
		s.close()
		if got != tc.want {
			t.Errorf("rate %d before serving profiles: %d after; want %d", tc.before, got, tc.want)
		}
	}
}
