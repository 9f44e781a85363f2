package sanitize_test

import (
	"regexp"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }
