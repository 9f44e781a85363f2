package eventlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

func withUsage(r *toolloop.Response, in, out int64) *toolloop.Response {
	r.Usage = toolloop.Usage{InputTokens: in, OutputTokens: out}
	r.Model = "scripted-1"
	return r
}

// twoTurns is a script: two calls in one turn (one fails), one in the
// next, then an answer.
func twoTurns(t *testing.T) *looptest.Model {
	return looptest.NewModel(t,
		looptest.Turn{Reply: withUsage(looptest.Calls(
			looptest.Call("call_1", "echo", `{"text":"a"}`),
			looptest.Call("call_2", "fail", `{"text":"b"}`)), 10, 2)},
		looptest.Turn{Reply: withUsage(looptest.Calls(looptest.Call("call_3", "echo", `{"text":"c"}`)), 20, 3)},
		looptest.Turn{Reply: withUsage(looptest.Text("done"), 30, 4)},
	)
}

func TestReplayRoundTrip(t *testing.T) {
	for _, opts := range []eventlog.Options{{}, {DropTransient: true}, {NoSync: true, BufferSize: 16}} {
		var buf bytes.Buffer
		w := eventlog.NewWriter(&buf, opts)
		c := new(counter)
		loop := &toolloop.AgentLoop{Model: twoTurns(t), Tools: registry(c), OnEvent: w.Record}
		res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
		require.NoError(t, err)
		require.NoError(t, w.Close())

		rp, err := eventlog.Read(&buf)
		require.NoError(t, err)
		looptest.AssertTranscript(t, res.Messages, rp.Transcript())
		assert.Equal(t, map[string]bool{"call_1": true, "call_2": true, "call_3": true}, rp.Completed)
		durations := map[string]int64{}
		for _, m := range res.Messages {
			if m.Result != nil {
				durations[m.Result.Name] += int64(m.Result.Meta.Duration)
			}
		}
		assert.Equal(t, map[string]eventlog.ToolSummary{
			"echo": {Calls: 2, Duration: rp.Tools["echo"].Duration},
			"fail": {Calls: 1, Errors: 1, Kinds: map[toolloop.ErrorKind]int{toolloop.KindExecutionFailed: 1}, Duration: rp.Tools["fail"].Duration},
		}, rp.Tools)
		assert.Equal(t, durations["echo"], int64(rp.Tools["echo"].Duration))
		assert.Equal(t, durations["fail"], int64(rp.Tools["fail"].Duration))
		assert.Equal(t, res.Usage, rp.Usage)
		assert.Equal(t, res.RunID, rp.RunID)
		assert.True(t, rp.Ended)
		assert.Equal(t, toolloop.StopEnd, rp.StopReason)
		assert.Empty(t, rp.Error)
		assert.Nil(t, rp.Paused)
		assert.False(t, rp.Torn)
	}
}

func TestReplayFollowUpRun(t *testing.T) {
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{})
	c := new(counter)
	loop := &toolloop.AgentLoop{Model: twoTurns(t), Tools: registry(c), OnEvent: w.Record}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)

	loop.Model = looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_4", "echo", `{"text":"d"}`))},
		looptest.Turn{Reply: looptest.Text("again")})
	res2, err := loop.Run(context.Background(), append(res.Messages, toolloop.UserMessage("once more")))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	rp, err := eventlog.Read(&buf)
	require.NoError(t, err)
	looptest.AssertTranscript(t, res2.Messages, rp.Transcript())
	assert.Len(t, rp.Completed, 4)
	assert.Equal(t, 3, rp.Tools["echo"].Calls)
	assert.Equal(t, res2.RunID, rp.RunID)
}

