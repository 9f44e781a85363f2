package toolloop_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

// slowSource takes as long as its gate says to list its tools after a
// change, like an MCP server restarting.
type slowSource struct {
	gate    chan struct{}
	mu      sync.Mutex
	changed func()
	calls   int
}

func (s *slowSource) Name() string              { return "slow" }
func (s *slowSource) Kind() toolloop.SourceKind { return toolloop.SourceMCP }
func (s *slowSource) Notify(changed func())     { s.mu.Lock(); s.changed = changed; s.mu.Unlock() }
func (s *slowSource) change()                   { s.mu.Lock(); s.changed(); s.mu.Unlock() }
func (s *slowSource) Tools(ctx context.Context) ([]toolloop.Tool, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if n > 1 {
		<-s.gate
	}
	return []toolloop.Tool{toolloop.NewTool("remote", "Remote.", func(context.Context, struct{}) (any, error) { return nil, nil })}, nil
}

// A source that is slow to refresh does not block lookups of other tools.
func TestSlowRefreshDoesNotBlockLookups(t *testing.T) {
	ctx := context.Background()
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.Register(toolloop.NewTool("local_tool", "Local.", func(context.Context, struct{}) (any, error) { return nil, nil })))
	src := &slowSource{gate: make(chan struct{})}
	require.NoError(t, reg.AddSource(ctx, src))
	src.change()

	refreshed := make(chan error)
	go func() { refreshed <- reg.Refresh(ctx) }() // stuck in Tools until the gate opens
	time.Sleep(20 * time.Millisecond)

	done := make(chan bool)
	go func() {
		_, ok := reg.Lookup(ctx, "local_tool")
		done <- ok
	}()
	select {
	case ok := <-done:
		assert.True(t, ok)
	case <-time.After(5 * time.Second):
		t.Fatal("a lookup waited for another source's refresh")
	}
	close(src.gate)
	require.NoError(t, <-refreshed)
	_, ok := reg.Lookup(ctx, "remote")
	assert.True(t, ok)
}
