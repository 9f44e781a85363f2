package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func TestPriceCost(t *testing.T) {
	p := toolloop.Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}
	u := toolloop.Usage{InputTokens: 1_000_000, CacheReadTokens: 600_000, CacheWriteTokens: 100_000,
		OutputTokens: 200_000, ReasoningTokens: 50_000}
	// 300k plain input at 3, 600k reads at 0.30, 100k writes at 3.75,
	// 200k output (reasoning included) at 15.
	assert.InDelta(t, 0.9+0.18+0.375+3.0, p.Cost(u), 1e-9)

	p.Reasoning = 30
	assert.InDelta(t, 0.9+0.18+0.375+150_000*15/1e6+50_000*30/1e6, p.Cost(u), 1e-9)

	// No cache prices: cached tokens cost what input costs.
	plain := toolloop.Price{Input: 2, Output: 8}
	assert.InDelta(t, 2.0+0.8, plain.Cost(toolloop.Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000, OutputTokens: 100_000}), 1e-9)
	assert.Zero(t, plain.Cost(toolloop.Usage{}))
}

func TestModelsLookup(t *testing.T) {
	for _, tt := range []struct {
		name   string
		window int
		ok     bool
	}{
		{"gpt-4.1", 1_047_576, true},
		{"gpt-4.1-2025-04-14", 1_047_576, true},
		{"gpt-4.1-mini-2025-04-14", 1_047_576, true},
		{"openai/gpt-4o-mini", 128_000, true},
		{"claude-sonnet-4-5-20250929", 200_000, true},
		{"claude-opus-4-1@20250805", 200_000, true},
		{"models/gemini-2.5-flash", 1_048_576, true},
		{"gpt-4.10", 0, false}, // not a suffix of gpt-4.1
		{"o3x", 0, false},
		{"", 0, false},
		{"llama-3-70b", 0, false},
	} {
		info, ok := toolloop.LookupModel(tt.name)
		assert.Equal(t, tt.ok, ok, tt.name)
		assert.Equal(t, tt.window, info.ContextWindow, tt.name)
	}
	mini, _ := toolloop.LookupModel("gpt-4.1-mini-2025-04-14")
	full, _ := toolloop.LookupModel("gpt-4.1")
	assert.Less(t, mini.Price.Input, full.Price.Input, "the longest name wins")

	// The loop's own table comes first, and may name the scripted model.
	l := &toolloop.AgentLoop{ModelTable: toolloop.ModelTable{"": {ContextWindow: 10}, "gpt-4.1": {ContextWindow: 5}}}
	info, ok := l.ModelInfo("gpt-4.1-2025-04-14")
	assert.True(t, ok)
	assert.Equal(t, 5, info.ContextWindow)
	info, _ = l.ModelInfo("")
	assert.Equal(t, 10, info.ContextWindow)
	info, _ = l.ModelInfo("claude-haiku-4-5")
	assert.Equal(t, 200_000, info.ContextWindow, "the built-in table fills in")
}

func TestEstimateTokens(t *testing.T) {
	assert.Zero(t, toolloop.EstimateTokens(nil))
	text := strings.Repeat("word ", 800) // 4,000 bytes
	n := toolloop.EstimateTokens([]toolloop.Message{toolloop.UserMessage(text)})
	assert.InDelta(t, 1000, n, 10)
	img := toolloop.Message{Role: toolloop.RoleUser, Content: []toolloop.Content{toolloop.ImageContent("image/png", make([]byte, 1<<20))}}
	assert.InDelta(t, 1500, toolloop.EstimateTokens([]toolloop.Message{img}), 10, "an image costs tokens, not bytes")
	call := toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{looptest.Call("c", "read", `{"path":"`+strings.Repeat("x", 400)+`"}`)}}
	res := toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c", Name: "read", Content: []toolloop.Content{toolloop.TextContent(text)}})
	assert.Greater(t, toolloop.EstimateTokens([]toolloop.Message{call}), 100)
	assert.InDelta(t, 1000, toolloop.EstimateTokens([]toolloop.Message{res}), 10)
	r := toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
		toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "openai.responses", Encrypted: strings.Repeat("e", 4000)})}}
	assert.InDelta(t, 1000, toolloop.EstimateTokens([]toolloop.Message{r}), 10, "encrypted reasoning is sent back, so it counts")
}

