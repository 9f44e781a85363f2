package toolloop_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

// guardCall returns a call as the pipeline hands it to a guard.
func guardCall(name string, src toolloop.SourceKind, srcName string, ann toolloop.Annotations) *toolloop.Call {
	return &toolloop.Call{
		ID: "call_1", Name: name, Arguments: json.RawMessage(`{"path":"a"}`),
		Annotations: ann, Source: src, SourceName: srcName, RunID: "run_1", Turn: 1,
	}
}

func TestRuleGuardZeroValueAllows(t *testing.T) {
	var g toolloop.RuleGuard
	v := g.Check(context.Background(), guardCall("anything", toolloop.SourceMCP, "x", toolloop.Annotations{Destructive: true}))
	assert.Equal(t, toolloop.Allow, v.Decision)
	assert.Equal(t, "default", v.Rule)
}

func TestRuleGuard(t *testing.T) {
	g := &toolloop.RuleGuard{
		Rules: []toolloop.Rule{
			{Name: "no-shell", Tools: []string{"shell", "bash"}, Decision: toolloop.Deny, Reason: "no shells"},
			{Name: "github-writes", Tools: []string{"github__create_*", "github__delete_*"}, Decision: toolloop.Ask, Reason: "writes to GitHub"},
			{Name: "reads", Tools: []string{"read_*", "list_?ir"}, Decision: toolloop.Allow},
			{Name: "untrusted-server", Source: toolloop.SourceMCP, SourceName: "untrusted-*", Decision: toolloop.Deny, Reason: "untrusted"},
			{Name: "plugin-destructive", Source: toolloop.SourcePlugin, Destructive: true, Decision: toolloop.Ask, Reason: "plugin may destroy"},
			{Name: "read-only", ReadOnly: true}, // empty decision: allow
			{Name: "judged-destructive", Destructive: true, JudgmentRequired: true, Decision: toolloop.Ask, Reason: "judge it"},
			{Name: "destructive", Destructive: true, Decision: toolloop.Deny, Reason: "destructive"},
			{Name: "write-as-modify", Tools: []string{"write_*"}, Decision: toolloop.Modify, Reason: "rewrite paths"},
		},
		Default:       toolloop.Deny,
		DefaultReason: "not on the list",
	}
	ro := toolloop.Annotations{ReadOnly: true}
	destr := toolloop.Annotations{Destructive: true}
	tests := []struct {
		name     string
		call     *toolloop.Call
		decision toolloop.Decision
		rule     string
		reason   string
	}{
		{"exact name", guardCall("shell", toolloop.SourceBuiltin, "local", ro), toolloop.Deny, "no-shell", "no shells"},
		{"second pattern of a rule", guardCall("bash", toolloop.SourceBuiltin, "local", toolloop.Annotations{}), toolloop.Deny, "no-shell", "no shells"},
		{"glob", guardCall("github__create_issue", toolloop.SourceMCP, "github", toolloop.Annotations{}), toolloop.Ask, "github-writes", "writes to GitHub"},
		{"glob second pattern", guardCall("github__delete_repo", toolloop.SourceMCP, "github", destr), toolloop.Ask, "github-writes", "writes to GitHub"},
		{"first match wins over later rules", guardCall("read_file", toolloop.SourceMCP, "untrusted-1", destr), toolloop.Allow, "reads", ""},
		{"single-character wildcard", guardCall("list_dir", toolloop.SourceBuiltin, "local", toolloop.Annotations{}), toolloop.Allow, "reads", ""},
		{"glob is anchored", guardCall("xread_file", toolloop.SourceBuiltin, "local", toolloop.Annotations{}), toolloop.Deny, "default", "not on the list"},
		{"source kind and name", guardCall("fetch", toolloop.SourceMCP, "untrusted-web", ro), toolloop.Deny, "untrusted-server", "untrusted"},
		{"source name must match", guardCall("fetch", toolloop.SourceMCP, "trusted", ro), toolloop.Allow, "read-only", ""},
		{"source kind must match", guardCall("fetch", toolloop.SourcePlugin, "untrusted-web", ro), toolloop.Allow, "read-only", ""},
		{"kind and annotation", guardCall("rm", toolloop.SourcePlugin, "fs", destr), toolloop.Ask, "plugin-destructive", "plugin may destroy"},
		{"annotation without kind", guardCall("rm", toolloop.SourceBuiltin, "local", destr), toolloop.Deny, "destructive", "destructive"},
		{"all annotations must hold", guardCall("rm", toolloop.SourceBuiltin, "local", toolloop.Annotations{Destructive: true, JudgmentRequired: true}), toolloop.Ask, "judged-destructive", "judge it"},
		{"judgment alone is not enough", guardCall("think", toolloop.SourceBuiltin, "local", toolloop.Annotations{JudgmentRequired: true}), toolloop.Deny, "default", "not on the list"},
		{"empty rule decision allows", guardCall("stat", toolloop.SourceBuiltin, "local", ro), toolloop.Allow, "read-only", ""},
		{"default", guardCall("unknown", toolloop.SourceBuiltin, "local", toolloop.Annotations{}), toolloop.Deny, "default", "not on the list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := g.Check(context.Background(), tt.call)
			assert.Equal(t, tt.decision, v.Decision)
			assert.Equal(t, tt.rule, v.Rule)
			assert.Equal(t, tt.reason, v.Reason)
			assert.Nil(t, v.Arguments, "a rule never rewrites arguments")
		})
	}

	// A rule that says modify has no arguments to give: it denies.
	v := g.Check(context.Background(), guardCall("write_file", toolloop.SourceBuiltin, "local", toolloop.Annotations{}))
	assert.Equal(t, toolloop.Deny, v.Decision)
	assert.Equal(t, "write-as-modify", v.Rule)
	assert.NotEmpty(t, v.Reason)
}

