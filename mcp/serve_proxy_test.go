package mcp_test

import (
	"context"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// TestServeProxiesAnotherServer serves a registry whose tools come from
// another MCP server, through this package's client: annotations,
// progress and cancellation cross both hops.
func TestServeProxiesAnotherServer(t *testing.T) {
	workProgressed := make(chan struct{})
	var progressedOnce sync.Once
	inner := sdk.NewServer(&sdk.Implementation{Name: "inner"}, nil)
	sdk.AddTool(inner, &sdk.Tool{Name: "work", Description: "Works in steps.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			for i := 1; i <= 2; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 2,
				}); err != nil {
					return nil, nil, err
				}
			}
			// Progress that trails a call's result is dropped (the call
			// is over), so the tool answers only once its progress has
			// crossed both hops, or after a while if it never does.
			select {
			case <-workProgressed:
			case <-time.After(5 * time.Second):
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "worked"}}}, nil, nil
		})
	innerCanceled := make(chan struct{})
	sdk.AddTool(inner, &sdk.Tool{Name: "block", Description: "Runs until cancelled."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1})
			<-ctx.Done()
			close(innerCanceled)
			return nil, nil, ctx.Err()
		})

	var sessions sync.WaitGroup
	defer sessions.Wait()
	src, err := mcp.New("inner", mcp.ServerConfig{Transport: func(ctx context.Context) (sdk.Transport, error) {
		ct, st := sdk.NewInMemoryTransports()
		ss, err := inner.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		sessions.Go(func() { _ = ss.Wait() })
		return ct, nil
	}}, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close()) }()
	reg := &toolloop.ToolRegistry{}
	require.NoError(t, reg.AddSource(t.Context(), src))
	srv, err := mcp.NewServer(&toolloop.AgentLoop{Tools: reg, Limits: toolloop.Limits{ReportInterval: -1}}, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()

	var mu sync.Mutex
	var progress []float64
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cs := connectMemory(t, srv, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
			switch req.Params.ProgressToken {
			case "work":
				progressedOnce.Do(func() { close(workProgressed) })
			case "block":
				cancel()
			}
		},
	}, nil)

	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	byName := map[string]*sdk.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	require.Contains(t, byName, "inner__work")
	require.NotNil(t, byName["inner__work"].Annotations)
	assert.True(t, byName["inner__work"].Annotations.ReadOnlyHint)

	params := &sdk.CallToolParams{Name: "inner__work", Arguments: map[string]any{}}
	params.SetProgressToken("work")
	res, err := cs.CallTool(t.Context(), params)
	require.NoError(t, err)
	assert.Equal(t, "worked", resultText(res))
	select {
	case <-workProgressed:
	default:
		t.Fatal("no progress crossed the proxy")
	}
	mu.Lock()
	require.NotEmpty(t, progress)
	assert.Subset(t, []float64{1, 2}, progress[:1], "the inner server's own progress values")
	mu.Unlock()

	block := &sdk.CallToolParams{Name: "inner__block", Arguments: map[string]any{}}
	block.SetProgressToken("block")
	_, err = cs.CallTool(ctx, block)
	require.ErrorIs(t, err, context.Canceled)
	select {
	case <-innerCanceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancellation did not reach the inner server")
	}
}
