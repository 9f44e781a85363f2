package openai_test

import (
	"context"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/openai"
)

func ExampleNewResponses() {
	srv := fakeAPI("text/event-stream", `event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":0,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":1,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"A greeting."}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hello!"}

event: response.completed
data: {"type":"response.completed","sequence_number":3,"response":{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-6.1-sol","output":[{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA...","summary":[{"type":"summary_text","text":"A greeting."}]},{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello!","annotations":[]}]}],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":24},"total_tokens":42}}}

`)
	defer srv.Close()

	// With a real key in OPENAI_API_KEY, this is all it takes:
	//	model, err := openai.NewResponses(openai.Config{ReasoningSummary: "auto"})
	model, err := openai.NewResponses(openai.Config{ReasoningSummary: "auto",
		BaseURL: srv.URL, APIKey: "sk-test", HTTPClient: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	loop := &toolloop.AgentLoop{Model: model, OnEvent: func(e toolloop.Event) {
		if e.Type == toolloop.EventModelReasoningDelta {
			fmt.Println("thinking:", e.Text)
		}
	}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Say hello.")})
	if err != nil {
		fmt.Println(err)
		return
	}
	last := res.Messages[len(res.Messages)-1]
	fmt.Println(res.FinalText, res.StopReason, res.Usage.ReasoningTokens)
	// The reasoning stays in the transcript, to be sent back next turn.
	fmt.Println(last.Content[0].Type, last.Content[0].Reasoning.Provider)
	// Output:
	// thinking: A greeting.
	// Hello! stop 24
	// reasoning openai.responses
}
