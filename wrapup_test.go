package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
)

// windowModel is a model with a small context window: a request whose
// messages hold more than window bytes of text is refused with a
// context-length error, as a provider refuses it. Until the loop asks it
// with tool choice none it calls the "big" tool; then it answers. Only
// the wrap-up request is measured, so the run gets there.
type windowModel struct {
	window int
	answer func(req *toolloop.Request) *toolloop.Response

	mu       sync.Mutex
	requests []*toolloop.Request
	refused  int
	turn     int
}

var errTooLong = &providers.Error{Provider: "test", StatusCode: 400, Type: "context_length_exceeded",
	Message: "prompt is too long", Kind: providers.ErrContextLength}

func (m *windowModel) Generate(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	if req.ToolChoice.Mode == toolloop.ToolChoiceNone || m.wrapping(req) {
		size := 0
		for _, msg := range req.Messages {
			b, _ := json.Marshal(msg)
			size += len(b)
		}
		if size > m.window {
			m.refused++
			return nil, errTooLong
		}
		if m.answer != nil {
			return m.answer(req), nil
		}
		return looptest.Text("final answer"), nil
	}
	m.turn++
	return looptest.Calls(looptest.Call(fmt.Sprintf("c%d", m.turn), "big", `{}`)), nil
}

// wrapping reports whether req is a wrap-up request of a typed run, whose
// tool choice the loop turns to auto with the output tool alone.
func (m *windowModel) wrapping(req *toolloop.Request) bool {
	return len(req.Tools) == 1 && req.Tools[0].Name == toolloop.DefaultOutputName
}

type noArgs struct{}

func bigTools(size int) *toolloop.ToolRegistry {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("big", "Returns a large output.", func(context.Context, noArgs) (any, error) {
		return strings.Repeat("x", size), nil
	}))
	return &reg
}

func countEdits(rec *looptest.Recorder, strategy string) int {
	n := 0
	for _, e := range rec.Of(toolloop.EventTranscriptEdited) {
		if e.Edit != nil && e.Edit.Strategy == strategy {
			n++
		}
	}
	return n
}

// TestWrapUpOverflow: when the wrap-up request is too long for the
// model, the loop frees room and asks again, whichever limit forced the
// wrap-up, so the run still ends with a final answer.
func TestWrapUpOverflow(t *testing.T) {
	limits := []struct {
		name   string
		budget toolloop.Budget
		iters  int
		want   error
	}{
		{"max iterations", toolloop.Budget{}, 6, toolloop.ErrMaxIterations},
		{"stop when", toolloop.Budget{StopWhen: func(st toolloop.RunStatus) bool { return st.Turns >= 6 }}, 0, toolloop.ErrBudget},
		{"tool calls", toolloop.Budget{MaxToolCalls: 6}, 0, toolloop.ErrBudget},
	}
	for _, lim := range limits {
		t.Run(lim.name, func(t *testing.T) {
			model := &windowModel{window: 9000}
			rec := &looptest.Recorder{}
			b := lim.budget
			b.WrapUp = true
			loop := &toolloop.AgentLoop{Model: model, Tools: bigTools(2000), MaxIterations: lim.iters, Budget: b, OnEvent: rec.Record}
			res, err := loop.Run(context.Background(), []toolloop.Message{
				toolloop.SystemMessage("You are terse."), toolloop.UserMessage("Read everything.")})
			require.ErrorIs(t, err, lim.want)
			assert.NotErrorIs(t, err, providers.ErrContextLength)
			assert.Equal(t, "final answer", res.FinalText)
			assert.Equal(t, toolloop.StopEnd, res.StopReason)
			looptest.AssertValid(t, res.Messages)
			assert.Positive(t, model.refused, "the wrap-up request must have overflowed once")
			assert.Positive(t, countEdits(rec, "wrap_up_trim"), "the loop must have left turns out")

			// The task and the wrap-up message are kept; the note says
			// what was left out.
			assert.Equal(t, "You are terse.", res.Messages[0].Text())
			assert.Equal(t, "Read everything.", res.Messages[1].Text())
			assert.Equal(t, toolloop.WrapUpOmitted, res.Messages[2].Text())
			wrap := res.Messages[len(res.Messages)-2]
			assert.Contains(t, wrap.Text(), "reached its limit")
			last := model.requests[len(model.requests)-1]
			assert.Equal(t, toolloop.ToolChoiceNone, last.ToolChoice.Mode)
		})
	}
}

