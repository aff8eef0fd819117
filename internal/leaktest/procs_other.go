//go:build !linux

package leaktest

import "errors"

func adoptOrphans() {}

// GitProcesses needs Linux's /proc; elsewhere it reports that it cannot
// look, and Main checks only goroutines.
func GitProcesses() ([]Process, error) {
	return nil, errors.New("listing processes needs Linux's /proc")
}

// GitProcessesIn needs Linux's /proc as well.
func GitProcessesIn(string) ([]Process, error) {
	return nil, errors.New("listing processes needs Linux's /proc")
}