func TestBudgetCheck(t *testing.T) {
	u := toolloop.Usage{InputTokens: 100, OutputTokens: 50}
	st := toolloop.RunStatus{Turns: 2, Usage: u, Cost: 1.5, ToolCalls: 4, Elapsed: time.Minute}
	for _, tt := range []struct {
		name   string
		budget toolloop.Budget
		want   toolloop.Limit
	}{
		{"nothing", toolloop.Budget{}, ""},
		{"under every limit", toolloop.Budget{MaxInputTokens: 101, MaxOutputTokens: 51, MaxTotalTokens: 151, MaxCost: 2,
			MaxDuration: 2 * time.Minute, MaxToolCalls: 5}, ""},
		{"input", toolloop.Budget{MaxInputTokens: 100}, toolloop.LimitInputTokens},
		{"output", toolloop.Budget{MaxOutputTokens: 50}, toolloop.LimitOutputTokens},
		{"total", toolloop.Budget{MaxTotalTokens: 150}, toolloop.LimitTotalTokens},
		{"cost", toolloop.Budget{MaxCost: 1.5}, toolloop.LimitCost},
		{"duration", toolloop.Budget{MaxDuration: time.Minute}, toolloop.LimitDuration},
		{"tool calls", toolloop.Budget{MaxToolCalls: 4}, toolloop.LimitToolCalls},
		{"stop when", toolloop.Budget{StopWhen: func(s toolloop.RunStatus) bool { return s.ToolCalls > 3 }}, toolloop.LimitStopWhen},
		{"stop when not yet", toolloop.Budget{StopWhen: func(s toolloop.RunStatus) bool { return s.ToolCalls > 4 }}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			be := tt.budget.Check(st)
			if tt.want == "" {
				assert.Nil(t, be)
				return
			}
			require.NotNil(t, be)
			assert.Equal(t, tt.want, be.Limit)
			assert.ErrorIs(t, be, toolloop.ErrBudget)
			assert.NotEmpty(t, be.Error())
		})
	}
	// StopWhen is not asked before the first turn.
	b := toolloop.Budget{StopWhen: func(toolloop.RunStatus) bool { return true }}
	assert.Nil(t, b.Check(toolloop.RunStatus{}))
}

func TestCheckFailures(t *testing.T) {
	ok := &toolloop.ToolResult{CallID: "ok", Status: toolloop.StatusOK}
	fail := func(id string, kind toolloop.ErrorKind) *toolloop.ToolResult {
		return &toolloop.ToolResult{CallID: id, Name: "t", Status: toolloop.StatusError, Error: &toolloop.ToolError{Kind: kind}}
	}
	cause := func(be *toolloop.BudgetError) *toolloop.FailureError {
		t.Helper()
		require.NotNil(t, be)
		assert.Equal(t, toolloop.LimitFailures, be.Limit)
		fe, ok := errors.AsType[*toolloop.FailureError](be)
		require.True(t, ok, "the failure is the cause")
		return fe
	}
	var zero toolloop.Budget
	n, be := zero.CheckFailures(0, []*toolloop.ToolResult{fail("a", toolloop.KindPanic), fail("b", toolloop.KindTimeout)})
	assert.Equal(t, 2, n)
	assert.Nil(t, be, "the zero budget never stops on failures")

	b := toolloop.Budget{MaxConsecutiveFailures: 3}
	n, be = b.CheckFailures(1, []*toolloop.ToolResult{fail("a", toolloop.KindNotFound), ok, fail("b", toolloop.KindNotFound)})
	assert.Equal(t, 1, n, "a success resets the count")
	assert.Nil(t, be)
	n, be = b.CheckFailures(n, []*toolloop.ToolResult{fail("c", toolloop.KindInvalidArgs), fail("d", toolloop.KindDenied), nil})
	assert.Equal(t, 3, n)
	fe := cause(be)
	assert.Equal(t, "d", fe.CallID)
	assert.Equal(t, 3, fe.Consecutive)
	assert.False(t, fe.StopOn)
	assert.ErrorIs(t, be, toolloop.ErrBudget)

	b = toolloop.Budget{StopOnFailure: []toolloop.ErrorKind{toolloop.KindTimeout}}
	_, be = b.CheckFailures(0, []*toolloop.ToolResult{fail("a", toolloop.KindPanic), fail("b", toolloop.KindTimeout), fail("c", toolloop.KindTimeout)})
	fe = cause(be)
	assert.Equal(t, "b", fe.CallID, "the first failure of a listed kind stops")
	assert.True(t, fe.StopOn)
}

