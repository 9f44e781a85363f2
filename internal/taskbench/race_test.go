//go:build race

package taskbench

// raceEnabled says the tests run under the race detector, which makes
// the 300-turn sessions too slow for a test run.
const raceEnabled = true
