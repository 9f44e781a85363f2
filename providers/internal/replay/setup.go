package replay

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolloop/toolloop/providers"
)

// Offline returns an HTTP client that sends nothing, and a count of the
// requests it was asked to send (and failed), for tests of what a
// constructor does before any request.
func Offline() (*http.Client, *atomic.Int32) {
	var n atomic.Int32
	return &http.Client{Transport: roundTrip(func(*http.Request) (*http.Response, error) {
		n.Add(1)
		return nil, errors.New("the test sends no request")
	})}, &n
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Unsetenv unsets the variables for the rest of the test, and sets env;
// the environment is restored when the test ends.
func Unsetenv(t *testing.T, vars []string, env map[string]string) {
	t.Helper()
	for _, v := range vars {
		t.Setenv(v, "") // restored when the test ends
		if err := os.Unsetenv(v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// MissingKey fails t unless err is a constructor's error for a missing
// key: it matches providers.ErrConfig and providers.ErrAuth, and names
// Config.APIKey and each of the variables.
func MissingKey(t testing.TB, err error, vars ...string) {
	t.Helper()
	switch {
	case err == nil:
		t.Error("no error for a missing key")
		return
	case !errors.Is(err, providers.ErrConfig) || !errors.Is(err, providers.ErrAuth):
		t.Errorf("a missing key must match providers.ErrConfig and providers.ErrAuth: %v", err)
	}
	for _, s := range append([]string{"Config.APIKey"}, vars...) {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the error does not name %s: %v", s, err)
		}
	}
}
