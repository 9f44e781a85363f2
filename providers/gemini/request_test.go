package gemini

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// The parts of another provider's reasoning that must never be sent.
const (
	anthropicThinking  = "The user wants pictures described; zoom first."
	anthropicSignature = "EqQBCkgIBxABGAIqQFx0aGlua2luZyBzaWduYXR1cmU="
)

// richTranscript has every kind of message and content the mapping knows,
// and reasoning of both Gemini and another provider.
func richTranscript() []toolloop.Message {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	return []toolloop.Message{
		toolloop.SystemMessage("You are terse."),
		{Role: toolloop.RoleUser, Content: []toolloop.Content{
			text("What is in these pictures?"),
			toolloop.ImageContent("image/png", png),
			{Type: toolloop.ContentImage, URI: "https://example.com/cat.jpg", MIMEType: "image/jpeg"},
			toolloop.JSONContent(json.RawMessage(`{"hint":"animals"}`)),
			{Type: toolloop.ContentImage, MIMEType: "image/bmp", Data: []byte("BM")},
			{Type: toolloop.ContentAudio, MIMEType: "audio/ogg", Data: []byte("OggS")},
		}},
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
			toolloop.ReasoningContent(anthropicThinking, toolloop.Reasoning{Provider: "anthropic", Signature: anthropicSignature}),
			text("Let me look closer."),
		}, ToolCalls: []toolloop.ToolCall{
			{ID: "toolu_A", Name: "zoom", Arguments: json.RawMessage(`{"factor":2,"big":12345678901234567890}`)},
			{ID: "toolu_B", Name: "zoom", Arguments: json.RawMessage(`{"factor": 2,`)},
			{ID: "toolu_C", Name: "list", Arguments: nil},
			{ID: "toolu_D", Name: "describe", Arguments: json.RawMessage(`["not","an","object"]`)},
		}, StopReason: toolloop.StopToolUse},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_A", Name: "zoom", Status: toolloop.StatusOK,
			Content: []toolloop.Content{text("zoomed"), toolloop.ImageContent("image/jpeg", []byte("jpeg"))}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_B", Name: "zoom", Status: toolloop.StatusError,
			Content: []toolloop.Content{text("arguments are not valid JSON")},
			Error:   &toolloop.ToolError{Kind: toolloop.KindInvalidArgs, Message: "arguments are not valid JSON"}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_C", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`["a","b"]`))}}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_D", Name: "describe", Status: toolloop.StatusError,
			Error: &toolloop.ToolError{Kind: toolloop.KindInvalidArgs, Message: "arguments must be an object"}}),
		toolloop.UserMessage("Also, be brief."),
		assistant([]toolloop.Content{
			thought("**Counting animals**", ""),
			text("A cat and a dog."),
			sig(sigText, ""),
		}, toolloop.ToolCall{ID: "gemini-call-r1-1", Name: "list", Arguments: json.RawMessage(`{}`)}),
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "gemini-call-r1-1", Name: "list", Status: toolloop.StatusOK}),
		assistant([]toolloop.Content{sig(sigStream, "")}),
		{Role: toolloop.RoleAssistant, StopReason: toolloop.StopLength},
		toolloop.SystemMessage("Answer in English."),
		toolloop.UserMessage("Thanks!"),
	}
}

func TestTranscriptMapping(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "transcript", Response: "plain.json"})
	temp := 0.2
	budget := int64(1024)
	m := modelFor(t, srv, Config{MaxTokens: 512, Temperature: &temp, ThinkingBudget: &budget})
	_, err := m.Generate(context.Background(), &toolloop.Request{Messages: richTranscript()})
	require.NoError(t, err)
	body := string(srv.Bodies()[0])
	assert.NotContains(t, body, anthropicThinking, "another provider's reasoning is never sent")
	assert.NotContains(t, body, anthropicSignature)
	assert.NotContains(t, body, "gemini-call-", "made-up IDs are never sent")
}

