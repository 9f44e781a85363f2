// Command typed runs toolloop offline for a typed answer: a scripted model
// (no API key) triages a bug report with a lookup tool and answers with a
// Triage value, not text. Its first answer breaks the schema (a severity
// that is not allowed); the loop sends the validator's message back and
// the model corrects it.
//
//	go run ./examples/typed
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

// Triage is the answer the run must produce. Its JSON Schema is inferred
// from the type, tags included, as a tool's input schema is.
type Triage struct {
	Severity  string `json:"severity" jsonschema:"enum=low,enum=medium,enum=high,enum=critical"`
	Component string `json:"component" jsonschema:"description=The part of the system at fault"`
	Summary   string `json:"summary" jsonschema:"maxLength=200"`
	Duplicate int    `json:"duplicate_of,omitempty" jsonschema:"description=An earlier ticket this one repeats,minimum=1"`
}

var tickets = map[int]string{
	4211: "Checkout fails with HTTP 502 for every card payment since the 14:05 deploy.",
	4198: "Card payments time out at checkout (payments-gateway pool exhausted).",
}

type lookupIn struct {
	ID int `json:"id" jsonschema:"minimum=1"`
}

func tools() *toolloop.ToolRegistry {
	lookup := toolloop.NewTool("lookup_ticket", "Read a support ticket by number.",
		func(_ context.Context, in lookupIn) (any, error) {
			t, ok := tickets[in.ID]
			if !ok {
				return nil, fmt.Errorf("there is no ticket %d", in.ID)
			}
			return t, nil
		})
	lookup.Annotations.ReadOnly = true
	var reg toolloop.ToolRegistry
	reg.MustRegister(lookup)
	return &reg
}

// script is what a model without native structured output might answer:
// the loop offers it a final_answer tool whose schema is Triage's.
func script() toolloop.Model {
	return looptest.Script(
		looptest.Calls(
			looptest.Call("call_1", "lookup_ticket", `{"id":4211}`),
			looptest.Call("call_2", "lookup_ticket", `{"id":4198}`),
		),
		// "urgent" is not a severity the schema allows.
		looptest.Calls(looptest.Call("call_3", "final_answer",
			`{"severity":"urgent","component":"payments-gateway","summary":"Card checkout fails after the deploy.","duplicate_of":4198}`)),
		looptest.Calls(looptest.Call("call_4", "final_answer",
			`{"severity":"critical","component":"payments-gateway","summary":"Card checkout fails after the deploy.","duplicate_of":4198}`)),
	)
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "typed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	loop := &toolloop.AgentLoop{Model: script(), Tools: tools(), OnEvent: sink.NewPrinter(out, nil)}
	fmt.Fprintln(out, "== run")
	triage, res, err := toolloop.RunTyped[Triage](ctx, loop, []toolloop.Message{
		toolloop.SystemMessage("You triage bug reports. Look up related tickets before you answer."),
		toolloop.UserMessage("Triage ticket 4211; 4198 may be related."),
	})
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(triage, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "\n== answer (a Triage, after %d turns)\n%s\n", res.Turns, b)
	return err
}
