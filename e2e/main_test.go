package e2e

import (
	"os"
	"testing"

	"quarry/internal/git/packcache"
	"quarry/internal/leaktest"
)

// TestMain fails the suite when its tests leave goroutines or git processes
// behind (STYLE.md rule 14): every server, client and git process a test
// starts must be stopped by the time the tests end.
// Servers benchmarks keep for the whole run stop before the check.
// With ciChildDB set, the binary is the second Quarry process of
// TestPipelines_twoProcessesSharePostgres instead; with moveChildDir
// set, the server TestStorageMoves_killedMidCopy kills.
func TestMain(m *testing.M) {
	// git runs the test binary in place of pack-objects in the servers
	// the pack cache tests start (withPackCache).
	if len(os.Args) > 1 && os.Args[1] == packcache.HookCommand {
		os.Exit(packcache.Hook(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(ciChildDB) != "" {
		os.Exit(ciChild())
	}
	if os.Getenv(moveChildDir) != "" {
		os.Exit(moveChild())
	}
	leaktest.Main(m, leaktest.AfterTests(stopBenchServers))
}