func TestOtherProvidersReasoningIsDropped(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "foreign_reasoning", Response: "plain.json"})
	msgs := []toolloop.Message{
		toolloop.UserMessage("What's the weather in Paris?"),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
			toolloop.ReasoningContent(anthropicThinking, toolloop.Reasoning{Provider: "anthropic", Signature: anthropicSignature}),
			toolloop.ReasoningContent("", toolloop.Reasoning{Provider: "anthropic", Encrypted: "ErcBCkgIAxABGAIiQM", Redacted: true}),
			toolloop.ReasoningContent("summary", toolloop.Reasoning{Provider: "openai", Encrypted: "gAAAAABo", Summary: true}),
		}, ToolCalls: []toolloop.ToolCall{{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "toolu_1", Name: "get_weather", Status: toolloop.StatusOK,
			Content: []toolloop.Content{text("18 °C, light rain")}}),
	}
	_, err := modelFor(t, srv, Config{}).Generate(context.Background(), &toolloop.Request{Messages: msgs, Tools: []toolloop.ToolSpec{replay.WeatherTool}})
	require.NoError(t, err)
	var body struct {
		Contents []*genai.Content `json:"contents"`
	}
	require.NoError(t, json.Unmarshal(srv.Bodies()[0], &body))
	require.Len(t, body.Contents, 3)
	model := body.Contents[1]
	require.Len(t, model.Parts, 1, "only the call is left of the assistant message")
	assert.Equal(t, &genai.FunctionCall{ID: "toolu_1", Name: "get_weather", Args: map[string]any{"city": "Paris"}}, model.Parts[0].FunctionCall)
	assert.Empty(t, model.Parts[0].ThoughtSignature)
	for _, s := range []string{anthropicThinking, anthropicSignature, "ErcBCkgIAxABGAIiQM", "gAAAAABo", "summary"} {
		assert.NotContains(t, string(srv.Bodies()[0]), s)
	}
}

