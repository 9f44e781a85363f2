//go:build race

package eventlog_test

// raceEnabled: the race detector slows the sweeps of one goroutine that
// it has nothing to look for in tenfold, so they sample instead.
const raceEnabled = true
