package storetest

import (
	"fmt"
	"os"
	"testing"
)

// TestMain drops the databases NewPostgresDatabase made, and their
// template, once the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := DropPostgresDatabases(); err != nil {
		fmt.Fprintf(os.Stderr, "drop the tests' PostgreSQL databases: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
