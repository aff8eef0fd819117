package e2e

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"

	"quarry/internal/leaktest"
	"quarry/internal/storetest"
)

// TestMain fails the suite when its tests leave goroutines or git processes
// behind (STYLE.md rule 14): every server, client and git process a test
// starts must be stopped by the time the tests end.
// Servers benchmarks keep for the whole run stop before the check, and
// the tests' PostgreSQL databases and the migrated template they were
// copied from are dropped.
// With ciChildDB set, the binary is the second Quarry process of
// TestPipelines_twoProcessesSharePostgres instead; with moveChildDir
// set, the server TestStorageMoves_killedMidCopy kills.
//
// The package's tests wait much of their time on what is not this
// process's CPU (git processes, PostgreSQL's commits, runners' long
// polls), so unless -parallel is given they run twice as many at once
// as there are cores.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	if os.Getenv(ciChildDB) != "" {
		os.Exit(ciChild())
	}
	if os.Getenv(moveChildDir) != "" {
		os.Exit(moveChild())
	}
	leaktest.Main(m, leaktest.AfterTests(stopBenchServers), leaktest.AfterTests(dropDatabases))
}

// dropDatabases drops the PostgreSQL databases the tests were given
// (storetest.NewPostgresDatabase) and their template; what is left
// behind is dropped by a later run (storetest's sweep).
func dropDatabases() {
	if err := storetest.DropPostgresDatabases(); err != nil {
		fmt.Fprintf(os.Stderr, "drop the tests' PostgreSQL databases: %v\n", err)
	}
}
