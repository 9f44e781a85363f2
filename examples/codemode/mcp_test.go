package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/codemode"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// tracker is an MCP server with two tools, on in-memory transports.
func tracker(t *testing.T) mcp.ServerConfig {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "tracker", Version: "1.0.0"}, nil)
	type listIn struct {
		State string `json:"state" jsonschema:"open or closed"`
	}
	type issue struct {
		ID    int    `json:"id"`
		Title string `json:"title"`
		State string `json:"state"`
	}
	issues := []issue{{1, "Crash on empty input", "open"}, {2, "Slow start", "closed"}, {3, "Typo in help", "open"}}
	sdk.AddTool(srv, &sdk.Tool{Name: "list_issues", Description: "List the issues in a state."},
		func(_ context.Context, _ *sdk.CallToolRequest, in listIn) (*sdk.CallToolResult, map[string]any, error) {
			var ids []int
			for _, i := range issues {
				if i.State == in.State {
					ids = append(ids, i.ID)
				}
			}
			return nil, map[string]any{"ids": ids}, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "get-issue", Description: "Get one issue."},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			ID int `json:"id"`
		}) (*sdk.CallToolResult, issue, error) {
			for _, i := range issues {
				if i.ID == in.ID {
					return nil, i, nil
				}
			}
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no such issue"}}}, issue{}, nil
		})
	return mcp.ServerConfig{Transport: func(ctx context.Context) (sdk.Transport, error) {
		client, server := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, server, nil); err != nil {
			return nil, err
		}
		return client, nil
	}}
}

// TestMCPToolsInCodeMode: an MCP server's tools are a namespace of the
// program's API, named after the server, and its calls are inner calls
// like any other.
func TestMCPToolsInCodeMode(t *testing.T) {
	ctx := t.Context()
	src, err := mcp.New("tracker", tracker(t), nil)
	require.NoError(t, err)
	defer src.Close()
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(ctx, src))
	code := codemode.New(&reg, nil)
	require.NoError(t, reg.AddSource(ctx, code.Source()))

	api := code.API(ctx)
	assert.Contains(t, api, "tracker: {")
	assert.Contains(t, api, "list_issues(args: {")
	assert.Contains(t, api, `"get-issue"(args: {`)

	program := `const {ids} = await tools.tracker.list_issues({state: "open"});
const titles = [];
for (const id of ids) titles.push((await tools.tracker["get-issue"]({id})).title);
try { await tools.tracker["get-issue"]({id: 99}); } catch (e) { titles.push("99: " + e.kind); }
return titles.join("; ");`
	args, err := json.Marshal(map[string]string{"code": program})
	require.NoError(t, err)
	var mu sync.Mutex
	parents := map[string]string{}
	loop := &toolloop.AgentLoop{
		Tools:      &reg,
		ToolFilter: toolloop.Only(toolloop.SelectNames(codemode.DefaultName)),
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", codemode.DefaultName, string(args)))},
			looptest.Turn{Reply: looptest.Text("done")},
		),
		OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventComplete {
				mu.Lock()
				parents[e.CallID+" "+e.Tool] = e.ParentCallID
				mu.Unlock()
			}
		},
	}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Open issues?")})
	require.NoError(t, err)
	r := looptest.Results(res.Messages)["c1"]
	require.NotNil(t, r)
	assert.Equal(t, "Crash on empty input; Typo in help; 99: execution_failed", strings.TrimSpace(r.Text()))
	assert.Equal(t, map[string]string{
		"c1 run_code": "", "c1/1 tracker__list_issues": "c1", "c1/2 tracker__get-issue": "c1",
		"c1/3 tracker__get-issue": "c1", "c1/4 tracker__get-issue": "c1",
	}, parents)
}

// TestServeCodeTool: a registry served over MCP offers its code tool; a
// client's program runs there, its inner calls through the serving
// loop's guard.
func TestServeCodeTool(t *testing.T) {
	ctx := t.Context()
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("double", "Doubles a number.", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (any, error) {
		return map[string]int{"n": 2 * in.N}, nil
	}))
	reg.MustRegister(codemode.New(&reg, nil))
	loop := &toolloop.AgentLoop{
		Tools: &reg,
		Guard: toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if c.Name == "double" && strings.Contains(string(c.Arguments), "13") {
				return toolloop.Verdict{Decision: toolloop.Deny, Reason: "unlucky"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		}),
	}
	srv, err := mcp.NewServer(loop, nil)
	require.NoError(t, err)
	defer srv.Close()
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx, serverEnd) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client"}, nil).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var desc string
	for _, tl := range tools.Tools {
		if tl.Name == codemode.DefaultName {
			desc = tl.Description
		}
	}
	assert.Contains(t, desc, "double(args: {")

	program := `const out = [];
for (const n of [1, 13, 21]) {
  try { out.push((await tools.double({n})).n); } catch (e) { out.push(e.kind); }
}
return out;`
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: codemode.DefaultName, Arguments: map[string]any{"code": program}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	var got []any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(text)), &got), text)
	assert.Equal(t, []any{2.0, "denied", 42.0}, got)
	require.NoError(t, cs.Close())
	<-served
}