func TestRuleGuardDefaults(t *testing.T) {
	call := guardCall("x", toolloop.SourceBuiltin, "local", toolloop.Annotations{})
	tests := []struct {
		name     string
		g        toolloop.RuleGuard
		decision toolloop.Decision
	}{
		{"empty default allows", toolloop.RuleGuard{Rules: []toolloop.Rule{{Tools: []string{"y"}, Decision: toolloop.Deny}}}, toolloop.Allow},
		{"default ask", toolloop.RuleGuard{Default: toolloop.Ask, DefaultReason: "r"}, toolloop.Ask},
		{"default modify denies", toolloop.RuleGuard{Default: toolloop.Modify}, toolloop.Deny},
		{"rule with no conditions matches all", toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "all", Decision: toolloop.Ask}}, Default: toolloop.Deny}, toolloop.Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.decision, tt.g.Check(context.Background(), call).Decision)
		})
	}
}

// scripted is a guard that checks what it sees and answers with v.
type scripted struct {
	t        *testing.T
	wantArgs string // arguments the guard must see; "" skips the check
	v        toolloop.Verdict
	calls    int
}

func (s *scripted) Check(_ context.Context, call *toolloop.Call) toolloop.Verdict {
	s.calls++
	if s.wantArgs != "" {
		assert.JSONEq(s.t, s.wantArgs, string(call.Arguments), "arguments seen by guard")
	}
	return s.v
}

func modifyTo(args, reason, rule string) toolloop.Verdict {
	return toolloop.Verdict{Decision: toolloop.Modify, Arguments: json.RawMessage(args), Reason: reason, Rule: rule}
}

