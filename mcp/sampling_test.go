package mcp_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// TestSamplingEverything runs server-everything's sampling tool: the
// server asks the client's model, through the approval.
func TestSamplingEverything(t *testing.T) {
	t.Parallel()
	allow := func(context.Context, string, *mcp.SamplingRequest) (toolloop.Approval, error) {
		return toolloop.Approval{Approved: true}, nil
	}
	tests := []struct {
		name    string
		approve func(context.Context, string, *mcp.SamplingRequest) (toolloop.Approval, error)
		reply   string
		fail    error
		args    string
		// want is in the result's text; denied says the model was not asked.
		want    string
		failed  bool
		denied  bool
		maxToks int
	}{
		{name: "approved", approve: allow, reply: "a sampled answer", args: `{"prompt":"hello","maxTokens":50}`,
			want: "a sampled answer", maxToks: 50},
		{name: "maxTokens capped and honoured", approve: allow, reply: strings.Repeat("word ", 100),
			args: `{"prompt":"hello","maxTokens":100000}`, want: `"stopReason": "maxTokens"`, maxToks: 8},
		{name: "no approver denies", reply: "never", args: `{"prompt":"hello"}`, failed: true, denied: true,
			want: "the client allows no sampling requests"},
		{name: "denied with a reason", approve: func(context.Context, string, *mcp.SamplingRequest) (toolloop.Approval, error) {
			return toolloop.Approval{Reason: "not today"}, nil
		}, args: `{"prompt":"hello"}`, failed: true, denied: true, want: "not today"},
		{name: "approver error denies", approve: func(context.Context, string, *mcp.SamplingRequest) (toolloop.Approval, error) {
			return toolloop.Approval{Approved: true}, errTest
		}, args: `{"prompt":"hello"}`, failed: true, denied: true},
		{name: "approver panic denies", approve: func(context.Context, string, *mcp.SamplingRequest) (toolloop.Approval, error) {
			panic("approver")
		}, args: `{"prompt":"hello"}`, failed: true, denied: true},
		{name: "model failure", approve: allow, fail: errTest, args: `{"prompt":"hello"}`, failed: true, maxToks: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var asked []*toolloop.Request
			var limits []int
			model := toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
				n, _ := mcp.SamplingMaxTokens(ctx)
				mu.Lock()
				asked, limits = append(asked, req), append(limits, n)
				mu.Unlock()
				if tt.fail != nil {
					return nil, tt.fail
				}
				return &toolloop.Response{
					Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent(tt.reply)}},
					Usage:   toolloop.Usage{InputTokens: 12, OutputTokens: 5}, Model: "scripted",
				}, nil
			})
			cfg := everythingConfig(t)
			cfg.Sampling = true
			ev := &looptest.Recorder{}
			src := newSource(t, "everything", cfg, mcp.Options{
				Sampling: &mcp.Sampling{Model: model, Approve: tt.approve, MaxTokens: 8 * boolInt(tt.maxToks == 8)},
				OnEvent:  ev.Record,
			}, nil)
			ctx := testContext(t)
			res := callTool(ctx, t, src, "everything__trigger-sampling-request", tt.args)
			assert.Equal(t, tt.failed, res.IsError(), res.Text())
			if tt.failed {
				assert.Equal(t, toolloop.KindExecutionFailed, res.Error.Kind)
			}
			assert.Contains(t, res.Text(), tt.want)

			mu.Lock()
			defer mu.Unlock()
			samples := ev.Of(mcp.EventSampling)
			require.Len(t, samples, 1, "one sampling event per request")
			e := samples[0]
			assert.Equal(t, "everything", e.SourceName)
			assert.Equal(t, toolloop.SourceMCP, e.Source)
			require.NotNil(t, e.Approval)
			assert.Equal(t, !tt.denied, e.Approval.Approved)
			if tt.denied {
				assert.Empty(t, asked, "a denied request reached the model")
				return
			}
			require.Len(t, asked, 1)
			assert.Equal(t, []int{tt.maxToks}, limits)
			msgs := asked[0].Messages
			require.Len(t, msgs, 2)
			assert.Equal(t, toolloop.RoleSystem, msgs[0].Role)
			assert.Equal(t, "You are a helpful test server.", msgs[0].Text())
			assert.Equal(t, toolloop.RoleUser, msgs[1].Role)
			assert.Contains(t, msgs[1].Text(), "hello")
			assert.Empty(t, asked[0].Tools)
			if tt.fail == nil {
				require.NotNil(t, e.Usage)
				assert.Equal(t, int64(5), e.Usage.OutputTokens)
				assert.Contains(t, res.Text(), `"model": "scripted"`)
			} else {
				assert.NotEmpty(t, e.Error)
			}
		})
	}
}

// TestSamplingNotDeclared: without the config's consent the server is
// told the client has no sampling, and so offers no sampling tool.
func TestSamplingNotDeclared(t *testing.T) {
	t.Parallel()
	model := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		t.Error("the model was asked")
		return nil, errTest
	})
	src := newSource(t, "everything", everythingConfig(t), mcp.Options{Sampling: &mcp.Sampling{Model: model}}, nil)
	ctx := testContext(t)
	assert.False(t, hasTool(ctx, t, src, "everything__trigger-sampling-request"))
	assert.False(t, hasTool(ctx, t, src, "everything__trigger-elicitation-request"))
	assert.True(t, hasTool(ctx, t, src, "everything__echo"))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
