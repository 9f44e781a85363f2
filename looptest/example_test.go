package looptest_test

import (
	"context"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// In a test, Replay plays back an expected transcript and fails the test
// with a diff at the first request that differs from it:
//
//	func TestAgent(t *testing.T) {
//		want := looptest.Load(t, "testdata/say_hi.json")
//		loop := &toolloop.AgentLoop{Model: looptest.Replay(t, want), Tools: myTools()}
//		res, err := loop.Run(context.Background(), want[:1])
//		require.NoError(t, err)
//		looptest.AssertTranscript(t, want, res.Messages)
//	}
//
// Outside tests, Script answers from a fixed list of replies.
func ExampleScript() {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (any, error) {
		return in.Text, nil
	}))
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "echo", `{"text":"hi"}`)),
			looptest.Text("The tool said hi."),
		),
		Tools: &tools,
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("say hi")})
	fmt.Println(res.FinalText, err, looptest.Validate(res.Messages))
	// Output: The tool said hi. <nil> <nil>
}

// DiffTranscripts compares transcripts as JSON, ignoring durations.
func ExampleDiffTranscripts() {
	want := []toolloop.Message{toolloop.UserMessage("hi")}
	got := []toolloop.Message{toolloop.UserMessage("hi")}
	fmt.Printf("%q\n", looptest.DiffTranscripts(want, got))
	// Output: ""
}
