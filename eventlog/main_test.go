package eventlog_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild())
	}
	goleak.VerifyTestMain(m)
}

// echoArgs is the input of the test tools.
type echoArgs struct {
	Text string `json:"text"`
}

// counter counts how often each tool ran.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[string]int)
	}
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

var errBoom = errors.New("boom")

// registry returns tools echo (succeeds), fail (fails) and rm (deletes
// nothing, destructive), counting their runs in c.
func registry(c *counter) *toolloop.ToolRegistry {
	reg := new(toolloop.ToolRegistry)
	echo := toolloop.NewTool("echo", "Echoes its text.", func(_ context.Context, in echoArgs) (any, error) {
		c.inc("echo")
		return "echo: " + in.Text, nil
	})
	fail := toolloop.NewTool("fail", "Always fails.", func(_ context.Context, in echoArgs) (any, error) {
		c.inc("fail")
		return nil, errBoom
	})
	rm := toolloop.NewTool("rm", "Removes a file.", func(_ context.Context, in echoArgs) (any, error) {
		c.inc("rm")
		return "removed " + in.Text, nil
	})
	rm.Annotations.Destructive = true
	reg.MustRegister(echo, fail, rm)
	return reg
}
