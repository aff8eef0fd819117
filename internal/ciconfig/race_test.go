//go:build race

package ciconfig

// raceEnabled: the race detector instruments memory, and allocation
// counts grow with it (about tenfold here).
const raceEnabled = true
