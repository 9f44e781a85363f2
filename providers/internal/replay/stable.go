package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolloop/toolloop"
)

// stableSchemas are the input schemas of the byte-stability tests' tools,
// each written twice with its object keys in other orders, and with
// keywords beside type, properties and required at the root, which some
// SDKs carry in maps of extra fields.
var stableSchemas = [][2]string{
	{
		`{"type":"object","title":"Search","description":"Search arguments.","properties":{"query":{"type":"string","description":"What to find"},"limit":{"type":"integer","minimum":1,"maximum":50},"filters":{"type":"object","properties":{"lang":{"type":"string"},"year":{"type":"integer"}}}},"required":["query"],"additionalProperties":false}`,
		`{"additionalProperties":false,"required":["query"],"properties":{"filters":{"properties":{"year":{"type":"integer"},"lang":{"type":"string"}},"type":"object"},"limit":{"maximum":50,"minimum":1,"type":"integer"},"query":{"description":"What to find","type":"string"}},"description":"Search arguments.","title":"Search","type":"object"}`,
	},
	{
		`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"length":{"type":"integer"}},"required":["path"]}`,
		`{"required":["path"],"properties":{"length":{"type":"integer"},"offset":{"type":"integer"},"path":{"type":"string"}},"type":"object"}`,
	},
	{
		`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false,"title":"Pair"}`,
		`{"title":"Pair","additionalProperties":false,"required":["a","b"],"properties":{"b":{"type":"number"},"a":{"type":"number"}},"type":"object"}`,
	},
}

// stableNames are the names of the tools of stableSchemas, in order.
var stableNames = []string{"search", "read_file", "add"}

// StableRequest returns the request of the byte-stability tests: a
// transcript with every kind of content a provider maps (its tool
// arguments and JSON results objects of several keys), and three tools
// whose specs come from a registry, as the loop's do. Variant 0 and 1
// register the tools in other orders and write each schema with its keys
// in another order; everything else is the same, built afresh each time.
// Both variants must give the same request bytes.
func StableRequest(t testing.TB, variant int) *toolloop.Request {
	t.Helper()
	order := []int{0, 1, 2}
	if variant%2 == 1 {
		order = []int{2, 0, 1}
	}
	var reg toolloop.ToolRegistry
	for _, i := range order {
		tool, err := toolloop.NewSchemaTool(stableNames[i], "The "+stableNames[i]+" tool.",
			json.RawMessage(stableSchemas[i][variant%2]),
			func(context.Context, *toolloop.Call) (any, error) { return nil, nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	png := []byte("\x89PNG\r\n\x1a\nfake")
	return &toolloop.Request{
		Messages: []toolloop.Message{
			toolloop.SystemMessage("You are a careful research assistant."),
			{Role: toolloop.RoleUser, Content: []toolloop.Content{
				toolloop.TextContent("Find the papers and add their counts."),
				toolloop.ImageContent("image/png", png),
				toolloop.JSONContent(json.RawMessage(`{"hint":"recent","max":3,"sources":["arxiv","acl"]}`)),
			}},
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("Searching.")},
				ToolCalls: []toolloop.ToolCall{
					{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"query":"prompt caching","limit":3,"filters":{"year":2026,"lang":"en"}}`)},
					{ID: "call_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"notes.md","offset":0,"length":100}`)},
				},
				StopReason: toolloop.StopToolUse},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_1", Name: "search", Status: toolloop.StatusOK,
				Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"hits":[{"title":"A","year":2026,"count":4},{"title":"B","year":2025,"count":7}],"total":2,"next":null}`))}}),
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_2", Name: "read_file", Status: toolloop.StatusOK,
				Content: []toolloop.Content{toolloop.TextContent("# Notes\nCount both."), toolloop.ImageContent("image/png", png)}}),
			{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
				{ID: "call_3", Name: "add", Arguments: json.RawMessage(`{"b":7,"a":4}`)},
			}, StopReason: toolloop.StopToolUse},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_3", Name: "add", Status: toolloop.StatusError,
				Error: &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "overflow"}}),
			{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("The sum is 11.")}, StopReason: toolloop.StopEnd},
			toolloop.UserMessage("Thanks. And in words?"),
		},
		Tools: reg.Specs(context.Background()),
	}
}

// AssertSameBytes fails the test unless every body is byte for byte the
// first, saying where the first difference is.
func AssertSameBytes(t testing.TB, bodies [][]byte) {
	t.Helper()
	if len(bodies) < 2 {
		t.Fatalf("%d request bodies: nothing to compare", len(bodies))
	}
	for i, b := range bodies[1:] {
		if !bytes.Equal(bodies[0], b) {
			t.Errorf("request %d differs from request 1 %s", i+2, firstDifference(bodies[0], b))
		}
	}
}

// firstDifference describes where a and b first differ, with some context.
func firstDifference(a, b []byte) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	from := max(n-60, 0)
	return fmt.Sprintf("at byte %d:\n  want ...%s\n  got  ...%s", n, a[from:min(n+60, len(a))], b[from:min(n+60, len(b))])
}
