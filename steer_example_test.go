package toolloop_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// A person steers a running agent: while its first call runs, they send
// a message, which the model sees before its next turn, after the call's
// result. Here the tool itself plays the person, so that the example's
// output does not depend on timing; a program calls Send from any
// goroutine (a terminal reader, an HTTP handler).
func ExampleInbox() {
	in := &toolloop.Inbox{}
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("run_tests", "Run the test suite.", func(context.Context, struct{}) (any, error) {
		in.Send(toolloop.UserMessage("Skip the slow tests, and deploy to staging, not prod."))
		return "ok: 412 tests passed", nil
	}))
	// The model deploys wherever the last user message says.
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == toolloop.RoleUser && strings.Contains(last.Text(), "staging"):
			return looptest.Text("Tests pass; deploying to staging as asked."), nil
		case last.Role == toolloop.RoleUser:
			return looptest.Calls(looptest.Call("c1", "run_tests", `{}`)), nil
		}
		return looptest.Text("Tests pass; deploying to prod."), nil
	})
	loop := &toolloop.AgentLoop{Model: model, Tools: &tools, OnEvent: func(e toolloop.Event) {
		if e.Type == toolloop.EventUserMessage {
			fmt.Printf("delivered (%s): %s\n", e.Origin, e.Messages[0].Text())
		}
	}}
	ctx := toolloop.WithInbox(context.Background(), in)
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Run the tests, then deploy.")})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.FinalText)
	// Output:
	// delivered (steer): Skip the slow tests, and deploy to staging, not prod.
	// Tests pass; deploying to staging as asked.
}

// Interrupting a streamed run from its range loop: the run stops where
// the mode says and ends with ErrInterrupted; the transcript stays valid
// to send again, with the next prompt.
func ExampleStream_Inbox() {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("deploy", "Deploy to an environment.", func(context.Context, struct {
		Env string `json:"env"`
	}) (any, error) {
		return "deployed", nil
	}))
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Calls(looptest.Call("c1", "deploy", `{"env":"prod"}`))),
		Tools: &tools,
	}
	s := loop.RunStream(context.Background(), []toolloop.Message{toolloop.UserMessage("Deploy.")})
	for e := range s.Events() {
		if e.Type == toolloop.EventModelResponse && len(e.Response.Message.ToolCalls) > 0 {
			// The person saw "deploy prod" coming: stop before it runs.
			s.Inbox().Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterModel})
		}
		if e.Type == toolloop.EventRunInterrupted {
			fmt.Println("interrupted:", e.Interrupt.Mode)
		}
	}
	res, err := s.Result()
	fmt.Println(err)
	for _, m := range res.Messages {
		if m.Result != nil {
			fmt.Println(m.Result.Name+":", m.Result.Text())
		}
	}
	// Output:
	// interrupted: after_model
	// toolloop: the run was interrupted
	// deploy: not run: the run was interrupted before this call started
}
