package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// offered lists the names of the tools a request offers.
func offered(req *toolloop.Request) []string { return specNames(req.Tools) }

// counted registers a tool of the given name that counts its runs.
func counted(t *testing.T, reg *toolloop.ToolRegistry, name, description string) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	require.NoError(t, reg.Register(toolloop.NewTool(name, description, func(context.Context, struct{}) (any, error) {
		n.Add(1)
		return name + " ok", nil
	})))
	return &n
}

func TestToolChoicePerRunAndWrapUp(t *testing.T) {
	var reg toolloop.ToolRegistry
	counted(t, &reg, "a", "tool a")
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "a", `{}`))},
		looptest.Turn{Reply: looptest.Text("wrapped up")})
	l := &toolloop.AgentLoop{Model: m, Tools: &reg,
		ToolChoice: toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "a"},
		Budget:     toolloop.Budget{WrapUp: true, MaxTurns: 1},
	}
	_, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.ErrorIs(t, err, toolloop.ErrBudget)
	reqs := m.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "a"}, reqs[0].ToolChoice)
	assert.Equal(t, toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}, reqs[1].ToolChoice, "the wrap-up turn forbids tools")
}

func TestModelHooks(t *testing.T) {
	var reg toolloop.ToolRegistry
	counted(t, &reg, "a", "tool a")
	counted(t, &reg, "b", "tool b")
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "a", `{}`))},
		looptest.Turn{Reply: looptest.Text("raw answer")})
	var seen []int
	l := &toolloop.AgentLoop{Model: m, Tools: &reg, Hooks: toolloop.Hooks{
		BeforeModel: []toolloop.BeforeModelHook{func(_ context.Context, turn *toolloop.ModelTurn) error {
			seen = append(seen, turn.Turn)
			if turn.Turn == 1 { // per turn: force a on the first, and send only it
				turn.Request.ToolChoice = toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "a"}
				turn.Request.Tools = turn.Request.Tools[:1]
			}
			return nil
		}},
		AfterModel: []toolloop.AfterModelHook{func(_ context.Context, turn *toolloop.ModelTurn, resp *toolloop.Response) (*toolloop.Response, error) {
			if turn.Turn == 2 {
				return looptest.Text("edited answer"), nil
			}
			return nil, nil
		}},
	}}
	res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	assert.Equal(t, "edited answer", res.FinalText)
	assert.Equal(t, []int{1, 2}, seen)
	reqs := m.Requests()
	assert.Equal(t, []string{"a"}, offered(reqs[0]))
	assert.Equal(t, toolloop.ToolChoiceRequired, reqs[0].ToolChoice.Mode)
	assert.Equal(t, []string{"a", "b"}, offered(reqs[1]), "the hook's edit does not last")
	assert.Equal(t, toolloop.ToolChoice{}, reqs[1].ToolChoice)
}

func TestModelHookErrors(t *testing.T) {
	bad := errors.New("not this")
	cases := map[string]toolloop.Hooks{
		"before fails": {BeforeModel: []toolloop.BeforeModelHook{func(context.Context, *toolloop.ModelTurn) error { return bad }}},
		"before panics": {BeforeModel: []toolloop.BeforeModelHook{func(context.Context, *toolloop.ModelTurn) error {
			panic("boom")
		}}},
		"before drops the request": {BeforeModel: []toolloop.BeforeModelHook{func(_ context.Context, turn *toolloop.ModelTurn) error {
			turn.Request = nil
			return nil
		}}},
		"after rejects": {AfterModel: []toolloop.AfterModelHook{func(context.Context, *toolloop.ModelTurn, *toolloop.Response) (*toolloop.Response, error) {
			return nil, bad
		}}},
		"after panics": {AfterModel: []toolloop.AfterModelHook{func(context.Context, *toolloop.ModelTurn, *toolloop.Response) (*toolloop.Response, error) {
			panic("boom")
		}}},
	}
	for name, hooks := range cases {
		t.Run(name, func(t *testing.T) {
			var reg toolloop.ToolRegistry
			n := counted(t, &reg, "a", "tool a")
			m := looptest.Script(looptest.Calls(looptest.Call("c1", "a", `{}`)))
			l := &toolloop.AgentLoop{Model: m, Tools: &reg, Hooks: hooks}
			res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
			require.Error(t, err)
			if name == "before fails" || name == "after rejects" {
				require.ErrorIs(t, err, bad)
			}
			assert.Equal(t, toolloop.StopError, res.StopReason)
			assert.Zero(t, n.Load(), "no call of a rejected turn runs")
			assert.Len(t, res.Messages, 1, "nothing was added to the transcript")
		})
	}
}

