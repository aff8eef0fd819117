package e2e

import (
	"os"
	"testing"

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
	if os.Getenv(ciChildDB) != "" {
		os.Exit(ciChild())
	}
	if os.Getenv(moveChildDir) != "" {
		os.Exit(moveChild())
	}
	leaktest.Main(m, leaktest.AfterTests(stopBenchServers))
}
