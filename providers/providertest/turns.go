package providertest

import (
	"encoding/json"
	"fmt"

	"github.com/toolloop/toolloop"
)

// The turns Run scripts (see Harness.Replies).
const (
	turnText            = "text"
	turnToolCall        = "tool_call"
	turnParallel        = "parallel_tool_calls"
	turnLength          = "length"
	turnRefusal         = "refusal"
	turnReasoning       = "reasoning"
	turnOutput          = "output"
	turnStreamText      = "stream_text"
	turnStreamToolCalls = "stream_tool_calls"
	turnStreamReasoning = "stream_reasoning"
	turnStreamLength    = "stream_length"
	turnStreamRefusal   = "stream_refusal"
	turnStreamOutput    = "stream_output"
)

// script is a turn Run asks for: its name, the golden name of its
// request, and whether the harness lacks its feature.
type script struct {
	name, golden string
	stream       bool
	lacks        func(Features) bool
}

func lacksParallel(f Features) bool  { return f.Parallel }
func lacksReasoning(f Features) bool { return f.Reasoning }
func lacksRefusal(f Features) bool   { return f.Refusal }

// answers are the turns that answer the kit's weather request, in the
// order Run checks them.
var answers = []script{
	{name: turnText, golden: "generate"},
	{name: turnToolCall, golden: "generate"},
	{name: turnParallel, golden: "generate", lacks: lacksParallel},
	{name: turnLength, golden: "generate"},
	{name: turnRefusal, golden: "generate", lacks: lacksRefusal},
	{name: turnReasoning, golden: "generate", lacks: lacksReasoning},
	{name: turnStreamText, golden: "stream", stream: true},
	{name: turnStreamToolCalls, golden: "stream", stream: true},
	{name: turnStreamLength, golden: "stream", stream: true},
	{name: turnStreamRefusal, golden: "stream", stream: true, lacks: lacksRefusal},
	{name: turnStreamReasoning, golden: "stream", stream: true, lacks: lacksReasoning},
}

// weatherTool and convertTool are the tools the kit offers; a named tool
// choice names the second.
var (
	weatherTool = toolloop.ToolSpec{
		Name:        "get_weather",
		Description: "Get the current weather for a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"],"additionalProperties":false}`),
	}
	convertTool = toolloop.ToolSpec{
		Name:        "to_fahrenheit",
		Description: "Convert a temperature from Celsius to Fahrenheit.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"celsius":{"type":"number"}},"required":["celsius"]}`),
	}
)

// weatherRequest is the request of most turns: one question, one tool.
func weatherRequest() *toolloop.Request {
	return &toolloop.Request{
		Messages: []toolloop.Message{
			toolloop.SystemMessage("You are a weather assistant."),
			toolloop.UserMessage("What's the weather in Paris?"),
		},
		Tools: []toolloop.ToolSpec{weatherTool},
	}
}

// wrapUp is the message the loop's wrap-up turn ends with.
var wrapUp = toolloop.UserMessage(fmt.Sprintf(toolloop.DefaultWrapUpPrompt, "the maximum number of model turns"))

// toolChoiceRequest is the weather request with both tools and choice;
// with wrappingUp, its transcript holds a tool turn and ends with the
// wrap-up message, as the loop's wrap-up turn (tool choice none) sends it.
func toolChoiceRequest(choice toolloop.ToolChoice, wrappingUp bool) *toolloop.Request {
	req := weatherRequest()
	req.Tools = []toolloop.ToolSpec{weatherTool, convertTool}
	req.ToolChoice = choice
	if wrappingUp {
		req.Messages = append(req.Messages,
			toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}, StopReason: toolloop.StopToolUse},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_1", Name: "get_weather", Status: toolloop.StatusOK,
				Content: []toolloop.Content{toolloop.TextContent(`{"sky":"light rain","temp_c":18}`)}}),
			wrapUp,
		)
	}
	return req
}

// reportFormat is the output format of the structured answers: a schema
// every provider's structured output takes as it is.
var reportFormat = toolloop.OutputFormat{
	Name:        "weather_report",
	Description: "The weather in a city, for a report.",
	Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"},"summary":{"type":"string"}},` +
		`"required":["city","temp_c","summary"],"additionalProperties":false}`),
}

