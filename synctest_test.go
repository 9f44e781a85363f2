package toolloop

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunInSynctestBubble runs calls inside a testing/synctest bubble after
// the worker pool has warmed up outside it: calls must not land on a pooled
// worker from outside (which may not touch the bubble's channels), and the
// bubble's fake clock must drive timeouts.
func TestRunInSynctestBubble(t *testing.T) {
	var reg ToolRegistry
	reg.MustRegister(NewTool("read", "reads", noop))
	slow := NewTool("slow", "sleeps", func(ctx context.Context, _ struct{}) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	slow.Timeout = time.Hour
	reg.MustRegister(slow)
	l := &AgentLoop{Tools: &reg}
	args := json.RawMessage(`{"path":"x","count":1}`)
	for range 4 { // warm the pool outside the bubble
		res, _ := l.RunCall(context.Background(), "warm", 1, ToolCall{ID: "w", Name: "read", Arguments: args}, nil)
		require.False(t, res.IsError(), res.Text())
	}
	synctest.Test(t, func(t *testing.T) {
		res, _ := l.RunCall(context.Background(), "bubble", 1, ToolCall{ID: "c1", Name: "read", Arguments: args}, nil)
		require.False(t, res.IsError(), res.Text())

		start := time.Now()
		res, _ = l.RunCall(context.Background(), "bubble", 1, ToolCall{ID: "c2", Name: "slow", Arguments: json.RawMessage(`{}`)}, nil)
		require.True(t, res.IsError())
		assert.Equal(t, KindTimeout, res.Error.Kind)
		assert.Equal(t, time.Hour, time.Since(start), "the bubble's clock ran the hour-long timeout")
	})
}
