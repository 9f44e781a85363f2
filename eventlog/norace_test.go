//go:build !race

package eventlog_test

const raceEnabled = false
