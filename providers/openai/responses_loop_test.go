package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// withoutReasoning returns msgs less their reasoning blocks, so that the
// transcripts of the two APIs compare.
func withoutReasoning(msgs []toolloop.Message) []toolloop.Message {
	out := make([]toolloop.Message, len(msgs))
	for i, m := range msgs {
		var cs []toolloop.Content
		for _, c := range m.Content {
			if c.Type != toolloop.ContentReasoning {
				cs = append(cs, c)
			}
		}
		m.Content = cs
		out[i] = m
	}
	return out
}

// TestResponsesAgentLoop runs the conversation of TestAgentLoop through
// the Responses API and ends with the same transcript as Chat Completions.
func TestResponsesAgentLoop(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "responses_loop_turn1", Response: rapi("loop_turn1.sse")},
		replay.Step{Golden: "responses_loop_turn2", Response: rapi("loop_turn2.sse")},
		replay.Step{Golden: "responses_loop_turn3", Response: rapi("loop_turn3.sse")},
	)
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{Model: responsesFor(t, srv, Config{}), Tools: replay.WeatherTools(), OnEvent: rec.Record}
	input := []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant. Use the tools."),
		toolloop.UserMessage("Compare the weather in Paris and Tokyo, with Paris in Fahrenheit too."),
	}
	res, err := loop.Run(context.Background(), input)
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, 3, res.Turns)
	assert.Equal(t, toolloop.StopEnd, res.StopReason)
	assert.Equal(t, toolloop.Usage{InputTokens: 96 + 180 + 214, OutputTokens: 44 + 18 + 21}, res.Usage)
	assert.NotEmpty(t, rec.Of(toolloop.EventModelDelta), "text deltas become model.delta events")
	// The Chat Completions test owns this file: compare, never rewrite.
	want := looptest.Load(t, filepath.Join("testdata", "transcripts", "agent_loop.json"))
	looptest.AssertTranscript(t, withoutReasoning(want), withoutReasoning(res.Messages))
}

// TestResponsesAgentLoopReasoning runs two turns of a reasoning model: the
// second request sends the first turn's reasoning item, with its encrypted
// content, back just before the function call it preceded.
func TestResponsesAgentLoopReasoning(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "responses_reasoning_turn1", Response: rapi("reasoning_turn1.sse")},
		replay.Step{Golden: "responses_reasoning_turn2", Response: rapi("reasoning_turn2.sse")},
	)
	var rec looptest.Recorder
	m := responsesFor(t, srv, Config{Model: "gpt-5-mini", ReasoningEffort: "low", ReasoningSummary: "auto"})
	loop := &toolloop.AgentLoop{Model: m, Tools: replay.WeatherTools(), OnEvent: rec.Record}
	res, err := loop.Run(context.Background(), []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant."),
		toolloop.UserMessage("What's the weather in Paris?"),
	})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, 2, res.Turns)
	assert.Equal(t, "It's 18°C in Paris with light rain.", res.FinalText)
	assert.Equal(t, toolloop.Usage{InputTokens: 88 + 1310, OutputTokens: 150 + 90, CacheReadTokens: 1152, ReasoningTokens: 128 + 64}, res.Usage)
	assert.NotEmpty(t, rec.Of(toolloop.EventModelReasoningDelta), "reasoning deltas become model.reasoning_delta events")
	replay.AssertGoldenTranscript(t, filepath.Join("testdata", "responses_api", "reasoning_loop_transcript.json"), res.Messages, *update)

	// What the golden body shows, said outright: the reasoning item, with
	// its encrypted content, comes right before its function call.
	bodies := srv.Bodies()
	require.Len(t, bodies, 2)
	var body struct {
		Input []struct {
			Type             string `json:"type"`
			ID               string `json:"id"`
			CallID           string `json:"call_id"`
			EncryptedContent string `json:"encrypted_content"`
		} `json:"input"`
	}
	require.NoError(t, json.Unmarshal(bodies[1], &body))
	var types []string
	for _, in := range body.Input {
		types = append(types, in.Type)
	}
	assert.Equal(t, []string{"", "reasoning", "function_call", "function_call_output"}, types)
	require.Len(t, body.Input, 4)
	assert.Equal(t, "rs_68a1c5a1000281902b3c4d5e6f708192", body.Input[1].ID)
	assert.Equal(t, encrypted1, body.Input[1].EncryptedContent)
	assert.Equal(t, "call_Wq4Ht7Ln2Pb9Xs1Kd6Vr3Zm0", body.Input[2].CallID)
}

// TestResponsesDropsOtherProvidersReasoning: reasoning another provider
// wrote is neither sent nor rendered as text.
func TestResponsesDropsOtherProvidersReasoning(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "responses_foreign_reasoning", Response: rapi("text.json")})
	thinking := toolloop.ReasoningContent("The user wants Paris. Secret plan.", toolloop.Reasoning{
		Provider: "anthropic", Signature: "EqQBCkgIARABGAIiQL2sig", ID: "thinking_1"})
	redacted := toolloop.ReasoningContent("", toolloop.Reasoning{
		Provider: "anthropic", Encrypted: "EmwKAhgBEgy3va3pzix/LafPsn4a", Redacted: true})
	msgs := []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant."),
		toolloop.UserMessage("What's the weather in Paris?"),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{thinking, redacted, toolloop.TextContent("Checking.")},
			ToolCalls:  []toolloop.ToolCall{{ID: "toolu_01A", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
			StopReason: toolloop.StopToolUse},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_01A", Name: "get_weather", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.TextContent("18°C, light rain")}}),
	}
	_, err := responsesFor(t, srv, Config{}).Generate(context.Background(), &toolloop.Request{Messages: msgs, Tools: []toolloop.ToolSpec{replay.WeatherTool}})
	require.NoError(t, err)
	body := srv.Bodies()[0]
	for _, s := range []string{"Secret plan", "EqQBCkgIARABGAIiQL2sig", "EmwKAhgBEgy3va3pzix", "thinking_1", `"reasoning"`} {
		assert.False(t, bytes.Contains(body, []byte(s)), "the request carries %q", s)
	}
}