func TestReplayPauseAndResume(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approve", false: "deny"}[approve], func(t *testing.T) {
			var buf bytes.Buffer
			w := eventlog.NewWriter(&buf, eventlog.Options{})
			c := new(counter)
			guard := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "ask-destructive", Destructive: true, Decision: toolloop.Ask, Reason: "it deletes"}}}
			model := looptest.NewModel(t,
				looptest.Turn{Reply: withUsage(looptest.Calls(
					looptest.Call("call_1", "echo", `{"text":"a"}`),
					looptest.Call("call_2", "rm", `{"text":"f"}`)), 5, 1)},
				looptest.Turn{Reply: looptest.Text("done")})
			loop := &toolloop.AgentLoop{Model: model, Tools: registry(c), Guard: guard, PauseForApproval: true, OnEvent: w.Record}
			res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("clean up")})
			require.ErrorIs(t, err, toolloop.ErrPaused)

			rp, err := eventlog.Read(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			require.NotNil(t, rp.Paused)
			assert.Equal(t, looptest.Canonical(res.Paused), looptest.Canonical(rp.Paused))
			assert.True(t, rp.Ended)

			// Another process resumes from the log alone.
			loop2 := &toolloop.AgentLoop{Model: model, Tools: registry(c), Guard: guard, PauseForApproval: true, OnEvent: w.Record}
			res2, err := loop2.Resume(context.Background(), rp.Paused, map[string]toolloop.Approval{"call_2": {Approved: approve, Reason: "ok"}})
			require.NoError(t, err)
			require.NoError(t, w.Close())

			rp, err = eventlog.Read(&buf)
			require.NoError(t, err)
			looptest.AssertTranscript(t, res2.Messages, rp.Transcript())
			assert.Nil(t, rp.Paused)
			assert.True(t, rp.Ended)
			assert.Equal(t, 1, c.get("echo"))
			assert.Equal(t, map[bool]int{true: 1, false: 0}[approve], c.get("rm"))
			assert.True(t, rp.Completed["call_2"])
		})
	}
}

// cut returns the log up to, not including, the first event for which stop
// is true: what a crash at that moment leaves.
func cut(t *testing.T, log []byte, stop func(toolloop.Event) bool) []byte {
	var out bytes.Buffer
	lines := strings.SplitAfter(string(log), "\n")
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var e toolloop.Event
		require.NoError(t, json.Unmarshal([]byte(l), &e))
		if stop(e) {
			break
		}
		out.WriteString(l)
	}
	return out.Bytes()
}

func TestReplayAfterCrash(t *testing.T) {
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{})
	c := new(counter)
	loop := &toolloop.AgentLoop{Model: twoTurns(t), Tools: registry(c), OnEvent: w.Record, Limits: toolloop.Limits{MaxConcurrency: 1}}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	// The process died while call_2 ran, in the middle of writing a line.
	log := cut(t, buf.Bytes(), func(e toolloop.Event) bool { return e.Type == toolloop.EventComplete && e.CallID == "call_2" })
	log = append(log, `{"type":"tool.execution_complete","run_id":"run_`...)

	rp, err := eventlog.Read(bytes.NewReader(log))
	require.NoError(t, err)
	assert.True(t, rp.Torn)
	assert.False(t, rp.Ended)
	assert.Equal(t, map[string]bool{"call_1": true}, rp.Completed)
	tr := rp.Transcript()
	require.Len(t, tr, 3, "user, assistant, call_1's result")
	assert.Equal(t, "call_1", tr[2].Result.CallID)

	// Carry on from the replayed transcript, logging to the same log.
	c2 := new(counter)
	var buf2 bytes.Buffer
	buf2.Write(log)
	// Open would cut the torn line off a file; here, cut it by hand.
	buf2.Truncate(bytes.LastIndexByte(log, '\n') + 1)
	w2 := eventlog.NewWriter(&buf2, eventlog.Options{})
	model := looptest.NewModel(t, looptest.Turn{
		Check: func(req *toolloop.Request) string {
			got := looptest.Results(req.Messages)
			if r := got["call_2"]; r == nil || r.Error == nil || r.Error.Kind != toolloop.KindCanceled || r.Text() != toolloop.InterruptedMessage {
				return "call_2 should have an interrupted result"
			}
			if r := got["call_1"]; r == nil || r.IsError() {
				return "call_1 should keep its result"
			}
			return ""
		},
		Reply: looptest.Text("recovered"),
	})
	loop2 := &toolloop.AgentLoop{Model: model, Tools: registry(c2), OnEvent: w2.Record}
	res, err := loop2.Run(context.Background(), tr)
	require.NoError(t, err)
	require.NoError(t, w2.Close())
	looptest.AssertValid(t, res.Messages)
	assert.Zero(t, c2.get("echo")+c2.get("fail"), "nothing from the interrupted turn runs again")

	rp, err = eventlog.Read(&buf2)
	require.NoError(t, err)
	looptest.AssertTranscript(t, res.Messages, rp.Transcript())
	assert.True(t, rp.Ended)
	assert.Equal(t, map[string]bool{"call_1": true}, rp.Completed, "an interrupted call is not a completed one")
}

