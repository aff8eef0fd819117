//go:build !race

package ciconfig

const raceEnabled = false
