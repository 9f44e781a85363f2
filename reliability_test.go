package toolloop

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneTurn is a model that makes the given calls once, then stops.
func oneTurn(calls ...ToolCall) Model {
	var n atomic.Int32
	return ModelFunc(func(context.Context, *Request) (*Response, error) {
		if n.Add(1) == 1 {
			return &Response{Message: Message{Role: RoleAssistant, ToolCalls: calls}}, nil
		}
		return &Response{Message: Message{Role: RoleAssistant, Content: []Content{TextContent("done")}}}, nil
	})
}

func toolResults(msgs []Message) []*ToolResult {
	var out []*ToolResult
	for _, m := range msgs {
		if m.Role == RoleTool {
			out = append(out, m.Result)
		}
	}
	return out
}

// An approver that ignores cancellation and says yes after Run returned
// must not make the tool run: the model was told it did not.
func TestStubbornApproverNeverRunsAfterCancel(t *testing.T) {
	for _, stage := range []string{"guard", "approver", "pre-hook"} {
		t.Run(stage, func(t *testing.T) {
			var ran atomic.Bool
			tool := NewTool("rm", "Removes.", func(context.Context, struct{}) (any, error) {
				ran.Store(true)
				return "removed", nil
			})
			var reg ToolRegistry
			require.NoError(t, reg.Register(tool))
			entered := make(chan struct{})
			release := make(chan struct{})
			stubborn := func() { close(entered); <-release } // ignores ctx
			l := &AgentLoop{Model: oneTurn(ToolCall{ID: "c1", Name: "rm", Arguments: json.RawMessage(`{}`)}),
				Tools: &reg, grace: time.Millisecond}
			switch stage {
			case "guard":
				l.Guard = GuardFunc(func(context.Context, *Call) Verdict { stubborn(); return Verdict{Decision: Allow} })
			case "approver":
				l.Guard = GuardFunc(func(context.Context, *Call) Verdict { return Verdict{Decision: Ask} })
				l.Approver = ApproverFunc(func(context.Context, *Call, string) (Approval, error) {
					stubborn()
					return Approval{Approved: true}, nil
				})
			case "pre-hook":
				l.Hooks.PreToolUse = []PreToolUseHook{func(context.Context, *Call) (PreToolUse, error) {
					stubborn()
					return PreToolUse{}, nil
				}}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan *RunResult)
			go func() {
				res, _ := l.Run(ctx, []Message{UserMessage("clean up")})
				done <- res
			}()
			<-entered
			cancel()
			res := <-done
			rs := toolResults(res.Messages)
			require.Len(t, rs, 1)
			assert.Equal(t, KindCanceled, rs[0].Error.Kind)
			assert.Contains(t, rs[0].Text(), "not run")
			close(release) // the stage now says yes, after Run returned
			require.Never(t, ran.Load, 50*time.Millisecond, time.Millisecond, "the tool ran after its result said it did not")
			waitGoroutines(t)
		})
	}
}

// waitGoroutines waits for the goroutines a test left behind (stubborn
// user code the loop stopped waiting for) to end.
func waitGoroutines(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return goroutinesSettled() }, 5*time.Second, time.Millisecond)
}

func goroutinesSettled() bool {
	var buf [1 << 16]byte
	n := runtime.Stack(buf[:], true)
	return !strings.Contains(string(buf[:n]), "toolloop.(*callRun)")
}

// A typed tool that returns a nil *ToolResult and no error succeeded
// with nothing to say; it did not panic.
func TestTypedNilResultIsEmptySuccess(t *testing.T) {
	tool := NewTool("quiet", "Says nothing.", func(context.Context, struct{}) (any, error) {
		var r *ToolResult
		return r, nil
	})
	var reg ToolRegistry
	require.NoError(t, reg.Register(tool))
	l := &AgentLoop{Tools: &reg}
	res, pend := l.RunCall(context.Background(), "r", 1, ToolCall{ID: "c", Name: "quiet", Arguments: json.RawMessage(`{}`)}, nil)
	require.Nil(t, pend)
	assert.Equal(t, StatusOK, res.Status)
	assert.Nil(t, res.Error)
	assert.Empty(t, res.Content)
}

func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

