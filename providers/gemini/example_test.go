package gemini_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/gemini"
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
	srv := fakeAPI("text/event-stream", `data: {"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],"modelVersion":"gemini-3.8-flash"}

data: {"candidates":[{"content":{"parts":[{"text":"lo!"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,"thoughtsTokenCount":20,"totalTokenCount":32},"modelVersion":"gemini-3.8-flash"}

`)
	defer srv.Close()

	// With a real key in GEMINI_API_KEY, this is all it takes:
	//	model, err := gemini.New(gemini.Config{}) // DefaultModel
	model, err := gemini.New(gemini.Config{BaseURL: srv.URL, APIKey: "test-key",
		Backend: genai.BackendGeminiAPI, HTTPClient: srv.Client()})
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
	fmt.Println(res.FinalText, res.StopReason, res.Usage.OutputTokens, res.Usage.ReasoningTokens)
	// Output: Hello! stop 23 20
}

func ExampleModel_Generate() {
	srv := fakeAPI("application/json", `{"candidates":[{"content":{"role":"model","parts":[
		{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CikB0e2KbQ=="}]},
		"finishReason":"STOP","index":0}],"responseId":"r1","modelVersion":"gemini-3.8-flash"}`)
	defer srv.Close()

	model, err := gemini.New(gemini.Config{BaseURL: srv.URL, APIKey: "test-key", Backend: genai.BackendGeminiAPI, HTTPClient: srv.Client()})
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
	// The signature rides along, tied to the call, for the next request.
	r := resp.Message.Content[0].Reasoning
	fmt.Println(r.Provider, r.Signature, r.CallID == tc.ID)
	// Output:
	// tool_use gemini-call-r1-1 get_weather {"city":"Paris"}
	// gemini CikB0e2KbQ== true
}
