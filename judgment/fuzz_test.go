package judgment_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/judgment"
)

// FuzzGuard feeds the guard arbitrary answers: it must never panic, and
// it may allow only when the answer is exactly an allow verdict.
func FuzzGuard(f *testing.F) {
	for _, s := range []string{`{"decision":"allow","reason":"x"}`, `{"decision":"deny","reason":"x"}`, `{"decision":"allow"}`,
		`{"reason":"x","decision":"allow"} `, `{"decision":"allow","reason":"x","decision":"deny"}`, `[]`, `{`, ``} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, answer string, viaTool bool) {
		resp := text(answer)
		if viaTool {
			resp = toolCalls(verdictCall(answer))
		}
		g := &judgment.Guard{Model: toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
			return resp, nil
		})}
		v := g.Check(context.Background(), judgedCall())
		if v.Decision != toolloop.Allow {
			return
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(answer), &got); err != nil || len(got) != 2 || got["decision"] != "allow" {
			t.Fatalf("allowed on %q", answer)
		}
		if _, ok := got["reason"].(string); !ok {
			t.Fatalf("allowed on %q", answer)
		}
	})
}