func TestReadErrors(t *testing.T) {
	good, err := json.Marshal(completion("call_1", "echo"))
	require.NoError(t, err)
	good2, err := json.Marshal(completion("call_2", "echo"))
	require.NoError(t, err)

	t.Run("corrupt line in the middle", func(t *testing.T) {
		log := string(good) + "\n\n{garbage\n" + string(good2) + "\n"
		rp, err := eventlog.Read(strings.NewReader(log))
		require.ErrorIs(t, err, eventlog.ErrCorrupt)
		var le *eventlog.LineError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, 3, le.Line)
		var se *json.SyntaxError
		assert.ErrorAs(t, err, &se)
		assert.Equal(t, map[string]bool{"call_1": true, "call_2": true}, rp.Completed, "the other lines still count")
	})
	t.Run("read error", func(t *testing.T) {
		r := io.MultiReader(bytes.NewReader(append(good, '\n')), iotest.ErrReader(errBoom))
		rp, err := eventlog.Read(r)
		require.ErrorIs(t, err, errBoom)
		assert.Equal(t, map[string]bool{"call_1": true}, rp.Completed)
	})
	t.Run("last line without newline", func(t *testing.T) {
		rp, err := eventlog.Read(strings.NewReader(string(good) + "\n" + string(good2)))
		require.NoError(t, err)
		assert.False(t, rp.Torn)
		assert.Len(t, rp.Completed, 2)
	})
	t.Run("empty", func(t *testing.T) {
		rp, err := eventlog.Read(strings.NewReader(""))
		require.NoError(t, err)
		assert.Empty(t, rp.Transcript())
		assert.False(t, rp.Ended)
	})
}

func TestEvents(t *testing.T) {
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{})
	for _, id := range []string{"call_1", "call_2", "call_3"} {
		w.Record(completion(id, "echo"))
	}
	require.NoError(t, w.Close())
	buf.WriteString("{torn")

	var ids []string
	for e, err := range eventlog.Events(bytes.NewReader(buf.Bytes())) {
		require.NoError(t, err)
		ids = append(ids, e.CallID)
	}
	assert.Equal(t, []string{"call_1", "call_2", "call_3"}, ids, "the torn line is skipped")

	ids = nil
	for e := range eventlog.Events(bytes.NewReader(buf.Bytes())) {
		ids = append(ids, e.CallID)
		break
	}
	assert.Equal(t, []string{"call_1"}, ids)

	n := 0
	for _, err := range eventlog.Events(strings.NewReader("{bad\n{bad\n")) {
		assert.ErrorIs(t, err, eventlog.ErrCorrupt)
		n++
	}
	assert.Equal(t, 2, n, "iteration goes on past a corrupt line")
}

// TestReplayKeepsReasoning checks that a turn's reasoning blocks come back
// from the log exactly, signatures and provider data included, so that a
// resumed run sends the provider what it requires.
func TestReplayKeepsReasoning(t *testing.T) {
	think := toolloop.ReasoningContent("Echo it first.", toolloop.Reasoning{
		Provider: "anthropic", Signature: "EqQBCkgIARAB", CallID: "call_1",
		Extra: json.RawMessage(`{"kept":[1,"x"]}`),
	})
	redacted := toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "anthropic", Redacted: true, Encrypted: "EmwKAhgB"})
	turn := looptest.Calls(looptest.Call("call_1", "echo", `{"text":"a"}`))
	turn.Message.Content = append([]toolloop.Content{think, redacted}, turn.Message.Content...)
	turn.Usage = toolloop.Usage{InputTokens: 10, OutputTokens: 40, ReasoningTokens: 32}
	model := looptest.NewModel(t, looptest.Turn{Reply: turn}, looptest.Turn{Reply: looptest.Text("done")})

	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{})
	loop := &toolloop.AgentLoop{Model: model, Tools: registry(new(counter)), OnEvent: w.Record}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	rp, err := eventlog.Read(&buf)
	require.NoError(t, err)
	looptest.AssertTranscript(t, res.Messages, rp.Transcript())
	got := rp.Transcript()[1]
	require.Len(t, got.Content, 2)
	assert.Equal(t, think.Reasoning, got.Content[0].Reasoning)
	assert.Equal(t, "Echo it first.", got.Content[0].Text)
	assert.Equal(t, redacted.Reasoning, got.Content[1].Reasoning)
	assert.Equal(t, int64(32), rp.Usage.ReasoningTokens)
	assert.Equal(t, "done", res.FinalText)
}
