//go:build !race

package toolloop_test

const raceEnabled = false
