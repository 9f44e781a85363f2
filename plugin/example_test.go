package plugin_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/plugin"
)

// A plugin is a Go program whose main hands its tools to Serve. Typed
// tools work as they are; so does any toolloop.Tool, which may report
// progress and partial output on its call.
func ExampleServe() {
	type countIn struct {
		Text string `json:"text" jsonschema:"description=The text to count the words of"`
	}
	plugin.Serve(
		toolloop.NewTool("word_count", "Count the words of a text.",
			func(_ context.Context, in countIn) (any, error) {
				return fmt.Sprintf("%d words", len(strings.Fields(in.Text))), nil
			}),
	)
}

// The host runs the plugin as a Source and adds it to its registry; the
// plugin's tools then run through the loop like any other, and their
// progress arrives as the loop's events, with the plugin's name.
func ExampleNew() {
	// This example's plugin is its own test binary, run again in plugin
	// mode (see TestMain); a real host names the plugin's program.
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	src := plugin.New(plugin.Config{
		Name:    "text",
		Command: exe,
		Env:     []string{"TOOLLOOP_PLUGIN_EXAMPLE=1"},
	})
	defer src.Close()

	ctx := context.Background()
	var reg toolloop.ToolRegistry
	if err := reg.AddSource(ctx, src); err != nil { // starts the process
		fmt.Println(err)
		return
	}
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "word_count", `{"text":"one two three four"}`)),
			looptest.Text("Four words."),
		),
		Tools: &reg,
		OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventProgress {
				fmt.Printf("progress from %s %s: %s\n", e.Source, e.SourceName, e.Progress.Message)
			}
		},
	}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("How many words?")})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := looptest.Results(res.Messages)["call_1"]
	fmt.Printf("%s (%s %s): %s\n", r.Name, r.Meta.Source, r.Meta.SourceName, r.Text())
	fmt.Println(res.FinalText)
	// Output:
	// progress from plugin text: counting
	// word_count (plugin text): 4 words
	// Four words.
}
