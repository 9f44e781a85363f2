package view

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests. The browser tests
// need no exception: they cancel every chromedp context and wait for
// Chromium to exit (see browser).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
