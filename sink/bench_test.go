package sink_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sink"
)

// The cost of each sink per event, which the run waits for.

func BenchmarkPrinterDelta(b *testing.B) {
	p := sink.NewPrinter(io.Discard, &sink.PrinterOptions{Color: sink.ColorAlways})
	e := delta(toolloop.EventModelDelta, "a few words of streamed text ")
	b.ReportAllocs()
	for b.Loop() {
		p(e)
	}
}

func BenchmarkPrinterCall(b *testing.B) {
	p := sink.NewPrinter(io.Discard, &sink.PrinterOptions{Color: sink.ColorAlways})
	s := start(`{"path":"internal/parse/parse.go","offset":120,"limit":200}`)
	c := complete(toolloop.TextResult(strings.Repeat("some output of the tool\n", 2000)))
	b.ReportAllocs()
	for b.Loop() {
		p(s)
		p(c)
	}
}

func BenchmarkSlogComplete(b *testing.B) {
	s := sink.NewSlog(slog.New(slog.NewJSONHandler(io.Discard, nil)), nil)
	c := complete(toolloop.TextResult(strings.Repeat("some output of the tool\n", 2000)))
	b.ReportAllocs()
	for b.Loop() {
		s(c)
	}
}

// A Debug event with the handler at Info: the level check only.
func BenchmarkSlogDisabled(b *testing.B) {
	s := sink.NewSlog(slog.New(slog.NewJSONHandler(io.Discard, nil)), nil)
	e := start(`{"path":"a.go"}`)
	b.ReportAllocs()
	for b.Loop() {
		s(e)
	}
}

func BenchmarkFormatTranscript(b *testing.B) {
	r := toolloop.TextResult(strings.Repeat("some output of the tool\n", 2000))
	r.CallID, r.Name = "c1", "read_file"
	msgs := []toolloop.Message{
		toolloop.UserMessage("Read the file."),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{{ID: "c1", Name: "read_file", Arguments: []byte(`{"path":"a.go"}`)}}},
		toolloop.ToolMessage(r),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("It holds output.")}},
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = sink.FormatTranscript(io.Discard, msgs, nil)
	}
}
