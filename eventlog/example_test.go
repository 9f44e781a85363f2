package eventlog_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// scriptedModel calls echo once, then answers.
var scriptedModel = toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	if len(req.Messages) > 1 {
		return &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("said hi")}}}, nil
	}
	return &toolloop.Response{Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{
		{ID: "call_1", Name: "echo", Arguments: []byte(`{"text":"hi"}`)},
	}}}, nil
})

func echoRegistry() *toolloop.ToolRegistry {
	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(toolloop.NewTool("echo", "Echoes its text.", func(_ context.Context, in echoArgs) (any, error) {
		return in.Text, nil
	}))
	return reg
}

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "eventlog")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agent.jsonl")

	w, err := eventlog.Open(path, eventlog.Options{})
	if err != nil {
		panic(err)
	}
	loop := &toolloop.AgentLoop{Model: scriptedModel, Tools: echoRegistry(), OnEvent: w.Record}
	if _, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("say hi")}); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	rp, err := eventlog.ReadFile(path)
	if err != nil {
		panic(err)
	}
	for _, m := range rp.Transcript() {
		fmt.Println(m.Role, m.Text(), m.ToolCalls != nil)
	}
	fmt.Println("ended:", rp.Ended, "echo calls:", rp.Tools["echo"].Calls)
	// Output:
	// user say hi false
	// assistant  true
	// tool  false
	// assistant said hi false
	// ended: true echo calls: 1
}

// A log that ends mid-turn, as a killed process leaves it, replays into a
// transcript that Run repairs: the call that never finished gets a
// canceled result, and nothing runs twice.
func ExampleRead() {
	var log bytes.Buffer
	w := eventlog.NewWriter(&log, eventlog.Options{})
	w.Record(toolloop.Event{Type: toolloop.EventRunStart, RunID: "run_1",
		Messages: []toolloop.Message{toolloop.UserMessage("say hi")}})
	w.Record(toolloop.Event{Type: toolloop.EventModelResponse, RunID: "run_1", Turn: 1,
		Response: &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant,
			ToolCalls: []toolloop.ToolCall{{ID: "call_1", Name: "echo", Arguments: []byte(`{"text":"hi"}`)}}}}})
	w.Record(toolloop.Event{Type: toolloop.EventStart, RunID: "run_1", Turn: 1, CallID: "call_1", Tool: "echo"})
	// The process dies here, without closing the log.
	_ = w.Flush()
	log.WriteString(`{"type":"tool.execution_comp`)

	rp, err := eventlog.Read(&log)
	if err != nil {
		panic(err)
	}
	fmt.Println("torn:", rp.Torn, "ended:", rp.Ended, "messages:", len(rp.Transcript()))

	loop := &toolloop.AgentLoop{Model: scriptedModel, Tools: echoRegistry()}
	res, err := loop.Run(context.Background(), rp.Transcript())
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Messages[2].Result.Error.Kind)
	fmt.Println(res.FinalText)
	// Output:
	// torn: true ended: false messages: 2
	// canceled
	// said hi
}

func ExampleEvents() {
	var log bytes.Buffer
	w := eventlog.NewWriter(&log, eventlog.Options{})
	loop := &toolloop.AgentLoop{Model: scriptedModel, Tools: echoRegistry(), OnEvent: w.Record}
	if _, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("say hi")}); err != nil {
		panic(err)
	}
	_ = w.Close()

	for e, err := range eventlog.Events(&log) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.Type, e.Type.Transient())
	}
	// Output:
	// run.start false
	// model.request true
	// model.response false
	// tool.execution_start true
	// tool.execution_complete false
	// model.request true
	// model.response false
	// run.end false
}
