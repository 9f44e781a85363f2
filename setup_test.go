package toolloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// Each mistake at set-up fails loudly, before anything runs, with an
// error errors.Is can tell apart.
func TestSetupMistakes(t *testing.T) {
	asks := &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "confirm", Destructive: true, Decision: toolloop.Ask}}}
	approver := toolloop.ApproverFunc(func(context.Context, *toolloop.Call, string) (toolloop.Approval, error) {
		return toolloop.Approval{Approved: true}, nil
	})
	tests := []struct {
		name  string
		loop  toolloop.AgentLoop // Model is set unless noModel
		noMod bool
		want  error // nil: the run starts
	}{
		{"no model", toolloop.AgentLoop{}, true, toolloop.ErrNoModel},
		{"asking rule without approver", toolloop.AgentLoop{Guard: asks}, false, toolloop.ErrNoApprover},
		{"asking default without approver", toolloop.AgentLoop{Guard: &toolloop.RuleGuard{Default: toolloop.Ask}}, false, toolloop.ErrNoApprover},
		{"asking guard in a chain", toolloop.AgentLoop{Guard: toolloop.Guards(&toolloop.RuleGuard{}, asks)}, false, toolloop.ErrNoApprover},
		{"asking rule with approver", toolloop.AgentLoop{Guard: asks, Approver: approver}, false, nil},
		{"asking rule with pause", toolloop.AgentLoop{Guard: asks, PauseForApproval: true}, false, nil},
		{"rules that never ask", toolloop.AgentLoop{Guard: &toolloop.RuleGuard{Default: toolloop.Deny}}, false, nil},
		{"guard that does not say", toolloop.AgentLoop{Guard: toolloop.GuardFunc(asks.Check)}, false, nil},
		{"guard func marked as asking", toolloop.AgentLoop{Guard: toolloop.AskingGuard(toolloop.GuardFunc(asks.Check))}, false, toolloop.ErrNoApprover},
		{"marked guard func in a chain", toolloop.AgentLoop{Guard: toolloop.Guards(toolloop.AskingGuard(toolloop.GuardFunc(asks.Check)))}, false, toolloop.ErrNoApprover},
		{"marked guard func with approver", toolloop.AgentLoop{Guard: toolloop.AskingGuard(toolloop.GuardFunc(asks.Check)), Approver: approver}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.loop
			if !tt.noMod {
				var turns []looptest.Turn
				if tt.want == nil {
					turns = append(turns, looptest.Turn{Reply: looptest.Text("ok")})
				}
				l.Model = looptest.NewModel(t, turns...) // fails the test if asked for a turn it has not got
			}
			assert.ErrorIs(t, l.Validate(), tt.want)
			res, err := l.Run(context.Background(), user("hi"))
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
			assert.Nil(t, res, "a run that cannot start has no result")

			s := l.RunStream(context.Background(), user("hi"))
			for range s.Events() {
				t.Fatal("a run that cannot start yielded an event")
			}
			_, err = s.Result()
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// Resume checks the set-up too: a state paused by a loop that could
// pause is not resumed by one that can settle no ask.
func TestResumeSetupMistake(t *testing.T) {
	deploy := toolloop.NewTool("deploy", "Deploy.", func(context.Context, struct{}) (any, error) { return "deployed", nil })
	deploy.Annotations.Destructive = true
	l := &toolloop.AgentLoop{
		Model:            looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "deploy", `{}`))}),
		Tools:            registry(t, deploy),
		Guard:            &toolloop.RuleGuard{Rules: []toolloop.Rule{{Destructive: true, Decision: toolloop.Ask}}},
		PauseForApproval: true,
	}
	res, err := l.Run(context.Background(), user("ship"))
	require.ErrorIs(t, err, toolloop.ErrPaused)
	l.PauseForApproval = false
	_, err = l.Resume(context.Background(), res.Paused, map[string]toolloop.Approval{"c1": {Approved: true}})
	require.ErrorIs(t, err, toolloop.ErrNoApprover)
	_, err = l.ResumeStream(context.Background(), res.Paused, map[string]toolloop.Approval{"c1": {Approved: true}}).Result()
	require.ErrorIs(t, err, toolloop.ErrNoApprover)
}

