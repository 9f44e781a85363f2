//go:build race

package toolloop_test

// raceEnabled says the tests run under the race detector, whose sync.Pool
// drops a share of what is put back at random: allocation counts are
// noise there.
const raceEnabled = true