// TestMaxDuration: the budget's deadline cancels a model turn that will
// not end; the run ends with the duration limit, not a cancellation, and
// the wrap-up turn still runs.
func TestMaxDuration(t *testing.T) {
	for _, wrapUp := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "wrap-up"}[wrapUp], func(t *testing.T) {
			turn := 0
			model := toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
				turn++
				if turn == 1 {
					return looptest.Calls(looptest.Call("c1", "hang", `{}`)), nil
				}
				if req.ToolChoice.Mode == toolloop.ToolChoiceNone {
					return looptest.Text("out of time"), nil
				}
				<-ctx.Done()
				return nil, ctx.Err()
			})
			reg := &toolloop.ToolRegistry{}
			reg.MustRegister(toolloop.NewTool("hang", "Never ends.", func(ctx context.Context, _ struct{}) (any, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}))
			loop := &toolloop.AgentLoop{Model: model, Tools: reg,
				Budget: toolloop.Budget{MaxDuration: 80 * time.Millisecond, WrapUp: wrapUp}}
			res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
			var be *toolloop.BudgetError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, toolloop.LimitDuration, be.Limit)
			assert.NotErrorIs(t, err, context.DeadlineExceeded, "the limit, not the context, is the error")
			looptest.AssertValid(t, res.Messages)
			r := looptest.Results(res.Messages)["c1"]
			require.NotNil(t, r)
			assert.Equal(t, toolloop.KindCanceled, r.Error.Kind, "the running call is answered")
			if wrapUp {
				assert.Equal(t, "out of time", res.FinalText)
			}
		})
	}
}

// TestMaxCostNeedsPrices: a cost limit with a model of unknown price stops
// at once rather than spend without counting.
func TestMaxCostNeedsPrices(t *testing.T) {
	reply := looptest.Calls(looptest.Call("c1", "noop", `{}`))
	reply.Usage = toolloop.Usage{InputTokens: 10, OutputTokens: 5}
	reply.Model = "my-local-model"
	reg := &toolloop.ToolRegistry{}
	ran := false
	reg.MustRegister(toolloop.NewTool("noop", "Nothing.", func(context.Context, struct{}) (any, error) { ran = true; return "ok", nil }))
	loop := &toolloop.AgentLoop{Model: looptest.Script(reply), Tools: reg, Budget: toolloop.Budget{MaxCost: 1}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.ErrorIs(t, err, toolloop.ErrUnknownPrice)
	assert.Contains(t, err.Error(), "my-local-model")
	assert.False(t, ran)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, 1, res.UnpricedTurns)

	// With its price given, the same run is counted.
	loop.Model = looptest.Script(reply, looptest.Text("done"))
	loop.ModelTable = toolloop.ModelTable{"my-local-model": {Price: &toolloop.Price{Input: 1, Output: 2}}}
	res, err = loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	assert.InDelta(t, 20e-6, res.Cost, 1e-12)
}

