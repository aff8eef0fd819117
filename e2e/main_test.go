package e2e

import (
	"testing"

	"quarry/internal/leaktest"
)

// TestMain fails the suite when its tests leave goroutines or git processes
// behind (STYLE.md rule 14): every server, client and git process a test
// starts must be stopped by the time the tests end.
// Servers benchmarks keep for the whole run stop before the check.
func TestMain(m *testing.M) { leaktest.Main(m, leaktest.AfterTests(stopBenchServers)) }
