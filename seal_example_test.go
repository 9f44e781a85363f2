package toolloop_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// A paused state sent to a web client for approval comes back sealed or
// not at all: the loop seals what it hands out and refuses a state whose
// pending call was changed on the way.
func ExampleSealing() {
	deploy := toolloop.NewTool("deploy", "Deploy a service.", func(_ context.Context, in struct {
		Service string `json:"service"`
	}) (any, error) {
		return "deployed " + in.Service, nil
	})
	deploy.Annotations.Destructive = true
	var tools toolloop.ToolRegistry
	tools.MustRegister(deploy)
	key := make([]byte, 32) // kept by the server, never sent
	_, _ = rand.Read(key)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("call_1", "deploy", `{"service":"web"}`)),
			looptest.Text("Deployed web."),
		),
		Tools:            &tools,
		Guard:            &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask, Reason: "production change"}}},
		PauseForApproval: true,
		Sealing:          toolloop.Sealing{Key: key},
	}
	ctx := context.Background()
	res, _ := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Ship web.")})
	sent, _ := json.Marshal(res.Paused) // to the client, sealed

	// The client (or someone on the way) changes what is to be deployed.
	var forged toolloop.PauseState
	_ = json.Unmarshal(sent, &forged)
	forged.Pending[0].Arguments = json.RawMessage(`{"service":"database"}`)
	approve := map[string]toolloop.Approval{"call_1": {Approved: true}}
	_, err := loop.Resume(ctx, &forged, approve)
	fmt.Println("forged:", errors.Is(err, toolloop.ErrTampered))

	var state toolloop.PauseState
	_ = json.Unmarshal(sent, &state)
	res, err = loop.Resume(ctx, &state, approve)
	fmt.Println(res.FinalText, err)
	// Output:
	// forged: true
	// Deployed web. <nil>
}
