//go:build !linux

package memtrim

// Executable does nothing where the pages of the executable cannot be
// given back: it returns 0.
func Executable() (int64, error) { return 0, nil }