// TestWrapUpOverflowKeepsWhatFits: the loop leaves out the oldest turns
// first, and keeps the recent ones that fit.
func TestWrapUpOverflowKeepsWhatFits(t *testing.T) {
	model := &windowModel{window: 14000}
	loop := &toolloop.AgentLoop{Model: model, Tools: bigTools(2000), MaxIterations: 8, Budget: toolloop.Budget{WrapUp: true}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Read everything.")})
	require.ErrorIs(t, err, toolloop.ErrMaxIterations)
	assert.Equal(t, "final answer", res.FinalText)
	looptest.AssertValid(t, res.Messages)
	results := looptest.Results(res.Messages)
	assert.NotContains(t, results, "c1", "the oldest turn is left out")
	assert.Contains(t, results, "c8", "the newest turn is kept")
}

// TestWrapUpOverflowManagers: with context managers, the wrap-up turn
// asks them to free room first, as every turn does.
func TestWrapUpOverflowManagers(t *testing.T) {
	model := &windowModel{window: 9000}
	rec := &looptest.Recorder{}
	loop := &toolloop.AgentLoop{Model: model, Tools: bigTools(2000), MaxIterations: 6,
		Budget: toolloop.Budget{WrapUp: true}, OnEvent: rec.Record,
		ContextManagers: []toolloop.ContextManager{&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1 << 30}, KeepTurns: 1}}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Read everything.")})
	require.ErrorIs(t, err, toolloop.ErrMaxIterations)
	assert.Equal(t, "final answer", res.FinalText)
	looptest.AssertValid(t, res.Messages)
	assert.Positive(t, countEdits(rec, "clear_tool_results"))
	assert.Zero(t, countEdits(rec, "wrap_up_trim"), "clearing old results freed enough room")
	assert.Len(t, looptest.Results(res.Messages), 6, "every call keeps its result")
}

// TestWrapUpOverflowNothingFits: when even the task alone does not fit,
// the run ends with an error saying so, matching both the limit and the
// context-length error, after a bounded number of requests.
func TestWrapUpOverflowNothingFits(t *testing.T) {
	model := &windowModel{window: 5000}
	loop := &toolloop.AgentLoop{Model: model, Tools: bigTools(10), MaxIterations: 12, Budget: toolloop.Budget{WrapUp: true}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage(strings.Repeat("huge task ", 600))})
	require.Error(t, err)
	assert.ErrorIs(t, err, toolloop.ErrMaxIterations)
	assert.ErrorIs(t, err, providers.ErrContextLength)
	assert.Contains(t, err.Error(), "does not fit the model's context")
	looptest.AssertValid(t, res.Messages)
	assert.LessOrEqual(t, model.refused, 6, "halving 12 turns takes at most five shorter requests after the first")
}

// TestWrapUpOverflowCanceled: a cancelled run does not keep trying.
func TestWrapUpOverflowCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		calls++
		if req.ToolChoice.Mode == toolloop.ToolChoiceNone {
			cancel()
			return nil, errTooLong
		}
		return looptest.Calls(looptest.Call(fmt.Sprint("c", calls), "big", `{}`)), nil
	})
	loop := &toolloop.AgentLoop{Model: model, Tools: bigTools(10), MaxIterations: 4, Budget: toolloop.Budget{WrapUp: true}}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("go")})
	require.ErrorIs(t, err, toolloop.ErrMaxIterations)
	assert.Equal(t, 5, calls, "four turns and one wrap-up request")
	looptest.AssertValid(t, res.Messages)
}

type scored struct {
	Answer string `json:"answer"`
	Score  int    `json:"score"`
}