// Arguments nested to encoding/json's limit are refused as invalid_args,
// and the transcript that holds them still marshals and reads back.
func TestDeepArgumentsRoundTrip(t *testing.T) {
	deep := nested(10000)
	require.True(t, json.Valid([]byte(deep)), "the arguments are valid JSON, at the decoder's limit")
	tool := plainTool{spec: ToolSpec{Name: "t", Description: "Takes anything.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		run: func(context.Context, *Call) (*ToolResult, error) { return TextResult("ok"), nil }}
	var reg ToolRegistry
	require.NoError(t, reg.Register(tool))
	l := &AgentLoop{Model: oneTurn(ToolCall{ID: "c1", Name: "t", Arguments: json.RawMessage(deep)}), Tools: &reg}
	res, err := l.Run(context.Background(), []Message{UserMessage("go")})
	require.NoError(t, err)
	rs := toolResults(res.Messages)
	require.Len(t, rs, 1)
	assert.Equal(t, KindInvalidArgs, rs[0].Error.Kind)
	assert.Contains(t, rs[0].Text(), "nest deeper than")

	b, err := json.Marshal(res)
	require.NoError(t, err)
	var back RunResult
	require.NoError(t, json.Unmarshal(b, &back), "the transcript reads back")
	require.Equal(t, deep, string(back.Messages[1].ToolCalls[0].Arguments), "the arguments survive byte for byte")

	// Arguments within the limit stay JSON in the transcript.
	ok := nested(MaxJSONDepth)
	b, err = json.Marshal(ToolCall{ID: "x", Name: "t", Arguments: json.RawMessage(ok)})
	require.NoError(t, err)
	assert.NotContains(t, string(b), "raw_arguments")
}

// JSON output nested too deep to read back reaches the model as text.
func TestDeepJSONOutputBecomesText(t *testing.T) {
	deep := nested(9000)
	tool := NewTool("t", "Returns deep JSON.", func(context.Context, struct{}) (any, error) {
		return json.RawMessage(deep), nil
	})
	var reg ToolRegistry
	require.NoError(t, reg.Register(tool))
	l := &AgentLoop{Tools: &reg, Limits: Limits{MaxResultBytes: -1}}
	res, _ := l.RunCall(context.Background(), "r", 1, ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage(`{}`)}, nil)
	require.Len(t, res.Content, 1)
	assert.Equal(t, ContentText, res.Content[0].Type)
	assert.Equal(t, deep, res.Content[0].Text)
	b, err := json.Marshal(ToolMessage(res))
	require.NoError(t, err)
	var back Message
	require.NoError(t, json.Unmarshal(b, &back))
}

func TestMaxCallsPerTurn(t *testing.T) {
	var runs atomic.Int32
	tool := NewTool("t", "Counts.", func(context.Context, struct{}) (any, error) { runs.Add(1); return "ok", nil })
	var reg ToolRegistry
	require.NoError(t, reg.Register(tool))
	calls := make([]ToolCall, 5)
	for i := range calls {
		calls[i] = ToolCall{ID: string(rune('a' + i)), Name: "t", Arguments: json.RawMessage(`{}`)}
	}
	var completes atomic.Int32
	l := &AgentLoop{Model: oneTurn(calls...), Tools: &reg,
		OnEvent: func(e Event) {
			if e.Type == EventComplete {
				completes.Add(1)
			}
		}, Limits: Limits{MaxCallsPerTurn: 3},
	}
	res, err := l.Run(context.Background(), []Message{UserMessage("go")})
	require.NoError(t, err)
	rs := toolResults(res.Messages)
	require.Len(t, rs, 5, "every call is answered")
	assert.EqualValues(t, 3, runs.Load())
	assert.EqualValues(t, 5, completes.Load())
	for i, r := range rs {
		assert.Equal(t, calls[i].ID, r.CallID)
		if i < 3 {
			assert.Equal(t, StatusOK, r.Status)
			continue
		}
		assert.Equal(t, KindCanceled, r.Error.Kind)
		assert.Contains(t, r.Text(), "at most 3 run per turn")
	}
	assert.Equal(t, 3, res.ToolCalls, "only the calls that ran count")
}

func TestMaxTurnResultBytes(t *testing.T) {
	out := strings.Repeat("x", 10000)
	tool := NewTool("t", "Talks.", func(context.Context, struct{}) (any, error) { return out, nil })
	var reg ToolRegistry
	require.NoError(t, reg.Register(tool))
	calls := make([]ToolCall, 4)
	for i := range calls {
		calls[i] = ToolCall{ID: string(rune('a' + i)), Name: "t", Arguments: json.RawMessage(`{}`)}
	}
	l := &AgentLoop{Model: oneTurn(calls...), Tools: &reg, Limits: Limits{MaxTurnResultBytes: 16000}}
	res, err := l.Run(context.Background(), []Message{UserMessage("go")})
	require.NoError(t, err)
	total := 0
	for _, r := range toolResults(res.Messages) {
		total += len(r.Text())
		assert.LessOrEqual(t, len(r.Text()), 4000)
		assert.True(t, r.Meta.Truncated)
		assert.Equal(t, 10000, r.Meta.Bytes)
	}
	assert.LessOrEqual(t, total, 16000)

	// One call alone keeps the per-result budget.
	l = &AgentLoop{Tools: &reg, Limits: Limits{MaxTurnResultBytes: 16000}}
	r, _ := l.RunCall(context.Background(), "r", 1, calls[0], nil)
	assert.Equal(t, out, r.Text())
}

// Post-hooks see output already cut to the pre-hook budget, and the
// result records the size the tool produced.
func TestPostHooksSeeCutOutput(t *testing.T) {
	huge := strings.Repeat("0123456789abcdef", 1<<18) // 4 MiB
	for _, typed := range []bool{true, false} {
		var tool Tool = NewTool("t", "Floods.", func(context.Context, struct{}) (any, error) { return huge, nil })
		if !typed {
			tool = plainTool{spec: ToolSpec{Name: "t", Description: "Floods.", InputSchema: json.RawMessage(`{"type":"object"}`)},
				run: func(context.Context, *Call) (*ToolResult, error) { return TextResult(huge), nil }}
		}
		var reg ToolRegistry
		require.NoError(t, reg.Register(tool))
		var seen int
		var limit int
		l := &AgentLoop{Tools: &reg,
			Hooks: Hooks{
				PreToolUse: []PreToolUseHook{func(_ context.Context, c *Call) (PreToolUse, error) {
					limit = c.MaxOutputBytes
					return PreToolUse{}, nil
				}},
				PostToolUse: []PostToolUseHook{func(_ context.Context, _ *Call, r *ToolResult) (*ToolResult, error) {
					seen = len(r.Text())
					return nil, nil
				}}}, Limits: Limits{MaxOutputBytes: 256 << 10},
		}
		res, _ := l.RunCall(context.Background(), "r", 1, ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage(`{}`)}, nil)
		assert.Equal(t, 256<<10, limit, "the call carries the budget")
		assert.LessOrEqual(t, seen, 256<<10, "typed=%v: post-hooks see at most the pre-hook budget", typed)
		assert.Greater(t, seen, 200<<10)
		assert.LessOrEqual(t, len(res.Text()), DefaultMaxResultBytes)
		assert.Equal(t, len(huge), res.Meta.Bytes)
		assert.True(t, res.Meta.Truncated)
		assert.Equal(t, huge[:100], res.Text()[:100])
		assert.Equal(t, huge[len(huge)-100:], res.Text()[len(res.Text())-100:])
	}
}