func TestGuardsComposition(t *testing.T) {
	const orig = `{"path":"a"}`
	deny := toolloop.Verdict{Decision: toolloop.Deny, Reason: "no", Rule: "deny-rule"}
	ask := toolloop.Verdict{Decision: toolloop.Ask, Reason: "human please", Rule: "ask-rule"}
	allow := toolloop.Verdict{Decision: toolloop.Allow}

	t.Run("no guards allow", func(t *testing.T) {
		v := toolloop.Guards().Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Allow, v.Decision)
	})

	t.Run("all allow", func(t *testing.T) {
		a, b := &scripted{t: t, v: allow}, &scripted{t: t, v: toolloop.Verdict{}}
		v := toolloop.Guards(a, b).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Allow, v.Decision)
		assert.Equal(t, 1, a.calls)
		assert.Equal(t, 1, b.calls)
	})

	t.Run("modify then modify chains arguments", func(t *testing.T) {
		g1 := &scripted{t: t, wantArgs: orig, v: modifyTo(`{"path":"/ws/a"}`, "absolute path", "abs")}
		g2 := &scripted{t: t, wantArgs: `{"path":"/ws/a"}`, v: modifyTo(`{"path":"/ws/a","dry_run":true}`, "dry run", "dry")}
		g3 := &scripted{t: t, wantArgs: `{"path":"/ws/a","dry_run":true}`, v: allow}
		call := guardCall("write", "", "", toolloop.Annotations{})
		v := toolloop.Guards(g1, g2, g3).Check(context.Background(), call)
		assert.Equal(t, toolloop.Modify, v.Decision)
		assert.JSONEq(t, `{"path":"/ws/a","dry_run":true}`, string(v.Arguments))
		assert.Contains(t, v.Reason, "absolute path")
		assert.Contains(t, v.Reason, "dry run")
		assert.Contains(t, v.Rule, "abs")
		assert.Contains(t, v.Rule, "dry")
		assert.JSONEq(t, orig, string(call.Arguments), "the caller's call is not modified")
	})

	t.Run("deny stops the chain", func(t *testing.T) {
		g1 := &scripted{t: t, v: allow}
		g2 := &scripted{t: t, v: deny}
		g3 := &scripted{t: t, v: allow}
		v := toolloop.Guards(g1, g2, g3).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, deny, v)
		assert.Equal(t, 0, g3.calls, "no guard runs after a deny")
	})

	t.Run("deny after modify", func(t *testing.T) {
		g1 := &scripted{t: t, v: modifyTo(`{"path":"b"}`, "r", "m")}
		g2 := &scripted{t: t, wantArgs: `{"path":"b"}`, v: deny}
		v := toolloop.Guards(g1, g2).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Deny, v.Decision)
		assert.Equal(t, "deny-rule", v.Rule)
	})

	t.Run("ask remembered, later guards still run", func(t *testing.T) {
		g1 := &scripted{t: t, v: ask}
		g2 := &scripted{t: t, v: allow}
		v := toolloop.Guards(g1, g2).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Ask, v.Decision)
		assert.Equal(t, "human please", v.Reason)
		assert.Equal(t, "ask-rule", v.Rule)
		assert.Equal(t, 1, g2.calls)
	})

	t.Run("later deny beats ask", func(t *testing.T) {
		g1 := &scripted{t: t, v: ask}
		g2 := &scripted{t: t, v: deny}
		v := toolloop.Guards(g1, g2).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, deny, v)
	})

	t.Run("first ask is kept", func(t *testing.T) {
		second := toolloop.Verdict{Decision: toolloop.Ask, Reason: "second", Rule: "ask2"}
		v := toolloop.Guards(&scripted{t: t, v: ask}, &scripted{t: t, v: second}).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Ask, v.Decision)
		assert.Equal(t, "ask-rule", v.Rule)
	})

	t.Run("modify then ask keeps modified arguments", func(t *testing.T) {
		g1 := &scripted{t: t, v: modifyTo(`{"path":"safe"}`, "r", "m")}
		g2 := &scripted{t: t, wantArgs: `{"path":"safe"}`, v: ask}
		v := toolloop.Guards(g1, g2).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Ask, v.Decision)
		assert.Equal(t, "human please", v.Reason)
		assert.JSONEq(t, `{"path":"safe"}`, string(v.Arguments))
	})

	t.Run("ask then modify keeps modified arguments", func(t *testing.T) {
		g1 := &scripted{t: t, v: ask}
		g2 := &scripted{t: t, wantArgs: orig, v: modifyTo(`{"path":"safe"}`, "r", "m")}
		v := toolloop.Guards(g1, g2).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Ask, v.Decision)
		assert.JSONEq(t, `{"path":"safe"}`, string(v.Arguments))
	})

	t.Run("nested", func(t *testing.T) {
		inner := toolloop.Guards(&scripted{t: t, v: modifyTo(`{"path":"1"}`, "one", "r1")}, &scripted{t: t, wantArgs: `{"path":"1"}`, v: allow})
		outer := toolloop.Guards(inner, &scripted{t: t, wantArgs: `{"path":"1"}`, v: modifyTo(`{"path":"2"}`, "two", "r2")})
		v := outer.Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Modify, v.Decision)
		assert.JSONEq(t, `{"path":"2"}`, string(v.Arguments))
		assert.Contains(t, v.Reason, "one")
		assert.Contains(t, v.Reason, "two")
	})

	t.Run("with a rule guard", func(t *testing.T) {
		rules := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "no-rm", Tools: []string{"rm"}, Decision: toolloop.Deny}}}
		g := toolloop.Guards(&scripted{t: t, v: modifyTo(`{"path":"x"}`, "r", "m")}, rules)
		assert.Equal(t, toolloop.Deny, g.Check(context.Background(), guardCall("rm", "", "", toolloop.Annotations{})).Decision)
		assert.Equal(t, toolloop.Modify, g.Check(context.Background(), guardCall("ls", "", "", toolloop.Annotations{})).Decision)
	})
}