// A guard that asks without saying so meets the run-time safety net: the
// ask is denied, telling the model no approver is configured.
func TestUndeclaredAskIsDenied(t *testing.T) {
	var ran atomic.Bool
	op := toolloop.NewTool("op", "An operation.", func(context.Context, struct{}) (any, error) { ran.Store(true); return "ran", nil })
	guard := toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
		return toolloop.Verdict{Decision: toolloop.Ask}
	})
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	res, err := oneTurn(t, &toolloop.AgentLoop{Tools: registry(t, op), Guard: guard, Logger: logger},
		looptest.Call("c1", "op", `{}`), looptest.Call("c2", "op", `{}`))
	require.NoError(t, err)
	assert.Equal(t, toolloop.KindDenied, resultOf(t, res, "c1").Error.Kind)
	assert.Equal(t, toolloop.KindDenied, resultOf(t, res, "c2").Error.Kind)
	assert.False(t, ran.Load())
	assert.Equal(t, 1, strings.Count(logged.String(), "AskingGuard"), "the mistake is logged once per run: %s", logged.String())
}

// The other set-up mistakes, at registration: a taken name (see
// TestTakenToolNameIsRefused) and a schema tool whose schema or name is
// unusable (see TestNewSchemaToolErrors).
func TestSetupMistakesAtRegistration(t *testing.T) {
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.Register(pingTool()))
	assert.ErrorIs(t, reg.Register(pingTool()), toolloop.ErrToolNameTaken)
	_, err := toolloop.NewSchemaTool("x", "X.", json.RawMessage(`{"type":"array"}`), func(context.Context, *toolloop.Call) (any, error) { return nil, nil })
	assert.Error(t, err)
}

type undescribedItem struct {
	Title string   `json:"title"`
	Done  chan int `json:"done"`
}

type undescribedPage struct {
	Name  string            `json:"name"`
	Items []undescribedItem `json:"items"`
}

type undescribedMap struct {
	Seen map[[2]int]bool `json:"seen"`
}

type describedSkips struct {
	Name   string             `json:"name"`
	Hidden chan int           `json:"-"`
	hidden func()             // unexported: JSON never reads it
	Again  []undescribedMapOK `json:"again"`
	Twice  []undescribedMapOK `json:"twice"`
}

type undescribedMapOK struct {
	Seen map[int]bool `json:"seen"`
}

type recursiveNode struct {
	Name     string           `json:"name"`
	Children []*recursiveNode `json:"children"`
}

// NewTool on an input JSON cannot carry panics with a message that names
// the tool, the type and the field's path; SchemaFor returns the same as
// an error. Fields JSON never reads do not count.
func TestNewToolUndescribableInput(t *testing.T) {
	fn := func(context.Context, undescribedPage) (any, error) { return nil, nil }
	assert.PanicsWithValue(t,
		`toolloop: NewTool "pages": input type toolloop_test.undescribedPage: field Items[].Done has type chan int, which JSON cannot carry: tag it `+"`json:\"-\"`"+`, unexport it, or change its type`,
		func() { toolloop.NewTool("pages", "Pages.", fn) })

	_, err := toolloop.SchemaFor[undescribedMap]()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "field Seen[key] has type [2]int")
	_, err = toolloop.OutputFormatFor[*undescribedPage]()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Items[].Done")

	_, err = toolloop.SchemaFor[describedSkips]()
	require.NoError(t, err, "a type met twice, not inside itself, is fine")

	// The schema reflector would follow a recursive type until the stack
	// overflows, which no recover catches.
	_, err = toolloop.SchemaFor[recursiveNode]()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "field Children[] refers back to toolloop_test.recursiveNode")
	_ = describedSkips{}.hidden
}
