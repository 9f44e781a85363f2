package toolloop

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestPausedRunHoldsNoGoroutine checks that a run paused for approval
// leaves no goroutine of the loop behind, while its caller still holds
// the paused state: not the call's worker (the pool's idle goroutines
// are no run's, and exit on their own within 2×workerLinger, which
// goleak's retries wait for), not a background job (jobs end at a
// pause), not the inbox it was steered through. A server can keep many
// paused runs at no cost but their states' memory.
func TestPausedRunHoldsNoGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name string
		// job: turn 1 also starts a background job that runs until its
		// context ends.
		job bool
		// inbox: the run is steered through an inbox, and a message sent
		// while the call waits is queued at the pause, kept for the
		// resumed run.
		inbox bool
	}{
		{name: "guard asks"},
		{name: "guard asks while a job runs", job: true},
		{name: "guard asks, steered through an inbox", inbox: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			others := goleak.IgnoreCurrent()
			var reg ToolRegistry
			reg.MustRegister(NewTool("write", "Writes.", func(context.Context, struct{}) (any, error) {
				return "written", nil
			}))
			waits := NewTool("wait", "Waits for its context.", func(ctx context.Context, _ struct{}) (any, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})
			waits.Background = true
			reg.MustRegister(waits)
			var in *Inbox
			if tc.inbox {
				in = new(Inbox)
			}
			calls := []ToolCall{{ID: "w1", Name: "write", Arguments: json.RawMessage(`{}`)}}
			if tc.job {
				calls = append([]ToolCall{{ID: "j1", Name: "wait", Arguments: json.RawMessage(`{"background":true}`)}}, calls...)
			}
			l := &AgentLoop{
				Model: ModelFunc(func(_ context.Context, req *Request) (*Response, error) {
					for _, m := range req.Messages {
						if m.Role == RoleAssistant {
							return &Response{Message: Message{Content: []Content{TextContent("done")}}}, nil
						}
					}
					return &Response{Message: Message{ToolCalls: calls}}, nil
				}),
				Tools: &reg,
				Guard: AskingGuard(GuardFunc(func(_ context.Context, c *Call) Verdict {
					if c.Name == "write" {
						if in != nil {
							in.Send(UserMessage("and then stop"))
						}
						return Verdict{Decision: Ask, Reason: "writes need a human"}
					}
					return Verdict{}
				})),
				PauseForApproval: true,
			}
			ctx := context.Background()
			if in != nil {
				ctx = WithInbox(ctx, in)
			}

			res, err := l.Run(ctx, []Message{UserMessage("write")})
			require.ErrorIs(t, err, ErrPaused)
			require.NotNil(t, res.Paused)
			require.Len(t, res.Paused.Pending, 1)
			assert.Equal(t, "w1", res.Paused.Pending[0].CallID)
			if tc.job {
				require.Len(t, res.Jobs, 1)
				assert.Equal(t, JobCanceled, res.Jobs[0].Status, "a job ends at its run's pause")
			}
			if tc.inbox {
				require.Len(t, res.Paused.Queued, 1, "the message waits in the state, not in a goroutine")
			}
			// The call's worker has handed over its result and gone back
			// to the pool (or is about to): it runs nothing of the run.
			require.Eventually(t, func() bool { return workers.busy() == 0 }, 5*time.Second, time.Millisecond)
			// Nothing else of the run is left either, the paused state
			// still held.
			goleak.VerifyNone(t, others)
			runtime.KeepAlive(res)
			runtime.KeepAlive(in)

			res, err = l.Resume(ctx, res.Paused, map[string]Approval{"w1": {Approved: true}})
			require.NoError(t, err)
			assert.Equal(t, "done", res.FinalText)
			require.Eventually(t, func() bool { return workers.busy() == 0 }, 5*time.Second, time.Millisecond)
			goleak.VerifyNone(t, others)
		})
	}
}
