package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/telemetry"
)

// A token of the GitHub shape, built so no scanner takes this file for a
// leak.
var fakeToken = "ghp_" + "k3Jd9Qx2Lm8Vb4Nc7Ws1Ty6Ue5Ri0Op3Za2Xs4"

// deployTool reports progress and fails, both with a secret in the text.
type deployTool struct{}

func (deployTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "deploy", Description: "Deploys.", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (deployTool) Run(_ context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	call.ReportProgress(toolloop.Progress{Message: "pushing with GITHUB_TOKEN=" + fakeToken, Done: 1, Total: 2})
	return nil, fmt.Errorf("push rejected for %s", fakeToken)
}

func runDeploy(t *testing.T, opts telemetry.Options) (tool, run sdktrace.ReadOnlySpan) {
	t.Helper()
	h := newHarness(t, opts)
	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(deployTool{})
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "deploy", `{"token":"`+fakeToken+`"}`))},
		looptest.Turn{Err: fmt.Errorf("upstream said: bad credentials %s", fakeToken)})
	loop := &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: h.obs.Record}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("deploy")})
	require.Error(t, err)
	tools := h.named("execute_tool deploy")
	require.Len(t, tools, 1)
	runs := h.named("invoke_agent")
	require.Len(t, runs, 1)
	return tools[0], runs[0]
}

// spanText returns every piece of text a span holds: attributes, events,
// status.
func spanText(s sdktrace.ReadOnlySpan) string {
	text := s.Name() + "\n" + s.Status().Description + "\n"
	for _, a := range s.Attributes() {
		text += string(a.Key) + "=" + a.Value.String() + "\n"
	}
	for _, e := range s.Events() {
		text += e.Name + "\n"
		for _, a := range e.Attributes {
			text += string(a.Key) + "=" + a.Value.String() + "\n"
		}
	}
	return text
}

func TestContentOffByDefault(t *testing.T) {
	tool, run := runDeploy(t, telemetry.Options{})

	assert.Equal(t, codes.Error, tool.Status().Code)
	assert.Equal(t, string(toolloop.KindExecutionFailed), tool.Status().Description, "the status says the error type only")
	assert.Equal(t, "_OTHER", run.Status().Description)
	for _, key := range []string{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
		assert.Equal(t, attribute.EMPTY, attr(tool, key).Type(), "%s is not recorded", key)
	}
	require.Len(t, tool.Events(), 1)
	for _, a := range tool.Events()[0].Attributes {
		assert.NotEqual(t, "toolloop.progress.message", string(a.Key), "the progress message is not recorded")
	}
	assert.NotContains(t, spanText(tool)+spanText(run), fakeToken)
	assert.NotContains(t, spanText(tool)+spanText(run), "push rejected", "no free text at all")
}

func TestContentRedacted(t *testing.T) {
	tool, run := runDeploy(t, telemetry.Options{RecordContent: true})

	assert.JSONEq(t, `{"token":"[REDACTED:github_token]"}`, attr(tool, "gen_ai.tool.call.arguments").AsString())
	assert.Equal(t, "push rejected for [REDACTED:github_token]", attr(tool, "gen_ai.tool.call.result").AsString())
	assert.Equal(t, "push rejected for [REDACTED:github_token]", tool.Status().Description)
	assert.Contains(t, run.Status().Description, "bad credentials [REDACTED:github_token]")
	require.Len(t, tool.Events(), 1)
	var progress string
	for _, a := range tool.Events()[0].Attributes {
		if a.Key == "toolloop.progress.message" {
			progress = a.Value.AsString()
		}
	}
	assert.Equal(t, "pushing with GITHUB_TOKEN=[REDACTED:github_token]", progress)
	assert.NotContains(t, spanText(tool)+spanText(run), fakeToken)
}

func TestContentCustomRedact(t *testing.T) {
	calls := 0
	opts := telemetry.Options{RecordContent: true, Redact: func(e toolloop.Event) toolloop.Event {
		calls++
		e.Arguments = json.RawMessage(`{}`)
		if e.Result != nil {
			e.Result = toolloop.ErrorResult(toolloop.Errorf(toolloop.KindExecutionFailed, "hidden"))
		}
		if e.Progress != nil {
			e.Progress = &toolloop.Progress{Message: "hidden"}
		}
		e.Error = "hidden"
		return e
	}}
	tool, run := runDeploy(t, opts)
	assert.Positive(t, calls)
	assert.Equal(t, "{}", attr(tool, "gen_ai.tool.call.arguments").AsString())
	assert.Equal(t, "hidden", tool.Status().Description)
	assert.Equal(t, "hidden", run.Status().Description)

	calls = 0
	runDeploy(t, telemetry.Options{Redact: opts.Redact})
	assert.Zero(t, calls, "Redact is not called when no content is recorded")
}