type plainTool struct {
	spec ToolSpec
	run  func(context.Context, *Call) (*ToolResult, error)
}

func (p plainTool) Spec() ToolSpec { return p.spec }
func (p plainTool) Run(ctx context.Context, c *Call) (*ToolResult, error) {
	return p.run(ctx, c)
}

// A tool flooding partial output and progress is coalesced to about one
// event per interval, counted, with the dropped bytes marked, and what is
// pending arrives before the completion event.
func TestReportsAreRateLimited(t *testing.T) {
	const reports = 20000
	tool := plainTool{spec: ToolSpec{Name: "flood", Description: "Floods.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		run: func(_ context.Context, c *Call) (*ToolResult, error) {
			for i := range reports {
				c.ReportPartial("line of output\n")
				c.ReportProgress(Progress{Done: float64(i + 1), Total: reports})
				if i%2000 == 0 {
					time.Sleep(5 * time.Millisecond)
				}
			}
			return TextResult("ok"), nil
		}}
	var reg ToolRegistry
	require.NoError(t, reg.Register(tool))
	var mu sync.Mutex
	var events []Event
	l := &AgentLoop{Tools: &reg,
		OnEvent: func(e Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}, Limits: Limits{ReportInterval: 10 * time.Millisecond, MaxPartialBytes: 1024},
	}
	_, _ = l.RunCall(context.Background(), "r", 1, ToolCall{ID: "c", Name: "flood", Arguments: json.RawMessage(`{}`)}, nil)
	mu.Lock()
	defer mu.Unlock()
	partials, progress, partialReports, progressReports, dropped := 0, 0, 0, 0, 0
	var last Progress
	completeAt := -1
	for i, e := range events {
		n := max(e.Coalesced, 1)
		switch e.Type {
		case EventPartialResult:
			require.Equal(t, -1, completeAt, "partial output after completion")
			partials++
			partialReports += n
			assert.LessOrEqual(t, len(e.Text), 1024+200)
			if strings.Contains(e.Text, "bytes of partial output dropped") {
				dropped++
			}
		case EventProgress:
			require.Equal(t, -1, completeAt, "progress after completion")
			progress++
			progressReports += n
			last = *e.Progress
		case EventComplete:
			completeAt = i
		}
	}
	require.NotEqual(t, -1, completeAt)
	assert.Equal(t, reports, partialReports, "every partial report is counted")
	assert.Equal(t, reports, progressReports, "every progress report is counted")
	assert.Less(t, partials, reports/10, "partial output is coalesced")
	assert.Less(t, progress, reports/10, "progress is coalesced")
	assert.Positive(t, dropped, "dropped output is marked")
	assert.Equal(t, float64(reports), last.Done, "the last progress is delivered")
}

// Turning truncation off (MaxResultBytes < 0) turns the default turn cap
// off too; an explicit MaxTurnResultBytes still applies.
func TestTurnCapFollowsTruncationOff(t *testing.T) {
	l := Limits{MaxResultBytes: -1}.WithDefaults()
	assert.LessOrEqual(t, l.resultShare(10), 0, "no cut")
	l = Limits{MaxResultBytes: -1, MaxTurnResultBytes: 1000}.WithDefaults()
	assert.Equal(t, 100, l.resultShare(10))
	l = Limits{}.WithDefaults()
	assert.Equal(t, DefaultMaxResultBytes, l.resultShare(4), "four calls fit the default turn cap whole")
	assert.Equal(t, (1<<20)/128, l.resultShare(128))
}
