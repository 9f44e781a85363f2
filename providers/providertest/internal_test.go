package providertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop"
)

func TestDiffJSON(t *testing.T) {
	tests := []struct {
		name, want, got string
		diff            []string
	}{
		{"equal, keys in another order", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, nil},
		{"a value", `{"a":{"b":"x"}}`, `{"a":{"b":"y"}}`, []string{`$.a.b: want "x", got "y"`}},
		{"a key more and one less", `{"a":1}`, `{"b":1}`, []string{"$.a: want 1, got nothing", "$.b: want nothing, got 1"}},
		{"a longer list", `[1]`, `[1,2]`, []string{"$[1]: want nothing, got 2"}},
		{"another type", `{"a":[]}`, `{"a":{}}`, []string{"$.a: want [], got {}"}},
		{"not JSON", `{}`, `{`, []string{"got is not JSON: unexpected end of JSON input"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := diffJSON([]byte(tt.want), []byte(tt.got))
			if tt.diff == nil {
				assert.Empty(t, d)
				return
			}
			assert.Equal(t, strings.Join(tt.diff, "\n"), d)
		})
	}
}

func TestCutStream(t *testing.T) {
	for _, tt := range []struct {
		body, want string
		ok         bool
	}{
		{"data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n", "data: 1\n\ndata: 2\n\n", true},
		{"data: 1\r\n\r\ndata: 2\r\n\r\n", "data: 1\r\n\r\n", true},
		{"data: 1\n\n", "", false},
	} {
		got, ok := cutStream([]byte(tt.body))
		assert.Equal(t, tt.ok, ok, "%q", tt.body)
		assert.Equal(t, tt.want, string(got), "%q", tt.body)
	}
}

func TestValidTranscript(t *testing.T) {
	call := func(id string) toolloop.ToolCall {
		return toolloop.ToolCall{ID: id, Name: "f", Arguments: json.RawMessage(`{}`)}
	}
	result := func(id string) toolloop.Message { return toolloop.ToolMessage(&toolloop.ToolResult{CallID: id}) }
	ask := toolloop.UserMessage("go")
	calls := toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{call("a"), call("b")}}
	for _, tt := range []struct {
		name  string
		msgs  []toolloop.Message
		valid bool
	}{
		{"every call answered in order", []toolloop.Message{ask, calls, result("a"), result("b"), ask}, true},
		{"out of order", []toolloop.Message{ask, calls, result("b"), result("a")}, false},
		{"a call unanswered", []toolloop.Message{ask, calls, result("a"), ask}, false},
		{"the transcript ends first", []toolloop.Message{ask, calls, result("a")}, false},
		{"a result of no call", []toolloop.Message{ask, result("a")}, false},
	} {
		assert.Equal(t, tt.valid, validTranscript(tt.msgs) == "", tt.name)
	}
}

func TestCheckSentBack(t *testing.T) {
	msg := toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
		toolloop.ReasoningContent("signed", toolloop.Reasoning{Provider: "p", Signature: "c2ln"}),
		toolloop.ReasoningContent("First.\n\nSecond.", toolloop.Reasoning{Provider: "p"}),
	}}
	tests := []struct {
		name, body string
		probs      int
	}{
		{"everything back", `{"m":[{"sig":"c2ln"},{"text":"First."},{"text":"Second."}]}`, 0},
		{"a signature lost", `{"m":[{"text":"First.\n\nSecond."}]}`, 1},
		{"a paragraph lost", `{"m":[{"sig":"c2ln","text":"First."}]}`, 1},
		{"another provider's sent", `{"m":[{"sig":"c2ln","text":"First. Second."},{"sig":"` + foreign.Signature + `"}]}`, 1},
	}
	for _, tt := range tests {
		assert.Len(t, checkSentBack(msg, []byte(tt.body)), tt.probs, tt.name)
	}
}

func TestCheckStream(t *testing.T) {
	req := weatherRequest()
	want := canonical(turnStreamText)
	resp := want.Response
	tests := []struct {
		name  string
		a     answer
		probs []string
	}{
		{"as wanted", answer{resp: &resp, text: want.Text}, nil},
		{"deltas that do not add up", answer{resp: &resp, text: []string{"Hello", " there"}},
			[]string{"the text deltas add up to", "text deltas"}},
		{"one delta", answer{resp: &resp, text: []string{resp.Message.Text()}},
			[]string{"the text came in 1 delta(s)", "text deltas"}},
		{"no response", answer{text: want.Text, probs: []string{"the stream ended without a chunk holding the response"}},
			[]string{"the stream ended without"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := tt.a.check(turnStreamText, true, req, &want, Features{})
			assert.Len(t, probs, len(tt.probs), "%q", probs)
			for i, p := range tt.probs {
				if i < len(probs) {
					assert.Contains(t, probs[i], p)
				}
			}
		})
	}
}

// TestCanonicalAnswersKeepTheRules checks that what an encoder is asked
// to write passes the kit's own rules, once a model names itself in its
// reasoning blocks.
func TestCanonicalAnswersKeepTheRules(t *testing.T) {
	for _, s := range answers {
		w := canonical(s.name)
		for _, c := range w.Response.Message.Content {
			if c.Reasoning != nil {
				c.Reasoning.Provider = "p"
			}
		}
		assert.Empty(t, rules(s.name, weatherRequest(), &w.Response, Features{}), s.name)
	}
	for _, name := range []string{turnOutput, turnStreamOutput} {
		w := canonical(name)
		assert.Empty(t, rules(name, outputRequest(reportFormat, false), &w.Response, Features{}), name)
	}
}
