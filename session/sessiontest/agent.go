package sessiontest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/toolloop/toolloop"
)

// agent is the scripted agent the suites run: each user message makes
// the model call the tool "act" once with the message's text, then
// answer "done: TEXT". A tool named "ask" needs approval. Every run of a
// tool is counted, by its argument, so that a test can tell a call that
// ran twice.
type agent struct {
	mu   sync.Mutex
	runs map[string]int
	// usage is what each model turn reports.
	usage toolloop.Usage
	// turns counts the model's turns.
	turns int
	// onRun, if set, is told of each run of a tool.
	onRun func(text string)
}

func newAgent() *agent {
	return &agent{runs: make(map[string]int), usage: toolloop.Usage{InputTokens: 100, OutputTokens: 10}}
}

func (a *agent) ran(arg string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runs[arg]
}

type actArgs struct {
	Text string `json:"text"`
}

// loop returns an AgentLoop of the agent. With pause, calls of "ask"
// pause the run for approval.
func (a *agent) loop(pause bool) *toolloop.AgentLoop {
	var reg toolloop.ToolRegistry
	run := func(_ context.Context, in actArgs) (any, error) {
		if a.onRun != nil {
			a.onRun(in.Text)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.runs[in.Text]++
		return "did " + in.Text, nil
	}
	reg.MustRegister(toolloop.NewTool("act", "Acts.", run), toolloop.NewTool("ask", "Acts, once approved.", run))
	l := &toolloop.AgentLoop{Model: toolloop.ModelFunc(a.generate), Tools: &reg,
		ModelTable: toolloop.ModelTable{"scripted": {Price: &toolloop.Price{Input: 1000, Output: 1000}}}}
	if pause {
		l.Guard = toolloop.AskingGuard(toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if c.Name == "ask" {
				return toolloop.Verdict{Decision: toolloop.Ask, Reason: "ask needs approval"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		}))
		l.PauseForApproval = true
	}
	return l
}

// generate answers the last user message: a call of act (or ask, for a
// message that starts with "ask "), then the answer.
func (a *agent) generate(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	a.mu.Lock()
	a.turns++
	usage := a.usage
	a.mu.Unlock()
	msgs := req.Messages
	if len(msgs) == 0 {
		return nil, fmt.Errorf("sessiontest: a request with no messages")
	}
	last := msgs[len(msgs)-1]
	if last.Role == toolloop.RoleUser {
		text := last.Text()
		tool := "act"
		if strings.HasPrefix(text, "ask ") {
			tool = "ask"
		}
		args, _ := json.Marshal(actArgs{Text: text})
		id := fmt.Sprintf("call_%d", len(msgs))
		return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant,
			ToolCalls: []toolloop.ToolCall{{ID: id, Name: tool, Arguments: args}}}, Usage: usage, Model: "scripted"}, nil
	}
	// After a result: answer with what the user asked last.
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == toolloop.RoleUser {
			return &toolloop.Response{Message: assistant("done: " + msgs[i].Text()), Usage: usage, Model: "scripted"}, nil
		}
	}
	return &toolloop.Response{Message: assistant("done"), Usage: usage, Model: "scripted"}, nil
}

func assistant(text string) toolloop.Message {
	return toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent(text)}}
}
