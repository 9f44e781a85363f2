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
// call, and Close stopping the process.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/plugin"
)

const pluginEnv = "TOOLLOOP_EXAMPLE_PLUGIN"

func main() {
	if os.Getenv(pluginEnv) == "1" {
		servePlugin()
		return
	}
	if err := host(); err != nil {
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
		call.ReportPartial(fmt.Sprintf("indexed file%d.go", i))
		call.ReportProgress(toolloop.Progress{Message: "reindexing", Done: float64(i), Total: float64(in.Files)})
	}
	return toolloop.TextResult(fmt.Sprintf("reindexed %d files", in.Files)), nil
}

// The host side.

func host() error {
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
		fmt.Printf("shadowed: %s from %s, hidden by %s\n", sh.Name, sh.Loser, sh.Winner)
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
		MaxConcurrency: 1, // one call at a time, so the output reads in order
		OnEvent:        printEvent,
	}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Refresh the index.")})
	if err != nil {
		return err
	}
	fmt.Println("\nresults:")
	for _, m := range res.Messages {
		if r := m.Result; r != nil {
			status := string(r.Status)
			if r.Error != nil {
				status += " (" + string(r.Error.Kind) + ")"
			}
			fmt.Printf("  %s %-10s %-24s %s\n", r.CallID, r.Name, status, firstLine(r.Text()))
		}
	}
	fmt.Println("model:", res.FinalText)
	if err := src.Close(); err != nil {
		return err
	}
	fmt.Println("plugin closed")
	return nil
}

func printEvent(e toolloop.Event) {
	switch e.Type {
	case toolloop.EventStart:
		fmt.Printf("%s start    %s\n", e.CallID, e.Tool)
	case toolloop.EventProgress:
		fmt.Printf("%s progress %s/%s: %s %v/%v\n", e.CallID, e.Source, e.SourceName, e.Progress.Message, e.Progress.Done, e.Progress.Total)
	case toolloop.EventPartialResult:
		fmt.Printf("%s partial  %s/%s: %s\n", e.CallID, e.Source, e.SourceName, e.Text)
	case toolloop.EventGuardVerdict:
		if e.Verdict.Decision != toolloop.Allow {
			fmt.Printf("%s guard    %s: %s\n", e.CallID, e.Verdict.Decision, e.Verdict.Reason)
		}
	case toolloop.EventComplete:
		fmt.Printf("%s complete %s (%s/%s)\n", e.CallID, e.Result.Status, e.Result.Meta.Source, e.Result.Meta.SourceName)
	}
}

func firstLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = s[:87] + "..."
	}
	return s
}
