package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

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
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":9,"output_tokens":1}}}

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
	//	model := anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5"})
	model := anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "sk-ant-test", HTTPClient: srv.Client()})
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
	srv := fakeAPI("application/json", `{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5",
		"content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],
		"stop_reason":"tool_use","usage":{"input_tokens":40,"output_tokens":12}}`)
	defer srv.Close()

	model := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "sk-ant-test", HTTPClient: srv.Client()})
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
