package toolloop_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func TestMultiSink(t *testing.T) {
	var a, c []toolloop.EventType
	sink := toolloop.MultiSink(
		func(e toolloop.Event) { a = append(a, e.Type) },
		nil,
		func(e toolloop.Event) {
			if e.Type == toolloop.EventRunStart {
				panic("sink bug")
			}
		},
		func(e toolloop.Event) { c = append(c, e.Type) },
	)
	assert.PanicsWithValue(t, "toolloop: event sink 3 of 4 panicked (the other sinks got the event): sink bug",
		func() { sink(toolloop.Event{Type: toolloop.EventRunStart}) }, "the combined sink reports the panic, counting sinks from 1")
	assert.NotPanics(t, func() { sink(toolloop.Event{Type: toolloop.EventRunEnd}) })
	want := []toolloop.EventType{toolloop.EventRunStart, toolloop.EventRunEnd}
	assert.Equal(t, want, a)
	assert.Equal(t, want, c, "the sinks after a panicking one still get the event")
}

// In a loop, a sink's panic reaches the loop's Logger, and the run and the
// other sinks go on.
func TestMultiSinkInALoop(t *testing.T) {
	logs := &levelRecorder{}
	rec := &looptest.Recorder{}
	l := &toolloop.AgentLoop{
		Model:   looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("fine")}),
		OnEvent: toolloop.MultiSink(func(toolloop.Event) { panic("always") }, rec.Record),
		Logger:  slog.New(logs),
	}
	res, err := l.Run(context.Background(), user("hi"))
	require.NoError(t, err)
	assert.Equal(t, "fine", res.FinalText)
	n := len(rec.Events())
	assert.NotZero(t, n)
	levels := logs.levels()
	assert.Len(t, levels, n, "one error record per event")
	for _, lv := range levels {
		assert.Equal(t, slog.LevelError, lv)
	}
}

// Tee, deprecated, still works as it did.
func TestTee(t *testing.T) {
	logs := &levelRecorder{}
	var got []toolloop.EventType
	sink := toolloop.Tee(slog.New(logs), func(toolloop.Event) { panic("bug") }, func(e toolloop.Event) { got = append(got, e.Type) })
	assert.NotPanics(t, func() { sink(toolloop.Event{Type: toolloop.EventRunEnd}) })
	assert.Equal(t, []toolloop.EventType{toolloop.EventRunEnd}, got)
	assert.Equal(t, []slog.Level{slog.LevelError}, logs.levels())
}
