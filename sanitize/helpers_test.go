package sanitize_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

func decodeJSON(b []byte) (map[string]any, error) {
	var m map[string]any
	err := json.Unmarshal(b, &m)
	return m, err
}
