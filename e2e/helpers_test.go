package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	cfgpkg "quarry/internal/config"
	"quarry/internal/store"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

type config = cfgpkg.Config

type storeTx = store.Tx

func osStat(p string) (os.FileInfo, error) { return os.Stat(p) }

func sleep() { time.Sleep(20 * time.Millisecond) }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
