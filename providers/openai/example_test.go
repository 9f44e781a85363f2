package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/openai"
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
	srv := fakeAPI("text/event-stream", `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-6.1-sol","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-6.1-sol","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}]}

data: [DONE]

`)
	defer srv.Close()

	// With a real key in OPENAI_API_KEY, this is all it takes (DefaultModel):
	//	model, err := openai.New(openai.Config{})
	model, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test", HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err) // no key: it names the variable to set
		return
	}
	loop := &toolloop.AgentLoop{Model: model}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Say hello.")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.FinalText, res.StopReason)
	// Output: Hello! stop
}

// An OpenAI-compatible server, such as Ollama, vLLM or llama.cpp's server,
// needs only its base URL (and often no key).
func ExampleNew_compatibleServer() {
	srv := fakeAPI("application/json", `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"qwen3:8b",
		"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52}}`)
	defer srv.Close()

	model, err := openai.New(openai.Config{Model: "qwen3:8b", BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
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
	// Output: tool_use call_1 get_weather {"city":"Paris"}
}