// TestReasoningRoundTrip maps each recorded answer back into a request and
// checks that its parts go out as they came in.
func TestReasoningRoundTrip(t *testing.T) {
	tests := []struct{ response, want string }{
		{"tool_call.json", `[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"` + sigCall + `"}]`},
		{"parallel_tool_calls.json", `[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"` + sigParallel + `"},
			{"functionCall":{"name":"get_weather","args":{"city":"Tokyo"}}}]`},
		{"gemini3_call.json", `[{"text":"Let me check."},
			{"functionCall":{"id":"2o1lmhvq","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"` + sigGemini3 + `"},
			{"functionCall":{"id":"x7kq0c3e","name":"get_weather","args":{"city":"Tokyo"}}}]`},
		{"thoughts.json", `[{"text":"**Assessing the question**\n\nThe user wants the weather in Paris. I already know it from the tool: 18 °C and light rain.","thought":true},
			{"text":"It is 18 °C in Paris, with light rain.","thoughtSignature":"` + sigText + `"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.response, func(t *testing.T) {
			srv := serve(t, replay.Step{Response: tt.response})
			m := modelFor(t, srv, Config{})
			resp, err := m.Generate(context.Background(), replay.WeatherRequest())
			require.NoError(t, err)
			// Through JSON, as a transcript saved between turns would be.
			var msg toolloop.Message
			require.NoError(t, json.Unmarshal([]byte(replay.JSON(t, resp.Message)), &msg))
			assert.JSONEq(t, tt.want, replay.JSON(t, m.modelParts(&msg)))
		})
	}
}

func TestToolArgs(t *testing.T) {
	tests := []struct {
		args    string
		want    string
		wrapped bool
	}{
		{`{"a":1}`, `{"a":1}`, false},
		{` {"a":1.50} `, `{"a":1.50}`, false},
		{``, `null`, false},
		{`null`, `null`, false},
		{`{"a":`, `{"raw_arguments":"{\"a\":"}`, true},
		{`{"a":1} {}`, `{"raw_arguments":"{\"a\":1} {}"}`, true},
		{`[1,2]`, `{"raw_arguments":"[1,2]"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			args, wrapped := toolArgs(json.RawMessage(tt.args))
			assert.Equal(t, tt.wrapped, wrapped)
			assert.JSONEq(t, tt.want, replay.JSON(t, args))
		})
	}
}

func TestUnknownRoleIsAnError(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	_, _, err := m.params(&toolloop.Request{Messages: []toolloop.Message{{Role: "narrator"}}})
	require.Error(t, err)
	_, _, err = m.params(&toolloop.Request{Messages: []toolloop.Message{{Role: toolloop.RoleTool}}})
	require.Error(t, err)
}

func TestSchemaLoosenedAndLogged(t *testing.T) {
	var logs replay.LogRecorder
	m := mustNew(t, Config{APIKey: "unused", Logger: slog.New(&logs)})
	spec := toolloop.ToolSpec{Name: "pick", Description: "Pick one.",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
			"properties":{"a":{"type":"string","const":"x"},"b":{"type":"array","items":{"type":"integer","multipleOf":2},"uniqueItems":true},
			"c":{"anyOf":[{"type":"string","pattern":"^x"},{"type":"null","not":{}}]},"d":{"$ref":"#/$defs/d"}},
			"$defs":{"d":{"type":"object","patternProperties":{".*":{}},"additionalProperties":{"type":"string","examples":["e"]}}},
			"oneOf":[{"required":["a"]},{"required":["b"]}]}`)}
	_, config, err := m.params(&toolloop.Request{Tools: []toolloop.ToolSpec{spec}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"functionDeclarations":[{"name":"pick","description":"Pick one.","parametersJsonSchema":{"type":"object",
		"properties":{"a":{"type":"string","enum":["x"]},"b":{"type":"array","items":{"type":"integer"}},
		"c":{"anyOf":[{"type":"string","pattern":"^x"},{"type":"null"}]},"d":{"$ref":"#/$defs/d"}},
		"$defs":{"d":{"type":"object","additionalProperties":{"type":"string"}}}}}]}`, replay.JSON(t, config.Tools[0]))
	logged := logs.Attrs(slog.LevelDebug)
	require.Len(t, logged, 7)
	for _, l := range logged {
		assert.Equal(t, "pick", l["tool"])
	}
	_, _, err = m.params(&toolloop.Request{Tools: []toolloop.ToolSpec{spec}})
	require.NoError(t, err)
	assert.Len(t, logs.Attrs(slog.LevelDebug), 7, "a spec is converted and logged once")
	_, _, err = m.params(&toolloop.Request{Tools: []toolloop.ToolSpec{{Name: "bad", InputSchema: json.RawMessage(`[1]`)}}})
	require.Error(t, err)
}

func TestEditRequestAndExtras(t *testing.T) {
	srv := serve(t, replay.Step{Response: "plain.json"})
	m := modelFor(t, srv, Config{
		EditRequest: func(cfg *genai.GenerateContentConfig) {
			cfg.SafetySettings = []*genai.SafetySetting{{Category: genai.HarmCategoryDangerousContent, Threshold: genai.HarmBlockThresholdBlockOnlyHigh}}
		},
		HTTPOptions: genai.HTTPOptions{
			Headers: map[string][]string{"X-Test": {"yes"}},
			ExtrasRequestProvider: func(body map[string]any) map[string]any {
				body["labels"] = map[string]any{"team": "agents"}
				return body
			},
		},
	})
	_, err := m.Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(srv.Bodies()[0], &body))
	assert.Equal(t, []any{map[string]any{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_ONLY_HIGH"}}, body["safetySettings"])
	assert.Equal(t, map[string]any{"team": "agents"}, body["labels"])
	assert.Equal(t, "yes", srv.Requests()[0].Header.Get("X-Test"))
	assert.True(t, strings.HasPrefix(srv.Requests()[0].URL.Path, "/v1beta/"))
}

// TestThinkingConfig checks, in its golden request body, how a thinking
// level and thought summaries are asked for.
func TestThinkingConfig(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "stream_thoughts", Response: "stream_thoughts.sse"})
	m := modelFor(t, srv, Config{Model: "gemini-3-pro-preview", ThinkingLevel: "high", IncludeThoughts: true})
	require.NoError(t, replay.Collect(m, replay.WeatherRequest()).Err)
}
