// Command plugin runs a capability plugin in its own process and drives
// its tools with a scripted model, offline, in one command:
//
//	go run ./examples/plugin
//
// The program is both the host and the plugin: the host starts its own
// binary again with TOOLLOOP_EXAMPLE_PLUGIN=1 in its environment, and in
// that mode main serves the tools instead. A real plugin is a separate
// program whose main calls plugin.Serve, like servePlugin below.
//
// The run shows a typed tool, a tool that reports progress and partial
// output (arriving as the same events a built-in tool's would, with the
// plugin's name), a guard that denies a plugin call, a plugin that crashes
// mid-call (the call fails at once) and is started again for the next
// call, and Close stopping the process. A verbose sink.NewPrinter shows
// every event on stdout, and sink.NewSlog logs each one on stderr, where
// source=plugin source_name=indexer says where a call ran.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/plugin"
	"github.com/toolloop/toolloop/sink"
)

const pluginEnv = "TOOLLOOP_EXAMPLE_PLUGIN"

func main() {
	if os.Getenv(pluginEnv) == "1" {
		servePlugin()
		return
	}
	if err := host(os.Stdout, os.Stderr); err != nil {
		log.Fatal(err)
	}
}

// The plugin side.

type countIn struct {
	Text string `json:"text" jsonschema:"description=The text to count the words of"`
}

type reindexIn struct {
	Files int `json:"files" jsonschema:"minimum=1,maximum=20"`
}

type empty struct{}

func servePlugin() {
	plugin.Serve(
		toolloop.NewTool("word_count", "Count the words of a text.",
			func(_ context.Context, in countIn) (any, error) {
				return fmt.Sprintf("%d words", len(strings.Fields(in.Text))), nil
			}),
		reindex{},
		toolloop.NewTool("crash", "Crash the plugin (for the demo).",
			func(context.Context, empty) (any, error) {
				os.Exit(7)
				return nil, nil
			}),
		toolloop.NewTool("pid", "The plugin's process ID.",
			func(context.Context, empty) (any, error) {
				return fmt.Sprint(os.Getpid()), nil
			}),
	)
}

// reindex is a hand-written tool that reports as it goes.
type reindex struct{}

func (reindex) Spec() toolloop.ToolSpec {
	schema, err := toolloop.SchemaFor[reindexIn]()
	if err != nil {
		panic(err)
	}
	return toolloop.ToolSpec{Name: "reindex", Description: "Reindex some files, reporting each.", InputSchema: schema}
}

func (reindex) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in reindexIn
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	for i := 1; i <= in.Files; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		call.ReportPartial(fmt.Sprintf("indexed file%d.go\n", i))
		call.ReportProgress(toolloop.Progress{Message: "reindexing", Done: float64(i), Total: float64(in.Files)})
	}
	return toolloop.TextResult(fmt.Sprintf("reindexed %d files", in.Files)), nil
}

// The host side.

func host(stdout, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	src := plugin.New(plugin.Config{
		Name:    "indexer",
		Command: exe,
		Env:     []string{pluginEnv + "=1"},
	})
	defer src.Close()

	ctx := context.Background()
	// The log of completed calls, on stderr, without times.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	// A tool of the host's own of the same name wins over the plugin's,
	// because the registry is told to allow it, and it reports the
	// shadowing (without AllowShadowing, AddSource would refuse the name).
	reg := toolloop.ToolRegistry{AllowShadowing: true}
	reg.MustRegister(toolloop.NewTool("pid", "The host's process ID.", func(context.Context, empty) (any, error) {
		return fmt.Sprint(os.Getpid()), nil
	}))
	if err := reg.AddSource(ctx, src); err != nil { // starts the plugin
		return err
	}
	for _, sh := range reg.Shadowed() {
		fmt.Fprintf(stdout, "shadowed: %s from %s, hidden by %s\n", sh.Name, sh.Loser, sh.Winner)
	}

	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(
				looptest.Call("call_1", "word_count", `{"text":"plugins run in their own process"}`),
				looptest.Call("call_2", "reindex", `{"files":3}`),
				looptest.Call("call_3", "reindex", `{"files":50}`),
				looptest.Call("call_4", "word_count", `{"text":"rm -rf /"}`),
			),
			looptest.Calls(looptest.Call("call_5", "crash", `{}`)),
			looptest.Calls(looptest.Call("call_6", "word_count", `{"text":"back again"}`)),
			looptest.Text("Done: the index is fresh."),
		),
		Tools: &reg,
		Guard: toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if c.Source == toolloop.SourcePlugin && strings.Contains(string(c.Arguments), "rm -rf") {
				return toolloop.Verdict{Decision: toolloop.Deny, Reason: "no shell commands, even as text", Rule: "no-rm"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		}),
		Limits: toolloop.Limits{MaxConcurrency: 1}, // one call at a time, so the output reads in order
		OnEvent: toolloop.MultiSink(
			// Verbose: each call as it starts, and its progress and partial
			// output as they come, besides the line when it completes.
			sink.NewPrinter(stdout, &sink.PrinterOptions{Verbose: true}),
			// The log says where each call ran: source=plugin
			// source_name=indexer for the plugin's tools.
			sink.NewSlog(logger, nil),
		),
	}
	if _, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Refresh the index.")}); err != nil {
		return err
	}
	if err := src.Close(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "plugin closed")
	return nil
}
