package main

import (
	"testing"

	"quarry/internal/leaktest"
)

// TestMain fails the package when its tests leave goroutines or git
// processes behind (STYLE.md rule 14). The tests start quarry binaries;
// a git process of a binary that was killed is still counted, because
// leaktest adopts orphaned descendants.
func TestMain(m *testing.M) { leaktest.Main(m) }