// TestBudgetAcrossPause: a paused run carries its accounting into Resume,
// which goes on counting against the same budget.
func TestBudgetAcrossPause(t *testing.T) {
	calls := func(ids ...string) *toolloop.Response {
		var cs []toolloop.ToolCall
		for _, id := range ids {
			cs = append(cs, looptest.Call(id, "write_file", `{"path":"a","content":"b"}`))
		}
		r := looptest.Calls(cs...)
		r.Usage = toolloop.Usage{InputTokens: 10, OutputTokens: 10}
		return r
	}
	model := looptest.Script(calls("c1", "c2"), calls("c3", "c4"), looptest.Text("unreachable"))
	loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), Guard: destructiveAsks, PauseForApproval: true,
		Budget: toolloop.Budget{MaxToolCalls: 3}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("write")})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	assert.Equal(t, 2, res.Paused.ToolCalls)
	b, err := json.Marshal(res.Paused)
	require.NoError(t, err)
	var st toolloop.PauseState
	require.NoError(t, json.Unmarshal(b, &st))
	assert.Equal(t, res.Paused.Accounting, st.Accounting, "accounting survives JSON")

	yes := toolloop.Approval{Approved: true}
	res, err = loop.Resume(context.Background(), &st, map[string]toolloop.Approval{"c1": yes, "c2": yes})
	// Turn 2 asks again for c3 (c4 is over the budget and not run).
	require.ErrorIs(t, err, toolloop.ErrPaused)
	assert.Equal(t, 3, res.Paused.ToolCalls)
	res, err = loop.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c3": yes})
	var be *toolloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, toolloop.LimitToolCalls, be.Limit)
	assert.Equal(t, toolloop.Usage{InputTokens: 20, OutputTokens: 20}, res.Usage)
	r := looptest.Results(res.Messages)["c4"]
	require.NotNil(t, r)
	assert.Contains(t, r.Text(), "budget allows 3 tool calls")
}

// TestWrapUpFailure: a wrap-up turn that fails leaves both errors
// reachable, and the transcript valid.
func TestWrapUpFailure(t *testing.T) {
	boom := errors.New("provider down")
	first := looptest.Calls(looptest.Call("c1", "add", `{"a":1,"b":2}`))
	first.Usage = toolloop.Usage{OutputTokens: 100}
	model := looptest.NewModel(t, looptest.Turn{Reply: first}, looptest.Turn{Err: boom})
	loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools(),
		Budget: toolloop.Budget{MaxOutputTokens: 50, WrapUp: true, WrapUpPrompt: "Stop now (%s)."}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("add")})
	require.ErrorIs(t, err, toolloop.ErrBudget)
	require.ErrorIs(t, err, boom)
	looptest.AssertValid(t, res.Messages)
	last := res.Messages[len(res.Messages)-1]
	assert.Equal(t, toolloop.RoleUser, last.Role)
	assert.Equal(t, "Stop now (output-token limit: 100 of 50).", last.Text())
}

// TestStopWhenPanics: a panicking StopWhen stops the run; it does not
// crash the program.
func TestStopWhenPanics(t *testing.T) {
	model := looptest.Script(looptest.Calls(looptest.Call("c1", "add", `{"a":1,"b":2}`)), looptest.Text("never"))
	loop := &toolloop.AgentLoop{Model: model, Tools: goldenTools(),
		Budget: toolloop.Budget{StopWhen: func(toolloop.RunStatus) bool { panic("bug") }}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("add")})
	var be *toolloop.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, toolloop.LimitStopWhen, be.Limit)
	looptest.AssertValid(t, res.Messages)
}