// outputRequest is the weather request asking for format, with the
// weather tool or none.
func outputRequest(format toolloop.OutputFormat, tools bool) *toolloop.Request {
	req := weatherRequest()
	if !tools {
		req.Tools = nil
	}
	req.Output = &format
	return req
}

// canonical returns the answer an encoder writes for a turn.
func canonical(name string) Want {
	text := func(s string) []toolloop.Content { return []toolloop.Content{toolloop.TextContent(s)} }
	call := func(id, city string) toolloop.ToolCall {
		return toolloop.ToolCall{ID: id, Name: "get_weather", Arguments: json.RawMessage(`{"city":` + quote(city) + `}`)}
	}
	answer := func(cs []toolloop.Content, stop toolloop.StopReason, in, out int64, calls ...toolloop.ToolCall) Want {
		return Want{Response: toolloop.Response{
			Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: cs, ToolCalls: calls},
			StopReason: stop, Usage: toolloop.Usage{InputTokens: in, OutputTokens: out}, Model: "test-model",
		}}
	}
	thought := func(s string) []toolloop.Content {
		return []toolloop.Content{toolloop.ReasoningContent(s, toolloop.Reasoning{Signature: "c2lnbmVkIGJ5IHRoZSBwcm92aWRlcg=="})}
	}
	var w Want
	switch name {
	case turnText:
		w = answer(text("Hello! How can I help you today?"), toolloop.StopEnd, 11, 9)
	case turnToolCall:
		w = answer(nil, toolloop.StopToolUse, 62, 16, call("call_1", "Paris"))
	case turnParallel:
		w = answer(nil, toolloop.StopToolUse, 62, 48, call("call_1", "Paris"), call("call_2", "Tokyo"))
	case turnLength:
		w = answer(text("The history of Paris begins with the Parisii, a Celtic tribe who settled on the"), toolloop.StopLength, 14, 16)
	case turnRefusal:
		w = answer(text("I'm sorry, but I can't help with that request."), toolloop.StopRefusal, 25, 11)
	case turnReasoning:
		w = answer(thought("The user wants the weather in Paris, and get_weather takes a city."), toolloop.StopToolUse, 120, 212, call("call_1", "Paris"))
		w.Response.Usage.ReasoningTokens = 192
	case turnOutput:
		w = answer(text(structuredAnswer), toolloop.StopEnd, 80, 21)
	case turnStreamText:
		w = answer(text("Hello from Zürich — 東京!"), toolloop.StopEnd, 11, 8)
		w.Text = []string{"Hel", "lo", " from", " Zürich", " — ", "東京", "!"}
	case turnStreamToolCalls:
		w = answer(nil, toolloop.StopToolUse, 70, 40, call("call_1", "Zürich 🌧"), call("call_2", "東京"))
		w.Text = []string{}
	case turnStreamReasoning:
		w = answer(thought("The user wants the weather in Paris; get_weather takes a city."), toolloop.StopToolUse, 120, 212, call("call_1", "Paris"))
		w.Response.Usage.ReasoningTokens = 192
		w.Reasoning = []string{"The user wants ", "the weather in Paris", "; get_weather takes a city."}
	case turnStreamLength:
		w = answer(text("The history of Paris begins"), toolloop.StopLength, 14, 5)
		w.Text = []string{"The history", " of Paris", " begins"}
	case turnStreamRefusal:
		w = answer(text("I'm sorry, I can't help with that."), toolloop.StopRefusal, 25, 9)
		w.Text = []string{"I'm sorry,", " I can't help with that."}
	case turnStreamOutput:
		w = answer(text(structuredAnswer), toolloop.StopEnd, 80, 21)
		w.Text = []string{`{"city":"Par`, `is","temp_c":18,"summary":"Light rain, 18 `, `°C."}`}
	}
	return w
}

// structuredAnswer is the text of the structured answers.
const structuredAnswer = `{"city":"Paris","temp_c":18,"summary":"Light rain, 18 °C."}`

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
