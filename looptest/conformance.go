package looptest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
)

// TestTool checks that tool behaves as the [toolloop.Tool] contract says,
// running it with args, which must be valid for it:
//
//   - its spec has a valid name, a description and an object schema that
//     compiles, and Spec returns the same spec each time;
//   - args pass validation, and Run with them succeeds;
//   - unless the spec says Exclusive, four concurrent runs succeed (run the
//     test with -race to catch data races);
//   - Run with a cancelled context returns within five seconds.
//
// The tool really runs, four to six times: give it args without lasting
// effects, or a scratch workspace.
func TestTool(t *testing.T, tool toolloop.Tool, args json.RawMessage) {
	t.Helper()
	spec := tool.Spec()
	if !reflect.DeepEqual(spec, tool.Spec()) {
		t.Errorf("Spec returned two different specs")
	}
	if spec.Description == "" {
		t.Errorf("tool %s has no description: the model needs one", spec.Name)
	}
	var reg toolloop.ToolRegistry
	if err := reg.Register(tool); err != nil {
		t.Fatalf("registering the tool: %v", err)
	}
	model := NewModel(t,
		Turn{Reply: Calls(Call("conformance_1", spec.Name, string(args)))},
		Turn{Reply: Text("done")},
	)
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Limits: toolloop.Limits{MaxResultBytes: -1}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("conformance")})
	if err != nil {
		t.Fatalf("running the tool through a loop: %v", err)
	}
	if r := Results(res.Messages)["conformance_1"]; r == nil || r.IsError() {
		t.Errorf("Run with valid arguments failed: %+v", r)
	}

	call := func(ctx context.Context) (*toolloop.ToolResult, error) {
		return tool.Run(ctx, &toolloop.Call{ID: "c", Name: spec.Name, Arguments: args, Annotations: spec.Annotations})
	}
	if !spec.Exclusive {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				r, err := call(context.Background())
				if err == nil && r != nil && r.IsError() {
					err = errors.New(r.Text())
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("concurrent run %d failed: %v", i, err)
			}
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = call(ctx)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Errorf("Run with a cancelled context did not return within 5s")
		<-done
	}
}

// TestModel checks that m behaves as the [toolloop.Model] contract says:
//
//   - a plain user message gets an assistant message with a known stop
//     reason, and never an empty answer without a stop reason that
//     explains it;
//   - offered a tool, any tool calls it makes have non-empty, unique IDs,
//     names among the tools offered, and arguments that are valid JSON;
//   - a cancelled context makes Generate (and Stream, if the model has it)
//     return an error within five seconds.
//
// m is called three or four times; a scripted or replaying model must have
// that many turns.
//
// TestModel suits any Model: a wrapper, a scripted model. A provider, a
// Model that talks to an API, runs providertest.Run instead, which checks
// the same and far more against fake servers in its wire format.
func TestModel(t *testing.T, m toolloop.Model) {
	t.Helper()
	ctx := context.Background()
	check := func(what string, resp *toolloop.Response, err error, offered []toolloop.ToolSpec) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		if resp == nil {
			t.Errorf("%s: nil response without an error", what)
			return
		}
		switch resp.StopReason {
		case toolloop.StopEnd, toolloop.StopToolUse, toolloop.StopLength, toolloop.StopRefusal, "":
		default:
			t.Errorf("%s: unknown stop reason %q", what, resp.StopReason)
		}
		msg := resp.Message
		if len(msg.Content) == 0 && len(msg.ToolCalls) == 0 && resp.StopReason != toolloop.StopLength {
			t.Errorf("%s: empty answer with stop reason %q", what, resp.StopReason)
		}
		seen := map[string]bool{}
		for _, tc := range msg.ToolCalls {
			if tc.ID == "" || seen[tc.ID] {
				t.Errorf("%s: tool call ID %q is empty or repeated", what, tc.ID)
			}
			seen[tc.ID] = true
			known := false
			for _, s := range offered {
				known = known || s.Name == tc.Name
			}
			if !known {
				t.Errorf("%s: call of tool %q, which was not offered", what, tc.Name)
			}
			if !json.Valid(tc.Arguments) {
				t.Errorf("%s: call %s has arguments that are not JSON: %s", what, tc.ID, tc.Arguments)
			}
		}
	}

	req := &toolloop.Request{Messages: []toolloop.Message{toolloop.UserMessage("Say hello.")}}
	resp, err := m.Generate(ctx, req)
	check("plain message", resp, err, nil)

	tools := []toolloop.ToolSpec{{
		Name:        "get_weather",
		Description: "Get the current weather for a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}}
	req = &toolloop.Request{Messages: []toolloop.Message{toolloop.UserMessage("What is the weather in Paris?")}, Tools: tools}
	resp, err = m.Generate(ctx, req)
	check("message with a tool", resp, err, tools)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	within := func(what string, f func() error) {
		t.Helper()
		errc := make(chan error, 1)
		go func() { errc <- f() }()
		select {
		case err := <-errc:
			if err == nil {
				t.Errorf("%s with a cancelled context returned no error", what)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s with a cancelled context did not return within 5s", what)
			<-errc
		}
	}
	within("Generate", func() error {
		_, err := m.Generate(cctx, req)
		return err
	})
	if s, ok := m.(toolloop.Streamer); ok {
		within("Stream", func() error {
			for _, err := range s.Stream(cctx, req) {
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
}