func TestToolFilter(t *testing.T) {
	var reg toolloop.ToolRegistry
	counted(t, &reg, "read", "reads")
	nw := counted(t, &reg, "write", "writes")
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "write", `{}`))},
		looptest.Turn{Reply: looptest.Text("done")})
	var states []int
	l := &toolloop.AgentLoop{Model: m, Tools: &reg, ToolFilter: func(st *toolloop.TurnState, ti *toolloop.ToolInfo) bool {
		if ti.Name == "read" {
			states = append(states, len(st.Messages))
		}
		// Write only once something was read; never on this run.
		return ti.Name == "read" && ti.Source == toolloop.SourceLocal
	}}
	res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	for _, r := range m.Requests() {
		assert.Equal(t, []string{"read"}, offered(r))
	}
	assert.Equal(t, []int{1, 3}, states, "the filter sees the transcript of each turn")
	assert.EqualValues(t, 1, nw.Load(), "a call to a tool left out still resolves; the guard decides what runs")
	assert.False(t, looptest.Results(res.Messages)["c1"].IsError())
}

func TestSelectors(t *testing.T) {
	ti := &toolloop.ToolInfo{ToolSpec: toolloop.ToolSpec{Name: "fetch", Annotations: toolloop.Annotations{ReadOnly: true}},
		Source: toolloop.SourceMCP, SourceName: "web"}
	assert.True(t, toolloop.SelectNames("x", "fetch")(ti))
	assert.False(t, toolloop.SelectNames("x")(ti))
	assert.True(t, toolloop.SelectSources("web")(ti))
	assert.True(t, toolloop.SelectSources("mcp")(ti))
	assert.False(t, toolloop.SelectSources("local")(ti))
	ro := toolloop.SelectAnnotations(func(a toolloop.Annotations) bool { return a.ReadOnly })
	assert.True(t, ro(ti))
	assert.False(t, ro.Not()(ti))
	assert.True(t, ro.Not().Or(toolloop.SelectNames("fetch"))(ti))
	assert.True(t, toolloop.Only(ro)(&toolloop.TurnState{}, ti))
}

// deferredRegistry has two plain tools and three deferred ones (the
// weather tools and send_email).
func deferredRegistry(t *testing.T) (*toolloop.ToolRegistry, map[string]*atomic.Int32) {
	var reg toolloop.ToolRegistry
	runs := map[string]*atomic.Int32{}
	for _, tl := range [][2]string{
		{"read_file", "Reads a file."},
		{"list_dir", "Lists a directory."},
		{"get_weather", "Gets the weather forecast for a city."},
		{"weather_alerts", "Lists severe weather alerts for a region."},
		{"send_email", "Sends an email to a recipient."},
	} {
		runs[tl[0]] = counted(t, &reg, tl[0], tl[1])
	}
	return &reg, runs
}

var deferredTools = toolloop.SelectNames("get_weather", "weather_alerts", "send_email")

