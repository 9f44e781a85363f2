package toolloop_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// session builds a transcript of n turns, each one call whose result is
// size bytes, with a reasoning block before each call.
func session(n, size int) []toolloop.Message {
	msgs := []toolloop.Message{toolloop.SystemMessage("sys"), toolloop.UserMessage("task")}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
				toolloop.ReasoningContent("thinking", toolloop.Reasoning{Provider: "anthropic", Signature: "sig" + id, CallID: id}),
			}, ToolCalls: []toolloop.ToolCall{looptest.Call(id, "read", `{}`)}},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: id, Name: "read", Status: toolloop.StatusOK,
				Content: []toolloop.Content{toolloop.TextContent(strings.Repeat("x", size))}}))
	}
	return msgs
}

func input(msgs []toolloop.Message, tokens int) *toolloop.ContextInput {
	return &toolloop.ContextInput{Messages: msgs, Tokens: tokens, Window: 1000, Estimate: toolloop.EstimateTokens}
}

func TestClearToolResults(t *testing.T) {
	msgs := session(5, 1000)
	t.Run("keeps the recent turns", func(t *testing.T) {
		edit, err := (&toolloop.ClearToolResults{KeepTurns: 2}).ManageContext(context.Background(), input(msgs, 500))
		require.NoError(t, err)
		require.NotNil(t, edit)
		assert.Equal(t, []string{"c0", "c1", "c2"}, edit.CallIDs)
		out, err := edit.Apply(msgs)
		require.NoError(t, err)
		looptest.AssertValid(t, out)
		for id, r := range looptest.Results(out) {
			cleared := id == "c0" || id == "c1" || id == "c2"
			assert.Equal(t, cleared, r.Meta.Cleared, id)
			if cleared {
				assert.Contains(t, r.Text(), "call "+id)
				assert.Contains(t, r.Text(), "call the tool again")
			}
		}
		// The reasoning blocks are where they were.
		for i, m := range out {
			if m.Role == toolloop.RoleAssistant {
				assert.Equal(t, msgs[i].Content, m.Content)
			}
		}
		// Cleared results are not cleared again.
		again, err := (&toolloop.ClearToolResults{KeepTurns: 2}).ManageContext(context.Background(), input(out, 500))
		require.NoError(t, err)
		assert.Nil(t, again)
	})
	t.Run("by default at half the window, freeing half that", func(t *testing.T) {
		c := &toolloop.ClearToolResults{KeepTurns: 2}
		edit, err := c.ManageContext(context.Background(), input(msgs, 499))
		require.NoError(t, err)
		assert.Nil(t, edit, "half of the 1,000-token window is not reached")
		// Clearing only c0's 800 bytes frees less than 250 tokens.
		few := session(5, 800)
		edit, err = (&toolloop.ClearToolResults{KeepTurns: 4}).ManageContext(context.Background(), input(few, 500))
		require.NoError(t, err)
		assert.Nil(t, edit, "a clearing that frees less than half the threshold")
		edit, err = (&toolloop.ClearToolResults{KeepTurns: 4, MinFreed: 1}).ManageContext(context.Background(), input(few, 500))
		require.NoError(t, err)
		require.NotNil(t, edit, "MinFreed of its own")
		assert.Equal(t, []string{"c0"}, edit.CallIDs)
		assert.Equal(t, "threshold", edit.Reason)
		// Without a window, DefaultClearTokens (and a MinFreed of its
		// own, as these results are too few to free half of it).
		c = &toolloop.ClearToolResults{KeepTurns: 2, MinFreed: 1}
		in := input(msgs, toolloop.DefaultClearTokens-1)
		in.Window = 0
		edit, err = c.ManageContext(context.Background(), in)
		require.NoError(t, err)
		assert.Nil(t, edit)
		in.Tokens = toolloop.DefaultClearTokens
		edit, err = c.ManageContext(context.Background(), in)
		require.NoError(t, err)
		assert.NotNil(t, edit)
	})
	t.Run("below its threshold it waits", func(t *testing.T) {
		c := &toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 5000}}
		edit, err := c.ManageContext(context.Background(), input(msgs, 4999))
		require.NoError(t, err)
		assert.Nil(t, edit)
		edit, err = c.ManageContext(context.Background(), input(msgs, 5000))
		require.NoError(t, err)
		assert.NotNil(t, edit)
		edit, err = (&toolloop.ClearToolResults{When: toolloop.Threshold{Fraction: 0.9}}).ManageContext(context.Background(), input(msgs, 899))
		require.NoError(t, err)
		assert.Nil(t, edit, "90% of the 1,000-token window is not reached")
	})
	t.Run("overflow ignores the threshold", func(t *testing.T) {
		in := input(msgs, 0)
		in.Overflow = true
		edit, err := (&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1 << 30}}).ManageContext(context.Background(), in)
		require.NoError(t, err)
		require.NotNil(t, edit)
		assert.Equal(t, "overflow", edit.Reason)
	})
	t.Run("keep, stub and small results", func(t *testing.T) {
		small := session(5, 100)
		edit, err := (&toolloop.ClearToolResults{KeepTurns: 1}).ManageContext(context.Background(), input(small, 500))
		require.NoError(t, err)
		assert.Nil(t, edit, "100-byte results are below MinBytes")
		c := &toolloop.ClearToolResults{KeepTurns: 1,
			Keep: func(r *toolloop.ToolResult) bool { return r.CallID == "c1" },
			Stub: func(r *toolloop.ToolResult) string { return "gone:" + r.CallID }}
		edit, err = c.ManageContext(context.Background(), input(msgs, 500))
		require.NoError(t, err)
		assert.Equal(t, []string{"c0", "c2", "c3"}, edit.CallIDs)
		out, err := edit.Apply(msgs)
		require.NoError(t, err)
		assert.Equal(t, "gone:c0", looptest.Results(out)["c0"].Text())
	})
}

