package mcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

func TestSerializeConfig(t *testing.T) {
	cfg, err := mcp.ParseConfig([]byte(`{"mcpServers":{"mem":{"command":"mem-server","serialize":true},"fs":{"command":"fs-server"}}}`))
	require.NoError(t, err)
	assert.True(t, cfg.Servers["mem"].Serialize)
	assert.False(t, cfg.Servers["fs"].Serialize)
	b, err := json.Marshal(cfg.Servers["mem"])
	require.NoError(t, err)
	assert.JSONEq(t, `{"command":"mem-server","serialize":true}`, string(b))
}

// TestSerializedCallGivesUpItsPlace: a call queued behind another whose
// context ends while it waits returns at once, and never reaches the
// server (which would have seen it cancelled).
func TestSerializedCallGivesUpItsPlace(t *testing.T) {
	t.Parallel()
	srv := newServer(t, "memory")
	src := srv.source(t, "s", func(c *mcp.ServerConfig) { c.Serialize = true }, nil)
	slow, ok := registry(t, src).Lookup(context.Background(), "s__slow")
	require.True(t, ok)
	call := func(ctx context.Context, r toolloop.Reporter) (*toolloop.ToolResult, error) {
		return slow.Run(ctx, &toolloop.Call{ID: "1", Name: "s__slow", Arguments: json.RawMessage(`{"steps":4,"delay_ms":100}`), Reporter: r})
	}

	var wg sync.WaitGroup
	first := make(chan error, 1)
	running := make(chan struct{})
	var once sync.Once
	wg.Go(func() {
		_, err := call(context.Background(), progressFunc(func(toolloop.Progress) { once.Do(func() { close(running) }) }))
		first <- err
	})
	// Once the first call is running on the server, queue a second behind
	// it that gives up before the first is done.
	<-running
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := call(ctx, nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case err := <-first:
		t.Fatalf("the queued call waited for the first (which returned %v)", err)
	default:
	}
	require.NoError(t, <-first)
	wg.Wait()
	assert.False(t, srv.sawCancel(), "the queued call reached the server")
	res, err := call(context.Background(), nil)
	require.NoError(t, err, "the queue is free again")
	assert.Equal(t, "done after 4 steps", res.Text())
}
