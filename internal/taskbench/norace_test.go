//go:build !race

package taskbench

// raceEnabled says the tests run under the race detector.
const raceEnabled = false