// TestRunTypedWrapUp: a typed run that reaches a limit still gets its
// typed answer from the wrap-up turn, whichever way the model gives it;
// RunTyped returns it with the limit's error.
func TestRunTypedWrapUp(t *testing.T) {
	call := looptest.Calls(looptest.Call("c1", "add", `{"a":1,"b":2}`))
	onlyAnswerTool := func(req *toolloop.Request) string {
		if len(req.Tools) != 1 || req.Tools[0].Name != toolloop.DefaultOutputName {
			return fmt.Sprintf("the wrap-up turn must offer the output tool alone, got %d tools", len(req.Tools))
		}
		if req.ToolChoice.Mode != toolloop.ToolChoiceAuto {
			return "the wrap-up turn must leave the choice to the model, got " + string(req.ToolChoice.Mode)
		}
		if last := req.Messages[len(req.Messages)-1].Text(); !strings.Contains(last, "calling the final_answer tool") {
			return "the wrap-up message must say how to answer: " + last
		}
		return ""
	}
	tests := []struct {
		name   string
		model  func(t *testing.T) toolloop.Model
		output int
	}{
		{"output tool", func(t *testing.T) toolloop.Model {
			return looptest.NewModel(t, looptest.Turn{Reply: call},
				looptest.Turn{Check: onlyAnswerTool, Reply: looptest.Calls(
					looptest.Call("w1", "add", `{"a":1,"b":1}`),
					looptest.Call("w2", toolloop.DefaultOutputName, `{"answer":"three","score":3}`))})
		}, 1},
		{"text in tool mode", func(t *testing.T) toolloop.Model {
			return looptest.NewModel(t, looptest.Turn{Reply: call},
				looptest.Turn{Check: onlyAnswerTool, Reply: looptest.Text("```json\n{\"answer\":\"three\",\"score\":3}\n```")})
		}, 0},
		{"native", func(t *testing.T) toolloop.Model {
			return nativeModel{looptest.NewModel(t, looptest.Turn{Reply: call},
				looptest.Turn{Check: func(req *toolloop.Request) string {
					if req.Output == nil || req.ToolChoice.Mode != toolloop.ToolChoiceNone {
						return "the native wrap-up turn must carry the format and forbid tools"
					}
					return ""
				}, Reply: looptest.Text(`{"answer":"three","score":3}`)})}
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loop := &toolloop.AgentLoop{Model: tt.model(t), Tools: goldenTools(), MaxIterations: 1,
				Budget: toolloop.Budget{WrapUp: true}}
			v, res, err := toolloop.RunTyped[scored](context.Background(), loop, []toolloop.Message{toolloop.UserMessage("add")})
			require.ErrorIs(t, err, toolloop.ErrMaxIterations)
			assert.NotErrorIs(t, err, toolloop.ErrOutput)
			assert.Equal(t, scored{Answer: "three", Score: 3}, v)
			assert.JSONEq(t, `{"answer":"three","score":3}`, string(res.Output))
			assert.Equal(t, 1, res.ToolCalls, "the output tool is not a tool call")
			assert.Equal(t, tt.output, res.OutputCalls)
			looptest.AssertValid(t, res.Messages)
			if tt.output > 0 {
				r := looptest.Results(res.Messages)["w1"]
				require.NotNil(t, r, "a call beside the answer gets a result")
				assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
			}
		})
	}
}

// TestRunTypedWrapUpInvalid: an invalid answer in the wrap-up turn ends
// the run with both the limit and an *OutputError.
func TestRunTypedWrapUpInvalid(t *testing.T) {
	model := looptest.Script(looptest.Calls(looptest.Call("c1", "add", `{"a":1,"b":2}`)),
		looptest.Calls(looptest.Call("w1", toolloop.DefaultOutputName, `{"answer":3}`)))
	loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), MaxIterations: 1, Budget: toolloop.Budget{WrapUp: true}}
	v, res, err := toolloop.RunTyped[scored](context.Background(), loop, []toolloop.Message{toolloop.UserMessage("add")})
	require.ErrorIs(t, err, toolloop.ErrMaxIterations)
	var oe *toolloop.OutputError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, `{"answer":3}`, oe.Answer)
	assert.Zero(t, v)
	assert.Empty(t, res.Output)
	looptest.AssertValid(t, res.Messages)
}