// TestEveryLimit: each limit of the Budget ends a run with a *BudgetError
// that names it, errors.Is(err, ErrBudget) for all, with the cause where
// there is one.
func TestEveryLimit(t *testing.T) {
	add := func(id string) *toolloop.Response {
		r := looptest.Calls(looptest.Call(id, "add", `{"a":1,"b":2}`))
		r.Usage = toolloop.Usage{InputTokens: 100, OutputTokens: 40}
		r.Model = "priced"
		return r
	}
	fail := func(id string) *toolloop.Response { return looptest.Calls(looptest.Call(id, "nope", `{}`)) }
	tests := []struct {
		limit  toolloop.Limit
		loop   toolloop.AgentLoop
		script []*toolloop.Response
		cause  any // a pointer to the cause's type, or nil
	}{
		{toolloop.LimitTurns, toolloop.AgentLoop{Budget: toolloop.Budget{MaxTurns: 2}},
			[]*toolloop.Response{add("c1"), add("c2")}, nil},
		{toolloop.LimitInputTokens, toolloop.AgentLoop{Budget: toolloop.Budget{MaxInputTokens: 150}},
			[]*toolloop.Response{add("c1"), add("c2")}, nil},
		{toolloop.LimitOutputTokens, toolloop.AgentLoop{Budget: toolloop.Budget{MaxOutputTokens: 40}},
			[]*toolloop.Response{add("c1")}, nil},
		{toolloop.LimitTotalTokens, toolloop.AgentLoop{Budget: toolloop.Budget{MaxTotalTokens: 200}},
			[]*toolloop.Response{add("c1"), add("c2")}, nil},
		{toolloop.LimitCost, toolloop.AgentLoop{Budget: toolloop.Budget{MaxCost: 0.0001},
			ModelTable: toolloop.ModelTable{"priced": {Price: &toolloop.Price{Input: 1, Output: 2}}}},
			[]*toolloop.Response{add("c1")}, nil},
		{toolloop.LimitDuration, toolloop.AgentLoop{Budget: toolloop.Budget{MaxDuration: 50 * time.Millisecond}},
			[]*toolloop.Response{looptest.Calls(looptest.Call("h1", "hang", `{}`))}, nil},
		{toolloop.LimitToolCalls, toolloop.AgentLoop{Budget: toolloop.Budget{MaxToolCalls: 1}},
			[]*toolloop.Response{add("c1")}, nil},
		{toolloop.LimitOutputRetries, toolloop.AgentLoop{Budget: toolloop.Budget{MaxOutputRetries: 1},
			Output: &toolloop.OutputFormat{Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}},
			[]*toolloop.Response{looptest.Calls(looptest.Call("a1", "final_answer", `{}`)), looptest.Calls(looptest.Call("a2", "final_answer", `{}`))},
			new(*toolloop.OutputError)},
		{toolloop.LimitSendBacks, toolloop.AgentLoop{Budget: toolloop.Budget{MaxSendBacks: 1},
			TurnProcessors: []toolloop.TurnProcessor{func(context.Context, *toolloop.TurnBatch) (toolloop.TurnDecision, error) {
				return toolloop.TurnDecision{SendBack: "plan first"}, nil
			}}},
			[]*toolloop.Response{add("c1"), add("c2")}, nil},
		{toolloop.LimitFailures, toolloop.AgentLoop{Budget: toolloop.Budget{MaxConsecutiveFailures: 2}},
			[]*toolloop.Response{fail("f1"), fail("f2")}, new(*toolloop.FailureError)},
		{toolloop.LimitStopWhen, toolloop.AgentLoop{Budget: toolloop.Budget{StopWhen: func(st toolloop.RunStatus) bool { return st.Turns >= 1 }}},
			[]*toolloop.Response{add("c1")}, nil},
	}
	seen := map[toolloop.Limit]bool{}
	for _, tt := range tests {
		t.Run(string(tt.limit), func(t *testing.T) {
			l := tt.loop
			l.Model = looptest.Script(tt.script...)
			l.Tools = goldenTools() // add, and hang, which waits for its context
			res, err := l.Run(context.Background(), user("go"))
			require.ErrorIs(t, err, toolloop.ErrBudget)
			be, ok := errors.AsType[*toolloop.BudgetError](err)
			require.True(t, ok, "the error is a *BudgetError: %v", err)
			assert.Equal(t, tt.limit, be.Limit, "the error says which limit: %v", err)
			assert.Contains(t, err.Error(), "the run reached its")
			if tt.cause != nil {
				assert.True(t, errors.As(err, tt.cause), "errors.As reaches the cause %T", tt.cause)
			}
			looptest.AssertValid(t, res.Messages)
			seen[be.Limit] = true
		})
	}
	assert.Len(t, seen, 11, "one case per limit")
}
