package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/anthropic"
)

// fakeAPI stands in for the API so that the examples run offline: it
// answers every request with body, as JSON or as an event stream.
func fakeAPI(contentType, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
}

func ExampleNew() {
	srv := fakeAPI("text/event-stream", `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[],"stop_reason":null,"usage":{"input_tokens":9,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello!"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}

event: message_stop
data: {"type":"message_stop"}

`)
	defer srv.Close()

	// With a real key in ANTHROPIC_API_KEY, this is all it takes:
	//	model, err := anthropic.New(anthropic.Config{}) // DefaultModel
	model, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "sk-ant-test", HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err) // no key: it names the variables to set
		return
	}
	loop := &toolloop.AgentLoop{Model: model}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Say hello.")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.FinalText, res.StopReason, res.Usage.OutputTokens)
	// Output: Hello! stop 3
}

func ExampleModel_Generate() {
	srv := fakeAPI("application/json", `{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-5-5",
		"content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],
		"stop_reason":"tool_use","usage":{"input_tokens":40,"output_tokens":12}}`)
	defer srv.Close()

	model, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "sk-ant-test", HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &toolloop.Request{
		Messages: []toolloop.Message{toolloop.UserMessage("Weather in Paris?")},
		Tools:    []toolloop.ToolSpec{{Name: "get_weather", Description: "Get the weather for a city."}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tc := resp.Message.ToolCalls[0]
	fmt.Println(resp.StopReason, tc.ID, tc.Name, string(tc.Arguments))
	// Output: tool_use toolu_1 get_weather {"city":"Paris"}
}

func ExampleThinking() {
	srv := fakeAPI("text/event-stream", `event: message_start
data: {"type":"message_start","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[],"stop_reason":null,"usage":{"input_tokens":20,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"1071 = 2 × 462 + 147, "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"462 = 3 × 147 + 21, 147 = 7 × 21."}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"21"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":40,"output_tokens_details":{"thinking_tokens":30}}}

event: message_stop
data: {"type":"message_stop"}

`)
	defer srv.Close()

	model, err := anthropic.New(anthropic.Config{
		// DefaultModel thinks adaptively; older models take a Budget.
		Thinking: anthropic.Thinking{Adaptive: true},
		BaseURL:  srv.URL, APIKey: "sk-ant-test", HTTPClient: srv.Client(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var thought strings.Builder
	loop := &toolloop.AgentLoop{Model: model, OnEvent: func(e toolloop.Event) {
		if e.Type == toolloop.EventModelReasoningDelta {
			thought.WriteString(e.Text)
		}
	}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("GCD of 1071 and 462?")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("thought:", thought.String())
	fmt.Println("answer:", res.FinalText)
	// The thinking block stays in the transcript, signed, to be sent back.
	r := res.Messages[1].Content[0].Reasoning
	fmt.Println(r.Provider, r.Signature != "", res.Usage.ReasoningTokens)
	// Output:
	// thought: 1071 = 2 × 462 + 147, 462 = 3 × 147 + 21, 147 = 7 × 21.
	// answer: 21
	// anthropic true 30
}

func ExamplePromptCache() {
	srv := fakeAPI("application/json", `{"id":"msg_4","type":"message","role":"assistant","model":"claude-sonnet-5-5",
		"content":[{"type":"text","text":"Light rain, 18°C."}],"stop_reason":"end_turn",
		"usage":{"input_tokens":21,"cache_creation_input_tokens":1500,"cache_read_input_tokens":3000,"output_tokens":9}}`)
	defer srv.Close()

	model, err := anthropic.New(anthropic.Config{
		// The tools and system prompt stay cached as the transcript grows;
		// the latest two user turns cache the conversation so far.
		PromptCache: anthropic.PromptCache{Tools: true, System: true, Turns: 2},
		BaseURL:     srv.URL, APIKey: "sk-ant-test", HTTPClient: srv.Client(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &toolloop.Request{Messages: []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant."),
		toolloop.UserMessage("Weather in Paris?"),
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	u := resp.Usage
	fmt.Println(u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens)

	// Five breakpoints are more than the API takes: New refuses them.
	_, err = anthropic.New(anthropic.Config{PromptCache: anthropic.PromptCache{Tools: true, System: true, Turns: 3}})
	fmt.Println(errors.Is(err, anthropic.ErrConfig))
	// Output:
	// 4521 3000 1500
	// true
}