func TestCompactor(t *testing.T) {
	var seen *toolloop.Request
	summarizer := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		seen = req
		r := looptest.Text("  the summary  ")
		r.Usage = toolloop.Usage{InputTokens: 7, OutputTokens: 3}
		r.Model = "small"
		return r, nil
	})
	msgs := session(6, 1000)
	msgs = append(msgs[:4], append([]toolloop.Message{toolloop.UserMessage("PIN: keep answers short")}, msgs[4:]...)...)
	c := &toolloop.Compactor{Model: summarizer, KeepTurns: 2, Pin: func(m toolloop.Message) bool { return strings.HasPrefix(m.Text(), "PIN:") }}

	edit, err := c.ManageContext(context.Background(), input(msgs, 799))
	require.NoError(t, err)
	assert.Nil(t, edit, "below 80% of the window")

	edit, err = c.ManageContext(context.Background(), input(msgs, 800))
	require.NoError(t, err)
	require.NotNil(t, edit)
	assert.Equal(t, toolloop.Usage{InputTokens: 7, OutputTokens: 3}, edit.Usage)
	assert.Equal(t, "small", edit.Model)
	assert.Equal(t, []string{"c0", "c1", "c2", "c3"}, edit.CallIDs)
	out, err := edit.Apply(msgs)
	require.NoError(t, err)
	looptest.AssertValid(t, out)
	require.Len(t, out, 2+1+1+4)
	assert.Equal(t, msgs[:2], out[:2], "system prompt and first request verbatim")
	assert.Equal(t, toolloop.SummaryHeader+"the summary", out[2].Text())
	assert.Equal(t, "PIN: keep answers short", out[3].Text())
	assert.Equal(t, msgs[len(msgs)-4:], out[4:], "the last two turns verbatim, reasoning included")

	require.NotNil(t, seen)
	assert.Empty(t, seen.Tools)
	assert.Equal(t, toolloop.ToolChoiceNone, seen.ToolChoice.Mode)
	history := seen.Messages[1].Text()
	assert.Contains(t, history, "[called read (call c0) with {}]")
	assert.NotContains(t, history, "sigc0", "no reasoning signatures in the summary's input")
	assert.Less(t, strings.Count(history, "x"), 4*2100, "tool outputs are cut for the summary")

	t.Run("overflow keeps one turn", func(t *testing.T) {
		in := input(msgs, 0)
		in.Overflow = true
		edit, err := c.ManageContext(context.Background(), in)
		require.NoError(t, err)
		out, err := edit.Apply(msgs)
		require.NoError(t, err)
		assert.Equal(t, msgs[len(msgs)-2:], out[len(out)-2:])
		assert.Equal(t, "overflow", edit.Reason)
	})
	t.Run("the loop's model by default", func(t *testing.T) {
		in := input(msgs, 800)
		in.Model = summarizer
		edit, err := (&toolloop.Compactor{}).ManageContext(context.Background(), in)
		require.NoError(t, err)
		assert.NotNil(t, edit)
		in.Model = nil
		_, err = (&toolloop.Compactor{}).ManageContext(context.Background(), in)
		assert.Error(t, err)
	})
	t.Run("an empty summary is an error", func(t *testing.T) {
		empty := &toolloop.Compactor{Model: looptest.Script(looptest.Text(" "))}
		_, err := empty.ManageContext(context.Background(), input(msgs, 800))
		assert.ErrorContains(t, err, "empty summary")
	})
	t.Run("unknown window waits for a token threshold", func(t *testing.T) {
		in := input(msgs, 1<<20)
		in.Window = 0
		edit, err := c.ManageContext(context.Background(), in)
		require.NoError(t, err)
		assert.Nil(t, edit)
	})
	t.Run("nothing to summarize", func(t *testing.T) {
		short := session(2, 1000)
		edit, err := c.ManageContext(context.Background(), input(short, 900))
		require.NoError(t, err)
		assert.Nil(t, edit)
	})
}