// TestResumeTypedWrapUp: a typed run resumed after a pause gets its
// answer from the wrap-up turn too.
func TestResumeTypedWrapUp(t *testing.T) {
	model := looptest.Script(looptest.Calls(looptest.Call("c1", "add", `{"a":1,"b":2}`)),
		looptest.Calls(looptest.Call("w1", toolloop.DefaultOutputName, `{"answer":"three","score":3}`)))
	loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), MaxIterations: 1, PauseForApproval: true,
		Guard: toolloop.AskingGuard(toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if c.Name == "add" {
				return toolloop.Verdict{Decision: toolloop.Ask}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		})), Budget: toolloop.Budget{WrapUp: true}}
	_, res, err := toolloop.RunTyped[scored](context.Background(), loop, []toolloop.Message{toolloop.UserMessage("add")})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	v, res, err := toolloop.ResumeTyped[scored](context.Background(), loop, res.Paused,
		map[string]toolloop.Approval{"c1": {Approved: true}})
	require.ErrorIs(t, err, toolloop.ErrMaxIterations)
	assert.Equal(t, scored{Answer: "three", Score: 3}, v)
	looptest.AssertValid(t, res.Messages)
}

// TestOutputCallsApart: the output tool's calls are counted apart from
// tool calls, and a spent tool-call budget never holds back the answer.
func TestOutputCallsApart(t *testing.T) {
	model := looptest.Script(
		looptest.Calls(looptest.Call("c1", "add", `{"a":1,"b":2}`), looptest.Call("c2", "add", `{"a":1,"b":3}`),
			looptest.Call("a1", toolloop.DefaultOutputName, `{"answer":"three","score":3}`)))
	loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), Budget: toolloop.Budget{MaxToolCalls: 1}}
	v, res, err := toolloop.RunTyped[scored](context.Background(), loop, []toolloop.Message{toolloop.UserMessage("add")})
	require.NoError(t, err)
	assert.Equal(t, "three", v.Answer)
	assert.Equal(t, 1, res.ToolCalls)
	assert.Equal(t, 1, res.OutputCalls)
	r := looptest.Results(res.Messages)["c2"]
	require.NotNil(t, r)
	assert.Contains(t, r.Text(), "budget allows 1 tool calls")
}

// TestWrapUpOverflowError: the error of a wrap-up turn that fails for
// another reason is not retried.
func TestWrapUpOverflowOtherError(t *testing.T) {
	boom := errors.New("provider down")
	model := looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "add", `{"a":1,"b":2}`))},
		looptest.Turn{Err: boom})
	loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), MaxIterations: 1, Budget: toolloop.Budget{WrapUp: true}}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("add")})
	require.ErrorIs(t, err, boom)
	assert.Zero(t, model.Remaining())
}

// RunStreamTyped yields the run's events and decodes its answer; a type
// with no schema yields no events and says why; Result inside the range
// loop is refused.
func TestRunStreamTyped(t *testing.T) {
	model := looptest.Script(looptest.Calls(looptest.Call("a1", toolloop.DefaultOutputName, `{"answer":"yes","score":1}`)))
	s := toolloop.RunStreamTyped[scored](context.Background(), &toolloop.AgentLoop{Model: model}, user("go"))
	var types []toolloop.EventType
	for e := range s.Events() {
		types = append(types, e.Type)
		if e.Type == toolloop.EventRunStart {
			_, res, err := s.Result()
			assert.Error(t, err, "Result inside the range loop")
			assert.Nil(t, res)
		}
	}
	v, res, err := s.Result()
	require.NoError(t, err)
	assert.Equal(t, scored{Answer: "yes", Score: 1}, v)
	assert.Equal(t, 1, res.OutputCalls)
	assert.Contains(t, types, toolloop.EventRunEnd)

	bad := toolloop.RunStreamTyped[undescribedPage](context.Background(), &toolloop.AgentLoop{Model: model}, user("go"))
	for range bad.Events() {
		t.Fatal("a run that cannot start yielded an event")
	}
	_, res, err = bad.Result()
	assert.ErrorContains(t, err, "Items[].Done")
	assert.Nil(t, res)
}
