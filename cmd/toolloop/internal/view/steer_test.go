package view

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// stallModel streams the start of an answer, then waits for the run to
// be interrupted: a turn an interrupt cuts short.
type stallModel struct {
	text      string
	streaming chan struct{}
}

func (m *stallModel) Generate(ctx context.Context, _ *toolloop.Request) (*toolloop.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (m *stallModel) Stream(ctx context.Context, _ *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		if !yield(toolloop.Chunk{Text: m.text}, nil) {
			return
		}
		close(m.streaming)
		<-ctx.Done()
		yield(toolloop.Chunk{}, ctx.Err())
	}
}

// recordSteered returns the log of three runs of a real AgentLoop steered
// through an inbox, as toolloop run steers them: a message sent while a
// call runs, delivered before the next model request; a run interrupted
// now while a call runs; and a run interrupted while the model streams.
func recordSteered(t *testing.T) []byte {
	ctx := t.Context()
	var reg toolloop.ToolRegistry
	started, release := make(chan struct{}, 2), make(chan struct{})
	reg.MustRegister(toolloop.NewTool("deploy", "Deploys.", func(ctx context.Context, _ struct{}) (any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return "deployed", nil
		}
	}))
	var buf syncBuffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
	in := &toolloop.Inbox{}
	ictx := toolloop.WithInbox(ctx, in)
	loop := &toolloop.AgentLoop{Tools: &reg, OnEvent: w.Record, Model: looptest.Script(
		looptest.Calls(looptest.Call("c1", "deploy", `{}`)), looptest.Text("Deployed to staging, as you asked."),
		looptest.Calls(looptest.Call("c2", "deploy", `{}`)),
	)}

	go func() {
		<-started
		in.Send(toolloop.UserMessage("use staging, not prod"))
		close(release)
	}()
	res, err := loop.Run(ictx, []toolloop.Message{toolloop.UserMessage("Deploy.")})
	require.NoError(t, err)

	release = make(chan struct{}) // c2 runs until the interrupt
	go func() {
		<-started
		in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow})
	}()
	res, err = loop.Run(ictx, append(res.Messages, toolloop.UserMessage("Again.")))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)

	stall := &stallModel{text: "I will deplo", streaming: make(chan struct{})}
	loop.Model = stall
	go func() {
		<-stall.streaming
		in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow})
	}()
	_, err = loop.Run(ictx, append(res.Messages, toolloop.UserMessage("Once more.")))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestModelSteered: a delivered message shows where it was delivered,
// after the calls of the turn before it; an interrupt shows where it
// acted, with its mode; a run it ended ended without failing; and a
// turn it cut short is marked so, with the text the model had written.
func TestModelSteered(t *testing.T) {
	p := buildLog(t, recordSteered(t), Options{})
	require.Len(t, p.Runs, 3)
	r1, r2, r3 := p.Runs[0], p.Runs[1], p.Runs[2]

	require.Len(t, r1.Turns, 2)
	t1 := r1.Turns[0]
	assert.Equal(t, []string{"message"}, noteKinds(t1.Notes))
	assert.Equal(t, "message delivered", t1.Notes[0].Title)
	assert.Equal(t, "use staging, not prod", t1.Notes[0].Detail.S)
	assert.Greater(t, t1.Notes[0].At, t1.Calls[0].At, "after the call it came during")
	assert.Equal(t, "stop", r1.Stop)

	assert.Equal(t, "interrupted", r2.Stop)
	require.Len(t, r2.Turns, 1)
	assert.Equal(t, []string{"interrupt", "end"}, noteKinds(r2.Turns[0].Notes))
	assert.Equal(t, "interrupted (now)", r2.Turns[0].Notes[0].Title)
	assert.Nil(t, r2.Turns[0].Notes[1].Detail, "an interrupted run did not fail")
	assert.Equal(t, statusCanceled, callsByID([]*run{r2})["c2"].Status)

	require.Len(t, r3.Turns, 1)
	cut := r3.Turns[0]
	assert.Equal(t, "interrupted", cut.Stop)
	require.NotNil(t, cut.Text)
	assert.Equal(t, "I will deplo", cut.Text.S)
	assert.Equal(t, []string{"interrupt", "end"}, noteKinds(cut.Notes))
}

// TestModelSteeredNotes covers what a recorded run does not: a follow-up
// and an interrupt that lets the run go on.
func TestModelSteeredNotes(t *testing.T) {
	evs := sampleEvents()
	at := evs[len(evs)-1].Time
	evs = append(evs,
		toolloop.Event{Type: toolloop.EventRunInterrupted, Time: at, RunID: "r", Turn: 1,
			Interrupt: &toolloop.Interrupt{Mode: toolloop.InterruptAfterTools, Continue: true}},
		toolloop.Event{Type: toolloop.EventUserMessage, Time: at, RunID: "r", Turn: 1, Origin: toolloop.OriginFollowUp,
			Messages: []toolloop.Message{toolloop.UserMessage("and the tests")}},
		toolloop.Event{Type: toolloop.EventUserMessage, Time: at, RunID: "r", Origin: toolloop.OriginSteer,
			Messages: []toolloop.Message{toolloop.UserMessage("before the first turn")}},
	)
	p, err := build(events(evs...), &Options{})
	require.NoError(t, err)
	r := p.Runs[0]
	notes := r.Turns[0].Notes
	require.Len(t, notes, 2)
	assert.Equal(t, "interrupted (after_tools); the run went on with the queued messages", notes[0].Title)
	assert.Equal(t, "follow-up delivered", notes[1].Title)
	assert.Equal(t, "and the tests", notes[1].Detail.S)
	assert.Equal(t, []string{"start", "message"}, noteKinds(r.Notes), "a message delivered before the first turn is the run's")
}