// TestLongSession: 300 turns on a model with a 6,000-token window, each
// turn reading 2 KB, complete with compaction; the event log, written to
// a file, replays to the final transcript; no request the model saw was
// over its window.
func TestLongSession(t *testing.T) {
	const turns, window = 300, 6000
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := eventlog.Create(path, eventlog.Options{})
	require.NoError(t, err)

	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("read", "Read a chunk.", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (any, error) {
		return fmt.Sprintf("chunk %d: %s", in.N, strings.Repeat("data ", 400)), nil
	}))
	turn, summaries, maxTokens := 0, 0, 0
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		tokens := toolloop.EstimateTokens(req.Messages)
		if len(req.Tools) == 0 { // the compactor
			summaries++
			r := looptest.Text(fmt.Sprintf("Read chunks up to %d.", turn))
			r.Model = "small-window"
			return r, nil
		}
		maxTokens = max(maxTokens, tokens)
		if tokens > window {
			return nil, overflowErr
		}
		turn++
		var r *toolloop.Response
		if turn > turns {
			r = looptest.Text("read them all")
		} else {
			r = looptest.Calls(looptest.Call("", "read", fmt.Sprintf(`{"n":%d}`, turn)))
		}
		r.Model = "small-window"
		r.Usage = toolloop.Usage{InputTokens: int64(tokens), OutputTokens: 20}
		return r, nil
	})
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, OnEvent: w.Record,
		ModelTable: toolloop.ModelTable{"small-window": {ContextWindow: window}},
		ContextManagers: []toolloop.ContextManager{
			&toolloop.ClearToolResults{When: toolloop.Threshold{Fraction: 0.5}},
			&toolloop.Compactor{},
		}, Budget: toolloop.Budget{MaxTurns: turns + 10},
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.SystemMessage("Read every chunk."), toolloop.UserMessage("Go.")})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Equal(t, "read them all", res.FinalText)
	assert.Equal(t, turns+1, res.Turns)
	assert.Equal(t, turns, res.ToolCalls)
	assert.LessOrEqual(t, maxTokens, window, "no request overflowed")
	assert.Positive(t, summaries)
	looptest.AssertValid(t, res.Messages)

	rp, err := eventlog.ReadFile(path)
	require.NoError(t, err)
	assert.Zero(t, rp.EditErrors)
	assert.True(t, rp.Ended)
	looptest.AssertTranscript(t, res.Messages, rp.Transcript())

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Positive(t, strings.Count(string(b), `"type":"transcript.edited"`))
	var last toolloop.Event
	for e, err := range eventlog.Events(strings.NewReader(string(b))) {
		require.NoError(t, err)
		if e.Type == toolloop.EventTranscriptEdited {
			last = e
		}
	}
	require.NotNil(t, last.Edit)
	assert.Less(t, last.Edit.TokensAfter, last.Edit.TokensBefore)
	t.Logf("%d turns, %d summaries, %d edits, largest request %d tokens, final transcript %d messages",
		res.Turns, summaries, strings.Count(string(b), `"type":"transcript.edited"`), maxTokens, len(res.Messages))
}
