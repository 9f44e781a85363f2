package codemode_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/codemode"
	"github.com/toolloop/toolloop/looptest"
)

type pathArgs struct {
	Path string `json:"path"`
}

// codeCall is the model's call of the code tool with code.
func codeCall(id, code string) toolloop.ToolCall {
	args, _ := json.Marshal(map[string]string{"code": code})
	return looptest.Call(id, codemode.DefaultName, string(args))
}

// runCode runs one code call through a loop whose registry holds tools
// and the code tool, and returns the code call's result and the events.
func runCode(t *testing.T, loop *toolloop.AgentLoop, tools []toolloop.Tool, code string) (*toolloop.ToolResult, *looptest.Recorder, *toolloop.RunResult, error) {
	t.Helper()
	var reg toolloop.ToolRegistry
	reg.MustRegister(tools...)
	reg.MustRegister(codemode.New(&reg, nil))
	rec := &looptest.Recorder{}
	loop.Tools = &reg
	loop.OnEvent = rec.Record
	loop.Model = looptest.Script(looptest.Calls(codeCall("call_1", code)), looptest.Text("done"))
	res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("go")})
	if err != nil {
		return nil, rec, res, err
	}
	require.True(t, looptest.AssertValid(t, res.Messages))
	return looptest.Results(res.Messages)["call_1"], rec, res, nil
}

// Two calls under Promise.all run at once: each waits for the other to
// start.
func TestLoopParallelCalls(t *testing.T) {
	both := make(chan struct{}, 2)
	meet := func(name string) toolloop.Tool {
		return toolloop.NewTool(name, "Meet.", func(ctx context.Context, _ struct{}) (any, error) {
			both <- struct{}{}
			deadline := time.After(10 * time.Second)
			for len(both) < 2 {
				select {
				case <-deadline:
					return nil, errors.New("the other call never started")
				case <-time.After(time.Millisecond):
				}
			}
			return map[string]string{"from": name}, nil
		})
	}
	res, rec, _, err := runCode(t, &toolloop.AgentLoop{}, []toolloop.Tool{meet("a"), meet("b")},
		`const [x, y] = await Promise.all([tools.a(), tools.b()]); return x.from + y.from`)
	require.NoError(t, err)
	require.False(t, res.IsError(), res.Text())
	assert.Equal(t, "ab", res.Text())
	assert.Equal(t, 2, res.Meta.Extra["inner_calls"])

	// The inner calls are events of their own, with the code call as
	// their parent; their results are not in the transcript.
	var inner []string
	for _, e := range rec.Of(toolloop.EventComplete) {
		if e.ParentCallID == "call_1" {
			inner = append(inner, e.CallID+" "+e.Tool)
		}
	}
	assert.ElementsMatch(t, []string{"call_1/1 a", "call_1/2 b"}, inner)
}

// A tool's failure is a ToolError the program catches; a denied call is
// one of kind denied.
func TestLoopToolErrorsAndGuard(t *testing.T) {
	read := toolloop.NewTool("read_file", "Read.", func(_ context.Context, in pathArgs) (any, error) {
		if in.Path == "missing" {
			return nil, errors.New("no such file")
		}
		return "text of " + in.Path, nil
	})
	write := toolloop.NewTool("write_file", "Write.", func(context.Context, pathArgs) (any, error) {
		t.Error("a denied call ran")
		return "written", nil
	})
	loop := &toolloop.AgentLoop{Guard: toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
		if c.Name == "write_file" {
			return toolloop.Verdict{Decision: toolloop.Deny, Reason: "read-only session"}
		}
		return toolloop.Verdict{Decision: toolloop.Allow}
	})}
	res, _, _, err := runCode(t, loop, []toolloop.Tool{read, write}, `
const out = [];
out.push(await tools.read_file({path: "a.go"}));
try { await tools.read_file({path: "missing"}) } catch (e) { out.push(e.name + " " + e.kind) }
try { await tools.write_file({path: "a.go"}) } catch (e) { out.push(e.kind + ": " + e.message) }
try { await tools.read_file({wrong: 1}) } catch (e) { out.push(e.kind) }
return out`)
	require.NoError(t, err)
	require.False(t, res.IsError(), res.Text())
	var got []string
	require.NoError(t, json.Unmarshal([]byte(res.Text()), &got))
	require.Len(t, got, 4)
	assert.Equal(t, "text of a.go", got[0])
	assert.Equal(t, "ToolError execution_failed", got[1])
	assert.True(t, strings.HasPrefix(got[2], "denied: "), got[2])
	assert.Contains(t, got[2], "read-only session")
	assert.Equal(t, "invalid_args", got[3])
}

