// Command steering runs toolloop offline and steers the agent while it
// works, as a person at a terminal would: a message sent while a tool
// runs changes the run's course, and an interrupt cuts a long answer
// short and redirects it.
//
// The agent is asked to ship a service to prod. While its tests run, the
// person types "Use staging, not prod."; the message waits in the run's
// Inbox and is delivered before the next model request, so the model,
// which reads the last thing the person said, deploys to staging. Then,
// while the model streams long release notes, the person asks for one
// line and interrupts: the text streamed so far is kept, marked
// interrupted, and the model is asked again with the message.
//
//	go run ./examples/steering
package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

type deployIn struct {
	Env string `json:"env" jsonschema:"enum=staging,enum=prod"`
}

// runTests runs the service's tests, reporting that they run.
type runTests struct{}

func (runTests) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "run_tests", Description: "Run the service's tests.", Annotations: toolloop.Annotations{ReadOnly: true}}
}

func (runTests) Run(_ context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	call.ReportProgress(toolloop.Progress{Total: 42, Message: "running 42 tests"})
	return toolloop.TextResult("42 passed"), nil
}

func tools() *toolloop.ToolRegistry {
	deploy := toolloop.NewTool("deploy", "Deploy api v2 to an environment.",
		func(_ context.Context, in deployIn) (any, error) {
			return "api v2 is live on " + in.Env, nil
		})
	var reg toolloop.ToolRegistry
	reg.MustRegister(runTests{}, deploy)
	return &reg
}

// model is a scripted model that decides each turn as a real one would,
// from the transcript: what the person said last, and which tools have
// answered.
type model struct{}

const notes = "Release notes for api v2:\n" +
	"- The list endpoint pages its results.\n" +
	"- Requests time out after 30 seconds, not 60.\n" +
	"- The v1 routes answer 410 Gone.\n"

func (model) Generate(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	said := lastUser(req.Messages)
	switch {
	case strings.Contains(said, "one line"):
		return looptest.Text("api v2: paged lists, 30-second timeouts, v1 gone; on staging."), nil
	case strings.Contains(said, "release notes"):
		return looptest.Text(notes), nil
	case answered(req.Messages, "deploy") != "":
		return looptest.Text("Done: " + answered(req.Messages, "deploy") + "; prod is untouched."), nil
	case answered(req.Messages, "run_tests") != "":
		env := "prod"
		if strings.Contains(strings.ToLower(said), "staging") {
			env = "staging"
		}
		return looptest.Calls(looptest.Call("call_2", "deploy", `{"env":"`+env+`"}`)), nil
	default:
		return looptest.Calls(looptest.Call("call_1", "run_tests", `{}`)), nil
	}
}

// Stream writes the model's text a line at a time, as a slow model would.
func (m model) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		resp, _ := m.Generate(ctx, req)
		for line := range strings.Lines(resp.Message.Text()) {
			select {
			case <-ctx.Done(): // interrupted, or the run was cancelled
				yield(toolloop.Chunk{}, ctx.Err())
				return
			case <-time.After(20 * time.Millisecond):
			}
			if !yield(toolloop.Chunk{Text: line}, nil) {
				return
			}
		}
		yield(toolloop.Chunk{Response: resp}, nil)
	}
}

// lastUser returns the text of the last user message.
func lastUser(msgs []toolloop.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == toolloop.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}

// answered returns the result of the last call of the tool name, if any.
func answered(msgs []toolloop.Message, name string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if r := msgs[i].Result; r != nil && r.Name == name {
			return r.Text()
		}
	}
	return ""
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "steering:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	loop := &toolloop.AgentLoop{Model: model{}, Tools: tools()}
	show := sink.NewPrinter(out, nil)

	fmt.Fprintln(out, "== a message while a tool runs")
	msgs := []toolloop.Message{toolloop.UserMessage("Ship api v2 to prod.")}
	fmt.Fprintln(out, "you: Ship api v2 to prod.")
	s := loop.RunStream(ctx, msgs)
	for e := range s.Events() {
		show(e)
		switch e.Type {
		case toolloop.EventProgress:
			// The tests are running (the tool waits while this body
			// runs). The person types; any goroutine may send, one
			// reading the terminal say.
			fmt.Fprintf(out, "  … %s: %s\n", e.Tool, e.Progress.Message)
			fmt.Fprintln(out, "you: Use staging, not prod.")
			s.Inbox().Send(toolloop.UserMessage("Use staging, not prod."))
		}
		// The printer shows the delivery (user.message) where it happens:
		// after the call's result, before the next model turn.
	}
	res, err := s.Result()
	if err != nil {
		return err
	}

	fmt.Fprintln(out, "\n== an interrupt while the model writes")
	msgs = append(res.Messages, toolloop.UserMessage("Write the release notes."))
	fmt.Fprintln(out, "you: Write the release notes.")
	s = loop.RunStream(ctx, msgs)
	lines := 0
	for e := range s.Events() {
		show(e)
		switch e.Type {
		case toolloop.EventModelDelta:
			if lines++; lines == 2 {
				// Too long: ask for one line, and stop the model now
				// rather than after it has written it all. Continue
				// goes on with the message; without it, the run would
				// end with ErrInterrupted and return the message in
				// RunResult.Undelivered.
				fmt.Fprintln(out, "you: Just one line, please. [interrupts]")
				s.Inbox().Send(toolloop.UserMessage("Just one line, please."))
				s.Inbox().Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow, Continue: true})
			}
		}
	}
	res, err = s.Result()
	if err != nil {
		return err
	}

	fmt.Fprintln(out, "\n== the second run's transcript")
	return sink.FormatTranscript(out, res.Messages[len(msgs)-1:], nil)
}
