package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop"
)

// TestWatchdogWakesEveryHungCall: calls that hang in turns running at once,
// with timeouts of an hour down to a few milliseconds and started in that
// order, are each answered for after their own timeout. One timer serves
// every turn, so a turn that must wake sooner than the ones before it has
// to move that timer earlier, and a turn woken must not hold up the
// others.
func TestWatchdogWakesEveryHungCall(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var reg toolloop.ToolRegistry
	timeouts := []time.Duration{time.Hour, 80 * time.Millisecond, 40 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}
	for i, d := range timeouts {
		tool := toolloop.NewTool(fmt.Sprintf("stuck%d", i), "Never looks at its context.", func(context.Context, struct{}) (any, error) {
			<-release
			return "too late", nil
		})
		tool.Timeout = d
		reg.MustRegister(tool)
	}
	l := &toolloop.AgentLoop{Tools: &reg}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answered := make([]chan *toolloop.ToolResult, len(timeouts))
	for i := range timeouts {
		answered[i] = make(chan *toolloop.ToolResult, 1)
		go func() {
			call := toolloop.ToolCall{ID: fmt.Sprintf("c%d", i), Name: fmt.Sprintf("stuck%d", i), Arguments: json.RawMessage(`{}`)}
			c := context.Background()
			if i == 0 {
				c = ctx // the hour-long one ends when the others are done
			}
			r, _ := l.RunCall(c, "run", 1, call, nil)
			answered[i] <- r
		}()
		time.Sleep(2 * time.Millisecond) // registered in order, longest first
	}
	results := make([]*toolloop.ToolResult, len(timeouts))
	deadline := time.After(20 * time.Second)
	for i := len(timeouts) - 1; i >= 0; i-- {
		if i == 0 {
			cancel() // the others are answered for
		}
		select {
		case results[i] = <-answered[i]:
		case <-deadline:
			t.Fatalf("call %d (timeout %v) was not answered for: the watchdog missed its turn", i, timeouts[i])
		}
	}
	for i, r := range results {
		want := toolloop.KindTimeout
		if i == 0 {
			want = toolloop.KindCanceled
		}
		if assert.NotNil(t, r) && assert.NotNil(t, r.Error, "call %d", i) {
			assert.Equal(t, want, r.Error.Kind, "call %d", i)
		}
	}
}
