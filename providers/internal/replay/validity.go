package replay

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// The helpers of the providers' transcript-validity tests: every request a
// loop would send for the core's golden transcripts and for the shapes
// context management and budgets give a transcript, mapped through each
// provider's request builder and checked against the API's rules.

// GoldenTranscripts loads the transcript of every core golden file,
// skipping files without one.
func GoldenTranscripts(t testing.TB) map[string][]toolloop.Message {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no core golden files found")
	}
	out := map[string][]toolloop.Message{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Transcript []toolloop.Message `json:"transcript"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f.Transcript != nil {
			out[strings.TrimSuffix(filepath.Base(p), ".json")] = f.Transcript
		}
	}
	return out
}

// WrapUp is the user message the loop's wrap-up turn appends.
var WrapUp = toolloop.UserMessage(fmt.Sprintf(toolloop.DefaultWrapUpPrompt, "the maximum number of model turns"))

// Call is a tool call with small fixed arguments.
func Call(id, name string) toolloop.ToolCall {
	return toolloop.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{"q":"x"}`)}
}

// Result is the tool message of a successful call whose output is text.
func Result(id, name, text string) toolloop.Message {
	return toolloop.ToolMessage(&toolloop.ToolResult{CallID: id, Name: name, Status: toolloop.StatusOK,
		Content: []toolloop.Content{toolloop.TextContent(text)}})
}

// EdgeTranscripts are the shapes context management and budgets give a
// transcript, built by hand; own(text, callID) makes a reasoning block of
// the provider under test.
func EdgeTranscripts(own func(text, callID string) toolloop.Content) map[string][]toolloop.Message {
	sys := toolloop.SystemMessage("You are terse.")
	ask := toolloop.UserMessage("Find the bug.")
	stub := "[error output of grep (Call c1, 5120 bytes) cleared to save context; Call the tool again if you need it]"
	cleared := &toolloop.ToolResult{CallID: "c1", Name: "grep", Status: toolloop.StatusError,
		Content: []toolloop.Content{toolloop.TextContent(stub)},
		Error:   &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: stub},
		Meta:    toolloop.ResultMeta{Bytes: 5120, Cleared: true}}
	foreign := toolloop.ReasoningContent("another provider's thoughts",
		toolloop.Reasoning{Provider: "elsewhere", Signature: "Zm9yZWlnbg==", CallID: "c1"})
	return map[string][]toolloop.Message{
		"compacted": {sys, ask,
			toolloop.UserMessage("[Summary of the earlier part of this conversation, compacted to save context]\n\nTwo files read."),
			toolloop.UserMessage("Remember: answer in one sentence."),
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{Call("c3", "read")}},
			Result("c3", "read", "package main"),
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("Done.")}},
		},
		"wrap_up": {sys, ask,
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{Call("c1", "grep"), Call("c2", "read")}},
			Result("c1", "grep", "main.go:12"), Result("c2", "read", "package main"),
			WrapUp,
		},
		"cleared_error_stub": {sys, ask,
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{Call("c1", "grep")}},
			toolloop.ToolMessage(cleared),
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{Call("c2", "read")}},
			Result("c2", "read", "package main"),
			WrapUp,
		},
		"own_reasoning": {sys, ask,
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{own("Grep first.", ""), toolloop.TextContent("Looking."), own("", "c1")},
				ToolCalls: []toolloop.ToolCall{Call("c1", "grep")}},
			Result("c1", "grep", "main.go:12"),
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{own("Then read.", "c2")},
				ToolCalls: []toolloop.ToolCall{Call("c2", "read")}},
			Result("c2", "read", "package main"),
		},
		"foreign_reasoning": {sys, ask,
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{foreign, toolloop.TextContent("Looking.")},
				ToolCalls: []toolloop.ToolCall{Call("c1", "grep")}},
			Result("c1", "grep", "main.go:12"),
			WrapUp,
		},
	}
}

// ValidityCase is one request to map: a transcript's messages up to a
// model turn, with the tools its calls name and a tool choice.
type ValidityCase struct {
	Name string
	Req  *toolloop.Request
}

// ValidityCases returns, for every golden and edge transcript, each
// request a loop would send on the way (the messages before each assistant
// message), and the whole transcript (a user message added if it ends
// with the model's answer), with tool choice auto and, as a wrap-up turn
// sends it, none.
func ValidityCases(t testing.TB, own func(text, callID string) toolloop.Content) []ValidityCase {
	t.Helper()
	all := GoldenTranscripts(t)
	for name, msgs := range EdgeTranscripts(own) {
		if err := looptest.Validate(msgs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		all["edge_"+name] = msgs
	}
	var out []ValidityCase
	for name, msgs := range all {
		tools := ToolsOf(msgs)
		var prefixes [][]toolloop.Message
		for k, m := range msgs {
			if m.Role == toolloop.RoleAssistant && k > 0 {
				prefixes = append(prefixes, msgs[:k])
			}
		}
		whole := slices.Clone(msgs)
		if whole[len(whole)-1].Role == toolloop.RoleAssistant {
			whole = append(whole, toolloop.UserMessage("Go on."))
		}
		prefixes = append(prefixes, whole)
		for i, p := range prefixes {
			for _, mode := range []toolloop.ToolChoiceMode{toolloop.ToolChoiceAuto, toolloop.ToolChoiceNone} {
				out = append(out, ValidityCase{
					Name: fmt.Sprintf("%s/%d_of_%d/%s", name, i+1, len(prefixes), ModeName(mode)),
					Req:  &toolloop.Request{Messages: p, Tools: tools, ToolChoice: toolloop.ToolChoice{Mode: mode}},
				})
			}
		}
	}
	slices.SortFunc(out, func(a, b ValidityCase) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ModeName names a tool choice mode in test names; the zero mode is auto.
func ModeName(mode toolloop.ToolChoiceMode) string {
	if mode == toolloop.ToolChoiceAuto {
		return "auto"
	}
	return string(mode)
}

// ToolsOf returns a spec for every tool the transcript's calls name.
func ToolsOf(msgs []toolloop.Message) []toolloop.ToolSpec {
	var names []string
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	slices.Sort(names)
	specs := make([]toolloop.ToolSpec, len(names))
	for i, n := range names {
		specs[i] = toolloop.ToolSpec{Name: n, Description: "A tool.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	return specs
}

// Body marshals SDK parameters and decodes them as the wire sees them.
func Body(t testing.TB, params any) map[string]any {
	t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Items returns a decoded JSON array as its objects; anything else is
// empty.
func Items(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		m, _ := x.(map[string]any)
		out = append(out, m)
	}
	return out
}

// Keys returns the keys of m, sorted.
func Keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
