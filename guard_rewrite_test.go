package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// capLimit rewrites {"limit":n} to at most 10.
func capLimit(_ context.Context, c *toolloop.Call) (json.RawMessage, error) {
	var in struct {
		Limit int `json:"limit"`
	}
	if err := json.Unmarshal(c.Arguments, &in); err != nil {
		return nil, err
	}
	if in.Limit <= 10 {
		return nil, nil
	}
	return json.RawMessage(`{"limit":10}`), nil
}

func TestRuleRewrite(t *testing.T) {
	failing := func(context.Context, *toolloop.Call) (json.RawMessage, error) {
		return nil, errors.New("cannot parse")
	}
	tests := []struct {
		name     string
		decision toolloop.Decision
		rewrite  func(context.Context, *toolloop.Call) (json.RawMessage, error)
		args     string
		want     toolloop.Decision
		wantArgs string // "" for none
	}{
		{"modify rewrites", toolloop.Modify, capLimit, `{"limit":50}`, toolloop.Modify, `{"limit":10}`},
		{"no decision with a rewrite modifies", "", capLimit, `{"limit":50}`, toolloop.Modify, `{"limit":10}`},
		{"allow with a rewrite modifies", toolloop.Allow, capLimit, `{"limit":50}`, toolloop.Modify, `{"limit":10}`},
		{"nothing to rewrite allows", toolloop.Modify, capLimit, `{"limit":5}`, toolloop.Allow, ""},
		{"ask about the rewritten call", toolloop.Ask, capLimit, `{"limit":50}`, toolloop.Ask, `{"limit":10}`},
		{"ask with nothing to rewrite", toolloop.Ask, capLimit, `{"limit":5}`, toolloop.Ask, ""},
		{"a rewrite error denies", toolloop.Modify, failing, `{"limit":50}`, toolloop.Deny, ""},
		{"deny never rewrites", toolloop.Deny, failing, `{"limit":50}`, toolloop.Deny, ""},
		{"modify without a rewrite denies", toolloop.Modify, nil, `{"limit":50}`, toolloop.Deny, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "cap", Tools: []string{"search"}, Decision: tt.decision, Reason: "limit capped", Rewrite: tt.rewrite}}}
			call := &toolloop.Call{ID: "c1", Name: "search", Arguments: json.RawMessage(tt.args)}
			v := g.Check(context.Background(), call)
			assert.Equal(t, tt.want, v.Decision)
			assert.Equal(t, "cap", v.Rule)
			if tt.wantArgs == "" {
				assert.Nil(t, v.Arguments)
			} else {
				assert.JSONEq(t, tt.wantArgs, string(v.Arguments))
			}
			assert.JSONEq(t, tt.args, string(call.Arguments), "the guard must not change the call itself")
		})
	}
}

// In a run, a rule's rewrite is a modify like any other: the tool runs
// with the new arguments, the model is told, and arguments that break
// the schema fail the call.
func TestRuleRewriteInARun(t *testing.T) {
	var got atomic.Int64
	type searchIn struct {
		Limit int `json:"limit" jsonschema:"maximum=100"`
	}
	search := toolloop.NewTool("search", "Search.", func(_ context.Context, in searchIn) (any, error) {
		got.Store(int64(in.Limit))
		return "results", nil
	})
	guard := &toolloop.RuleGuard{Rules: []toolloop.Rule{
		{Name: "cap", Tools: []string{"search"}, Decision: toolloop.Modify, Reason: "at most 10 results", Rewrite: capLimit},
	}}
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: registry(t, search), Guard: guard}, looptest.Call("c1", "search", `{"limit":50}`))
	require.NoError(t, err)
	r := resultOf(t, res, "c1")
	require.False(t, r.IsError(), r.Text())
	assert.EqualValues(t, 10, got.Load())
	assert.Equal(t, []string{"guard: cap"}, r.Meta.Modified)
	assert.Contains(t, r.Text(), "at most 10 results", "the model is told why")

	bad := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "bad", Rewrite: func(context.Context, *toolloop.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"limit":1000}`), nil
	}}}}
	got.Store(0)
	res, err = oneTurn(t, &toolloop.AgentLoop{Tools: registry(t, search), Guard: bad}, looptest.Call("c1", "search", `{"limit":50}`))
	require.NoError(t, err)
	r = resultOf(t, res, "c1")
	require.True(t, r.IsError())
	assert.Equal(t, toolloop.KindInvalidArgs, r.Error.Kind)
	assert.Zero(t, got.Load(), "the tool must not run with arguments its schema refuses")
}

func TestMayAsk(t *testing.T) {
	asks := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask}}}
	tests := []struct {
		name  string
		guard toolloop.Guard
		want  bool
	}{
		{"zero rule guard", &toolloop.RuleGuard{}, false},
		{"rule that asks", asks, true},
		{"default ask", &toolloop.RuleGuard{Default: toolloop.Ask}, true},
		{"rules that do not ask", &toolloop.RuleGuard{Rules: []toolloop.Rule{{Decision: toolloop.Deny}, {Decision: toolloop.Modify, Rewrite: capLimit}}}, false},
		{"chain with an asking guard", toolloop.Guards(&toolloop.RuleGuard{}, toolloop.Guards(asks)), true},
		{"chain without", toolloop.Guards(&toolloop.RuleGuard{}, toolloop.GuardFunc(nil)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := tt.guard.(toolloop.Asker)
			require.True(t, ok)
			assert.Equal(t, tt.want, a.MayAsk())
		})
	}
	_, ok := toolloop.Guard(toolloop.GuardFunc(nil)).(toolloop.Asker)
	assert.False(t, ok, "a GuardFunc does not say, so it is taken not to ask")
}