// A program's failure is the code call's failed result, which the model
// sees; the run goes on.
func TestLoopProgramFailure(t *testing.T) {
	res, _, _, err := runCode(t, &toolloop.AgentLoop{}, nil, "console.log('x');\nnull.f()")
	require.NoError(t, err)
	require.True(t, res.IsError())
	assert.Equal(t, toolloop.KindExecutionFailed, res.Error.Kind)
	assert.Contains(t, res.Text(), "TypeError")
	assert.Contains(t, res.Text(), "Console output:\nx\n")
}

// An inner call that needs approval pauses the run; on resume the
// program runs again, the call that ran is served from the journal, and
// the approved one runs once.
func TestLoopPauseAndResume(t *testing.T) {
	var reads, writes atomic.Int32
	read := toolloop.NewTool("read_file", "Read.", func(_ context.Context, in pathArgs) (any, error) {
		reads.Add(1)
		return "text of " + in.Path, nil
	})
	write := toolloop.NewTool("write_file", "Write.", func(context.Context, pathArgs) (any, error) {
		writes.Add(1)
		return "written", nil
	})
	var reg toolloop.ToolRegistry
	reg.MustRegister(read, write)
	reg.MustRegister(codemode.New(&reg, nil))
	loop := &toolloop.AgentLoop{
		Tools:            &reg,
		PauseForApproval: true,
		Guard:            &toolloop.RuleGuard{Rules: []toolloop.Rule{{Name: "ask-writes", Tools: []string{"write_file"}, Decision: toolloop.Ask}}},
		Model: looptest.Script(looptest.Calls(codeCall("call_1", `
const a = await tools.read_file({path: "a"});
const w = await tools.write_file({path: "b"});
return [a, w, Date.now() > 0, Math.random()]`)), looptest.Text("done")),
	}
	res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("go")})
	require.ErrorIs(t, err, toolloop.ErrPaused)
	require.NotNil(t, res.Paused)
	assert.EqualValues(t, 1, reads.Load())
	assert.Zero(t, writes.Load())

	// Through JSON, as another process would resume it.
	raw, err := json.Marshal(res.Paused)
	require.NoError(t, err)
	var st toolloop.PauseState
	require.NoError(t, json.Unmarshal(raw, &st))
	decisions := map[string]toolloop.Approval{}
	for _, p := range st.Pending {
		for _, w := range p.Waiting() {
			decisions[w.CallID] = toolloop.Approval{Approved: true}
		}
	}
	require.NotEmpty(t, decisions)
	res, err = loop.Resume(t.Context(), &st, decisions)
	require.NoError(t, err)
	assert.EqualValues(t, 1, reads.Load(), "an inner call ran twice")
	assert.EqualValues(t, 1, writes.Load())
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	require.False(t, r.IsError(), r.Text())
	assert.Contains(t, r.Text(), "text of a")
	assert.Contains(t, r.Text(), "written")
}

// Tool.Timeout is the wall clock of the whole program, tool calls
// included: a program that runs past it ends with kind timeout.
func TestLoopTimeout(t *testing.T) {
	var reg toolloop.ToolRegistry
	code := codemode.New(&reg, nil)
	code.Timeout = 100 * time.Millisecond
	code.Limits.ComputeTime = time.Hour
	reg.MustRegister(code)
	loop := &toolloop.AgentLoop{Tools: &reg, Model: looptest.Script(looptest.Calls(codeCall("call_1", `while (true) {}`)), looptest.Text("done"))}
	res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r)
	require.True(t, r.IsError())
	assert.Equal(t, toolloop.KindTimeout, r.Error.Kind, r.Text())
}

// A program that spins on calls, catching every error, is stopped at the
// loop's limit on one call's inner calls, not left to run to its timeout.
func TestLoopRunawayProgramIsStopped(t *testing.T) {
	var runs atomic.Int32
	echo := toolloop.NewTool("echo", "Echo.", func(context.Context, struct{}) (any, error) {
		runs.Add(1)
		return "ok", nil
	})
	loop := &toolloop.AgentLoop{Limits: toolloop.Limits{MaxCallsPerTurn: 10}}
	r, _, res, err := runCode(t, loop, []toolloop.Tool{echo},
		`for (;;) { try { await tools.echo({}) } catch (e) { console.log("caught " + e.kind) } }`)
	require.NoError(t, err)
	require.True(t, r.IsError())
	assert.Equal(t, toolloop.KindDenied, r.Error.Kind)
	assert.Contains(t, r.Text(), "it made more than 10 tool calls")
	assert.Equal(t, int32(10), runs.Load())
	assert.Equal(t, 11, res.ToolCalls, "the program's call and its ten inner calls")
}