// An Ask verdict that carries arguments is a modify and an ask: the
// pipeline runs the call (once approved) with those arguments. So in a
// chain, the guards after it must see them, and a later modify must build
// on them rather than drop them. Nested Guards produce exactly such
// verdicts.
func TestGuardsAskWithArgumentsIsAModify(t *testing.T) {
	t.Run("custom guard", func(t *testing.T) {
		g1 := &scripted{t: t, v: toolloop.Verdict{Decision: toolloop.Ask, Arguments: json.RawMessage(`{"path":"1"}`), Reason: "rewrote and asks"}}
		g2 := &scripted{t: t, wantArgs: `{"path":"1"}`, v: allow()}
		v := toolloop.Guards(g1, g2).Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Ask, v.Decision)
		assert.JSONEq(t, `{"path":"1"}`, string(v.Arguments))
	})
	t.Run("nested chain", func(t *testing.T) {
		inner := toolloop.Guards(
			&scripted{t: t, v: modifyTo(`{"path":"1"}`, "one", "r1")},
			&scripted{t: t, wantArgs: `{"path":"1"}`, v: toolloop.Verdict{Decision: toolloop.Ask, Reason: "human please"}})
		outer := toolloop.Guards(inner, &scripted{t: t, wantArgs: `{"path":"1"}`, v: modifyTo(`{"path":"2"}`, "two", "r2")})
		v := outer.Check(context.Background(), guardCall("x", "", "", toolloop.Annotations{}))
		assert.Equal(t, toolloop.Ask, v.Decision)
		assert.JSONEq(t, `{"path":"2"}`, string(v.Arguments))
	})
}

func allow() toolloop.Verdict { return toolloop.Verdict{Decision: toolloop.Allow} }

func TestGuardFunc(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	call := guardCall("x", toolloop.SourceMCP, "srv", toolloop.Annotations{})
	want := toolloop.Verdict{Decision: toolloop.Deny, Reason: "because", Rule: "func"}
	var g toolloop.Guard = toolloop.GuardFunc(func(gctx context.Context, c *toolloop.Call) toolloop.Verdict {
		assert.Equal(t, "v", gctx.Value(key{}))
		assert.Same(t, call, c)
		return want
	})
	require.Equal(t, want, g.Check(ctx, call))
}