func TestDeferredToolFoundBySearch(t *testing.T) {
	reg, runs := deferredRegistry(t)
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("s1", toolloop.ToolSearchName, `{"query":"weather forecast","max_results":1}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("w1", "get_weather", `{}`))},
		looptest.Turn{Reply: looptest.Text("sunny")})
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: reg, Deferred: deferredTools, OnEvent: rec.Record}
	res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("weather in Oslo?")})
	require.NoError(t, err)
	reqs := m.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"list_dir", "read_file", toolloop.ToolSearchName}, offered(reqs[0]))
	assert.Equal(t, []string{"get_weather", "list_dir", "read_file", toolloop.ToolSearchName}, offered(reqs[1]),
		"the tool the search found is sent from the next turn on")
	assert.Equal(t, offered(reqs[1]), offered(reqs[2]))

	found := looptest.Results(res.Messages)["s1"]
	require.False(t, found.IsError(), found.Text())
	assert.Equal(t, []string{"get_weather"}, found.Meta.LoadedTools)
	assert.Contains(t, found.Text(), "get_weather: Gets the weather forecast for a city.")
	w := looptest.Results(res.Messages)["w1"]
	assert.False(t, w.Meta.Unloaded)
	assert.EqualValues(t, 1, runs["get_weather"].Load())
	// The search call goes through the pipeline like any call.
	assert.Len(t, rec.ForCall("s1"), 2, "start and completion of the search")
}

func TestDeferredToolCalledUnloaded(t *testing.T) {
	reg, runs := deferredRegistry(t)
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("e1", "send_email", `{}`), looptest.Call("r1", "read_file", `{}`))},
		looptest.Turn{Reply: looptest.Text("sent")})
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: reg, Deferred: deferredTools, OnEvent: rec.Record}
	res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("mail bob")})
	require.NoError(t, err)
	e := looptest.Results(res.Messages)["e1"]
	require.False(t, e.IsError(), e.Text())
	assert.True(t, e.Meta.Unloaded, "a deferred tool called before it was loaded says so")
	assert.False(t, looptest.Results(res.Messages)["r1"].Meta.Unloaded)
	assert.EqualValues(t, 1, runs["send_email"].Load())
	var complete *toolloop.ToolResult
	for _, ev := range rec.ForCall("e1") {
		if ev.Type == toolloop.EventComplete {
			complete = ev.Result
		}
	}
	require.NotNil(t, complete)
	assert.True(t, complete.Meta.Unloaded, "and its completion event says so")
}

func TestToolSearchResults(t *testing.T) {
	reg, _ := deferredRegistry(t)
	l := &toolloop.AgentLoop{Model: looptest.Script(), Tools: reg, Deferred: deferredTools}
	search := func(args string) *toolloop.ToolResult {
		res, _ := l.RunCall(context.Background(), "run", 1, looptest.Call("s", toolloop.ToolSearchName, args), nil)
		return res
	}
	r := search(`{"query":"weather"}`)
	require.False(t, r.IsError(), r.Text())
	assert.Equal(t, []string{"get_weather", "weather_alerts"}, r.Meta.LoadedTools)
	r = search(`{"query":"send_email"}`)
	assert.Equal(t, []string{"send_email"}, r.Meta.LoadedTools, "an exact name comes first")
	r = search(`{"query":"read file"}`)
	assert.Empty(t, r.Meta.LoadedTools, "tools that are not deferred are never listed")
	assert.Contains(t, r.Text(), "No tool matches")
	r = search(`{"query":"email alerts","max_results":1}`)
	assert.Len(t, r.Meta.LoadedTools, 1)
	r = search(`{"max_results":1}`)
	require.True(t, r.IsError())
	assert.Equal(t, toolloop.KindInvalidArgs, r.Error.Kind)
	r = search(`{"query":"x","max_results":500}`)
	assert.Equal(t, toolloop.KindInvalidArgs, r.Error.Kind)
}

// nativeModel is a scripted model that takes output formats natively.
type nativeModel struct{ *looptest.Model }

func (nativeModel) NativeOutput(bool) bool { return true }

type verdict struct {
	Answer     string  `json:"answer"`
	Confidence float64 `json:"confidence" jsonschema:"minimum=0,maximum=1"`
}

func TestRunTypedNative(t *testing.T) {
	valid := `{"answer":"yes","confidence":0.9}`
	cases := []struct {
		name    string
		replies []string
		want    *verdict
		invalid int
	}{
		{"valid at once", []string{valid}, &verdict{"yes", 0.9}, 0},
		{"fenced", []string{"```json\n" + valid + "\n```"}, &verdict{"yes", 0.9}, 0},
		{"fixed after an error", []string{`{"answer":"yes","confidence":7}`, valid}, &verdict{"yes", 0.9}, 1},
		{"never valid", []string{`not json`, `{"answer":1}`, `{}`}, nil, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var turns []looptest.Turn
			for _, r := range c.replies {
				turns = append(turns, looptest.Turn{Reply: looptest.Text(r)})
			}
			m := nativeModel{looptest.NewModel(t, turns...)}
			rec := &looptest.Recorder{}
			l := &toolloop.AgentLoop{Model: m, OnEvent: rec.Record}
			v, res, err := toolloop.RunTyped[verdict](context.Background(), l, []toolloop.Message{toolloop.UserMessage("judge")})
			reqs := m.Requests()
			require.NotEmpty(t, reqs)
			require.NotNil(t, reqs[0].Output, "sent as native structured output")
			assert.Equal(t, toolloop.DefaultOutputName, reqs[0].Output.Name)
			assert.Contains(t, string(reqs[0].Output.Schema), `"confidence"`)
			assert.Empty(t, reqs[0].Tools)
			assert.Len(t, rec.Of(toolloop.EventOutputInvalid), c.invalid)
			if c.want == nil {
				var oe *toolloop.OutputError
				require.ErrorAs(t, err, &oe)
				require.ErrorIs(t, err, toolloop.ErrOutput)
				assert.Equal(t, 3, oe.Attempts)
				assert.Equal(t, `{}`, oe.Answer)
				assert.Contains(t, oe.Reason, "answer")
				assert.Equal(t, toolloop.StopError, res.StopReason)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, *c.want, v)
			assert.JSONEq(t, valid, string(res.Output))
			if c.invalid > 0 {
				// The model was told what was wrong, in the transcript.
				last := reqs[len(reqs)-1].Messages
				feedback := last[len(last)-1]
				assert.Equal(t, toolloop.RoleUser, feedback.Role)
				assert.Contains(t, feedback.Text(), "does not match the required JSON schema")
				assert.Contains(t, feedback.Text(), "confidence")
				assert.Len(t, rec.Of(toolloop.EventTranscriptEdited), c.invalid, "so replay sees it")
			}
		})
	}
}

func TestRunTypedThroughTool(t *testing.T) {
	var reg toolloop.ToolRegistry
	n := counted(t, &reg, "lookup", "looks things up")
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Text("I think yes")}, // text is not accepted
		looptest.Turn{Reply: looptest.Calls(looptest.Call("l1", "lookup", `{}`), looptest.Call("f1", "final_answer", `{"answer":"yes"}`))},
		looptest.Turn{Reply: looptest.Calls(looptest.Call("f2", "final_answer", `{"answer":"yes","confidence":1}`))})
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{Model: m, Tools: &reg, OnEvent: rec.Record}
	v, res, err := toolloop.RunTyped[verdict](context.Background(), l, []toolloop.Message{toolloop.UserMessage("judge")})
	require.NoError(t, err)
	assert.Equal(t, verdict{"yes", 1}, v)
	assert.Equal(t, toolloop.StopEnd, res.StopReason)
	assert.JSONEq(t, `{"answer":"yes","confidence":1}`, res.FinalText)
	assert.EqualValues(t, 1, n.Load())
	reqs := m.Requests()
	require.Len(t, reqs, 3)
	assert.Nil(t, reqs[0].Output)
	assert.Equal(t, []string{"lookup", "final_answer"}, offered(reqs[0]))
	assert.Equal(t, toolloop.ToolChoice{}, reqs[0].ToolChoice, "other tools: the model may still use them")
	f1 := looptest.Results(res.Messages)["f1"]
	require.True(t, f1.IsError())
	assert.Equal(t, toolloop.KindInvalidArgs, f1.Error.Kind)
	assert.Contains(t, f1.Text(), "confidence", "the validator's message reaches the model")
	assert.Len(t, rec.Of(toolloop.EventOutputInvalid), 2)
	looptest.AssertValid(t, res.Messages)
}

func TestRunTypedToolOnly(t *testing.T) {
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("f1", "final_answer", `{"answer":"no","confidence":0}`))})
	v, _, err := toolloop.RunTyped[verdict](context.Background(), &toolloop.AgentLoop{Model: m}, []toolloop.Message{toolloop.UserMessage("judge")})
	require.NoError(t, err)
	assert.Equal(t, verdict{"no", 0}, v)
	req := m.Requests()[0]
	assert.Equal(t, []string{"final_answer"}, offered(req))
	assert.Equal(t, toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "final_answer"}, req.ToolChoice,
		"with nothing else to call, the answer is required")
}

func TestRunTypedBadType(t *testing.T) {
	_, res, err := toolloop.RunTyped[string](context.Background(), &toolloop.AgentLoop{Model: looptest.Script()}, nil)
	require.Error(t, err)
	assert.Nil(t, res)
	l := &toolloop.AgentLoop{Model: looptest.Script(), Output: &toolloop.OutputFormat{Name: "bad name", Schema: json.RawMessage(`{"type":"object"}`)}}
	_, err = l.Run(context.Background(), nil)
	require.ErrorContains(t, err, "bad name")
	l.Output = &toolloop.OutputFormat{Schema: json.RawMessage(`{"type":"string"}`)}
	_, err = l.Run(context.Background(), nil)
	require.Error(t, err)
}

func TestOutputRetriesOff(t *testing.T) {
	m := nativeModel{looptest.NewModel(t, looptest.Turn{Reply: looptest.Text(`nope`)})}
	l := &toolloop.AgentLoop{Model: m, Budget: toolloop.Budget{MaxOutputRetries: -1}}
	_, _, err := toolloop.RunTyped[verdict](context.Background(), l, nil)
	var oe *toolloop.OutputError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, 1, oe.Attempts)
}

func TestTurnProcessorSynthesizes(t *testing.T) {
	var reg toolloop.ToolRegistry
	runs := map[string]*atomic.Int32{}
	for _, n := range []string{"a", "b", "c"} {
		runs[n] = counted(t, &reg, n, "tool "+n)
	}
	m := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "a", `{}`), looptest.Call("c2", "b", `{}`), looptest.Call("c3", "c", `{}`))},
		looptest.Turn{Reply: looptest.Text("done")})
	rec := &looptest.Recorder{}
	var batches []int
	l := &toolloop.AgentLoop{Model: m, Tools: &reg, OnEvent: rec.Record, TurnProcessors: []toolloop.TurnProcessor{
		func(_ context.Context, b *toolloop.TurnBatch) (toolloop.TurnDecision, error) {
			batches = append(batches, len(b.Calls))
			return toolloop.TurnDecision{Results: map[string]*toolloop.ToolResult{
				"c2":      {Content: []toolloop.Content{toolloop.TextContent("b, from the cache")}},
				"missing": {},
			}}, nil
		},
		func(_ context.Context, b *toolloop.TurnBatch) (toolloop.TurnDecision, error) {
			batches = append(batches, len(b.Calls))
			return toolloop.TurnDecision{}, errors.New("this one fails, and is ignored")
		},
		func(context.Context, *toolloop.TurnBatch) (toolloop.TurnDecision, error) { panic("so is this") },
	}}
	res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, batches, "a later processor sees only the calls left to run")
	got := looptest.Results(res.Messages)
	assert.True(t, got["c2"].Meta.Synthesized)
	assert.Equal(t, "b, from the cache", got["c2"].Text())
	assert.Equal(t, "b", got["c2"].Name)
	assert.False(t, got["c1"].Meta.Synthesized)
	assert.EqualValues(t, 1, runs["a"].Load())
	assert.Zero(t, runs["b"].Load())
	assert.EqualValues(t, 1, runs["c"].Load())
	assert.Equal(t, 2, res.ToolCalls, "a synthesized call is not counted as run")
	for _, id := range []string{"c1", "c2", "c3"} {
		n := 0
		for _, e := range rec.ForCall(id) {
			if e.Type == toolloop.EventComplete {
				n++
			}
		}
		assert.Equal(t, 1, n, "one completion for %s", id)
	}
	looptest.AssertValid(t, res.Messages)
}

func TestTurnProcessorSendsBack(t *testing.T) {
	for _, forever := range []bool{false, true} {
		t.Run(fmt.Sprint("forever=", forever), func(t *testing.T) {
			var reg toolloop.ToolRegistry
			n := counted(t, &reg, "rm", "removes")
			turns := []looptest.Turn{{Reply: looptest.Calls(looptest.Call("c1", "rm", `{}`), looptest.Call("c2", "rm", `{}`)), Times: 3}}
			if !forever {
				turns = []looptest.Turn{
					{Reply: looptest.Calls(looptest.Call("c1", "rm", `{}`), looptest.Call("c2", "rm", `{}`))},
					{Reply: looptest.Calls(looptest.Call("c3", "rm", `{}`))},
					{Reply: looptest.Text("done")},
				}
			}
			m := looptest.NewModel(t, turns...)
			rec := &looptest.Recorder{}
			var retries []int
			l := &toolloop.AgentLoop{Model: m, Tools: &reg, OnEvent: rec.Record, TurnProcessors: []toolloop.TurnProcessor{
				func(_ context.Context, b *toolloop.TurnBatch) (toolloop.TurnDecision, error) {
					retries = append(retries, b.Retries)
					if len(b.Calls) > 1 {
						return toolloop.TurnDecision{SendBack: "remove one file per turn"}, nil
					}
					return toolloop.TurnDecision{}, nil
				},
			}}
			res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("clean up")})
			looptest.AssertValid(t, res.Messages)
			if forever {
				require.ErrorIs(t, err, toolloop.ErrBudget)
				assert.Zero(t, n.Load())
				assert.Equal(t, []int{0, 1, 2}, retries)
				assert.Len(t, rec.Of(toolloop.EventTurnSentBack), 3)
				assert.Zero(t, res.ToolCalls)
				return
			}
			require.NoError(t, err)
			assert.EqualValues(t, 1, n.Load(), "only the call of the turn taken again ran")
			assert.Equal(t, []int{0, 1}, retries)
			c1 := looptest.Results(res.Messages)["c1"]
			require.True(t, c1.IsError())
			assert.Equal(t, toolloop.KindCanceled, c1.Error.Kind)
			assert.Contains(t, c1.Text(), "remove one file per turn")
			sent := rec.Of(toolloop.EventTurnSentBack)
			require.Len(t, sent, 1)
			assert.Equal(t, "remove one file per turn", sent[0].Error)
			assert.Equal(t, 1, res.ToolCalls)
		})
	}
}

func TestRunTypedRefusal(t *testing.T) {
	m := nativeModel{looptest.NewModel(t, looptest.Turn{Reply: &toolloop.Response{
		Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("I can't help with that.")}}, StopReason: toolloop.StopRefusal}})}
	_, res, err := toolloop.RunTyped[verdict](context.Background(), &toolloop.AgentLoop{Model: m}, nil)
	require.ErrorIs(t, err, toolloop.ErrOutput)
	assert.Contains(t, err.Error(), "refused")
	assert.Equal(t, toolloop.StopRefusal, res.StopReason)
}
