package mcp_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// With an Approver, the server's side decides; the client is not asked.
func TestServeApproverDecides(t *testing.T) {
	f := newServeFixture()
	var asked atomic.Int64
	f.loop.Approver = toolloop.ApproverFunc(func(_ context.Context, c *toolloop.Call, reason string) (toolloop.Approval, error) {
		return toolloop.Approval{Approved: string(c.Arguments) == `{"path":"/tmp/ok"}`, Reason: "server policy"}, nil
	})
	srv := newServe(t, f, nil)
	cs := connectMemory(t, srv, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	ok, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/tmp/ok"}})
	require.NoError(t, err)
	assert.False(t, ok.IsError, resultText(ok))
	no, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/"}})
	require.NoError(t, err)
	assert.True(t, no.IsError)
	assert.Equal(t, string(toolloop.KindDenied), callKind(no))
	assert.Zero(t, asked.Load())
	assert.Equal(t, []string{"/tmp/ok"}, f.dangerRuns())
}

// An agent served as a tool whose run pauses for approval: the client is
// asked about the child's call, and the child's run resumes.
func TestServeApprovalOfAChildAgent(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol "+version, func(t *testing.T) {
			f := newServeFixture()
			child := &toolloop.AgentLoop{
				Model: looptest.NewModel(t,
					looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "danger", `{"path":"/tmp/child"}`))},
					looptest.Turn{Reply: looptest.Text("the child is done")},
				),
				Tools:            f.loop.Tools,
				Guard:            f.loop.Guard,
				PauseForApproval: true,
			}
			reg := &toolloop.ToolRegistry{}
			reg.MustRegister(toolloop.NewAgentTool("helper", "Does things, some needing approval.", child))
			srv, err := mcp.NewServer(&toolloop.AgentLoop{Tools: reg}, nil)
			require.NoError(t, err)
			defer srv.Close()
			var asked []string
			cs := connectMemory(t, srv, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
				},
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "helper", Arguments: map[string]any{"task": "clean up"}})
			require.NoError(t, err)
			assert.False(t, res.IsError, resultText(res))
			assert.Equal(t, "the child is done", resultText(res))
			require.Len(t, asked, 1)
			assert.Contains(t, asked[0], "/tmp/child")
			assert.Equal(t, []string{"/tmp/child"}, f.dangerRuns())
		})
	}
}

// With polling off, no goroutine watches the registry, and the tools are
// still read at each tools/list.
func TestServeWithoutPolling(t *testing.T) {
	f := newServeFixture()
	srv := newServe(t, f, &mcp.ServeOptions{ListPollInterval: -1})
	changed := make(chan struct{}, 10)
	cs := connectMemory(t, srv, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	f.loop.Tools.MustRegister(toolloop.NewTool("late", "Came later.", func(context.Context, struct{}) (any, error) { return "late", nil }))
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "late", Arguments: map[string]any{}})
	require.NoError(t, err, "a call reads the registry first")
	assert.Equal(t, "late", resultText(res))
	select {
	case <-changed: // the SDK announces the change it made
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed notification")
	}
}
