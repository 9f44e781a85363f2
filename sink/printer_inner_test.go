package sink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sink"
)

// innerEv returns an event of the inner call id of program call c1 to tool.
func innerEv(typ toolloop.EventType, id, tool string) toolloop.Event {
	e := ev(typ)
	e.CallID, e.Tool, e.ParentCallID = id, tool, "c1"
	return e
}

func innerStart(id, tool, args string) toolloop.Event {
	e := innerEv(toolloop.EventStart, id, tool)
	e.Arguments = json.RawMessage(args)
	return e
}

func innerDone(id, tool string, r *toolloop.ToolResult) toolloop.Event {
	e := innerEv(toolloop.EventComplete, id, tool)
	r.CallID, r.Name = id, tool
	e.Result = r
	return e
}

const program = `{"code":"const a = await tools.read_file({path: 'a.go'})"}`

// codeModeEvents is a turn with a program (c1) beside a plain call (c2):
// the program's inner calls read, fail, and ask, which pauses the run;
// on resume the asked call is approved and the program ends.
func codeModeEvents() []toolloop.Event {
	plain := complete(toolloop.TextResult("B"))
	plain.CallID, plain.Result.CallID = "c2", "c2"
	asked := innerEv(toolloop.EventPermissionRequested, "c1/3", "write_file")
	asked.Verdict = &toolloop.Verdict{Decision: toolloop.Ask, Reason: "writes need a human", Rule: "ask-write"}
	approved := innerEv(toolloop.EventPermissionCompleted, "c1/3", "write_file")
	approved.Approval = &toolloop.Approval{Approved: true, Reason: "ok"}
	progStart := callEv(toolloop.EventStart)
	progStart.Tool, progStart.Arguments = "run_code", json.RawMessage(program)
	done := toolloop.TextResult("3 files\n\nconsole:\nwrote b")
	done.Meta.InnerCalls = 3
	progDone := complete(done)
	progDone.Tool, progDone.Result.Name = "run_code", "run_code"
	return []toolloop.Event{
		response("", toolloop.StopToolUse,
			looptest.Call("c1", "run_code", program),
			looptest.Call("c2", "read_file", `{"path":"README.md"}`)),
		innerStart("c1/1", "read_file", `{"path":"a.go"}`),
		innerDone("c1/1", "read_file", toolloop.TextResult("package a\n\nfunc A() {}\n")),
		plain,
		innerStart("c1/2", "grep", `{"pattern":"x"}`),
		innerDone("c1/2", "grep", failed(toolloop.KindExecutionFailed, "boom\nat line 2")),
		innerStart("c1/3", "write_file", `{"path":"b"}`),
		asked,
		paused("write_file"),
		runEnd(toolloop.StopToolUse, "toolloop: the run is paused for approval"),
		resumed(true),
		progStart,
		innerStart("c1/3", "write_file", `{"path":"b"}`),
		approved,
		innerDone("c1/3", "write_file", toolloop.TextResult("wrote b")),
		progDone,
	}
}

func TestPrinterInnerCalls(t *testing.T) {
	const head = `  … run_code code="const a = await tools.read_file({path: 'a.go'})" → program c1` + "\n"
	assert.Equal(t, head+
		"    ✓ ↳ c1/1 read_file path=a.go → package a … (+2 lines)\n"+
		"  ✓ read_file path=README.md → B\n"+
		head+
		"    ✗ ↳ c1/2 grep pattern=x → execution_failed: boom\n"+
		"          at line 2\n"+
		"    ? ↳ c1/3 write_file path=b → needs approval: writes need a human [ask-write]\n"+
		"  ? paused: 1 call await approval (write_file)\n"+
		"  · run resumed with 1 decision\n"+
		head+
		"    ✓ ↳ c1/3 write_file path=b (approved) → wrote b\n"+
		`  ✓ run_code code="const a = await tools.read_file({path: 'a.go'})" (3 inner calls) → 3 files … (+3 lines)`+"\n",
		printed(sink.PrinterOptions{}, codeModeEvents()...),
		"the inner calls show under their program, named by their IDs; the program's line counts them")
}

func TestPrinterInnerCallsVerbose(t *testing.T) {
	out := printed(verbose, codeModeEvents()...)
	assert.Contains(t, out, "  … run_code code=")
	assert.Contains(t, out, "    … ↳ c1/1 read_file path=a.go\n", "an inner call's start, under its program")
	assert.NotContains(t, out, "\n  ✓ ↳", "no inner call at the calls' indent")
}

func TestPrinterInnerCallsOfALoop(t *testing.T) {
	// A tool that runs a program: each inner call through the loop, its
	// events under the program's call.
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("read_file", "Read.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (any, error) {
		return "contents of " + in.Path, nil
	}))
	prog, err := toolloop.NewSchemaTool("run_code", "Runs a program.", json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}}}`),
		func(ctx context.Context, call *toolloop.Call) (any, error) {
			in := call.Inner()
			if in == nil {
				return nil, errors.New("no inner calls")
			}
			var got []string
			for _, path := range []string{"a.go", "b.go"} {
				r, err := in.Prepare("read_file", json.RawMessage(`{"path":"`+path+`"}`)).Run(ctx)
				if err != nil {
					return nil, err
				}
				got = append(got, r.Text())
			}
			return strings.Join(got, "; "), nil
		})
	require.NoError(t, err)
	tools.MustRegister(prog)
	var b bytes.Buffer
	loop := &toolloop.AgentLoop{
		Model: &streamer{turns: []*toolloop.Response{
			looptest.Calls(looptest.Call("c1", "run_code", `{"code":"for (const p of ['a.go', 'b.go']) await tools.read_file({path: p})"}`)),
			looptest.Text("Read."),
		}},
		Tools:   &tools,
		OnEvent: sink.NewPrinter(&b, &sink.PrinterOptions{Color: sink.ColorNever}),
	}
	_, err = loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("read")})
	require.NoError(t, err)
	const code = `code="for (const p of ['a.go', 'b.go']) await tools.read_file({path: p})"`
	assert.Equal(t, "  … run_code "+code+" → program c1\n"+
		"    ✓ ↳ c1/1 read_file path=a.go → contents of a.go\n"+
		"    ✓ ↳ c1/2 read_file path=b.go → contents of b.go\n"+
		"  ✓ run_code "+code+" (2 inner calls) → contents of a.go; contents of b.go\n"+
		"Read.\n", b.String())
}

func TestPrinterInnerCallsOfAChildRun(t *testing.T) {
	// A sub-agent's program: the parent's run passes its events on with
	// ParentCallID the parent's call, and its inner calls are known by
	// their IDs.
	child := func(e toolloop.Event) toolloop.Event {
		e.RunID, e.ParentRunID, e.ParentCallID = "run_child", runID, "a1"
		return e
	}
	progStart := callEv(toolloop.EventStart)
	progStart.CallID, progStart.Tool, progStart.Arguments = "p1", "run_code", json.RawMessage(`{"code":"x"}`)
	progDone := complete(toolloop.TextResult("x"))
	progDone.CallID, progDone.Tool, progDone.Result.Meta.InnerCalls = "p1", "run_code", 1
	other := complete(toolloop.TextResult("y")) // "q/1" names no call in flight
	other.CallID = "q/1"
	events := []toolloop.Event{
		child(progStart),
		child(innerDone("p1/1", "read_file", toolloop.TextResult("x"))),
		child(other),
		child(progDone),
	}
	assert.Equal(t, `  … ↳ run_code code=x → program p1`+"\n"+
		"    ✓ ↳ p1/1 read_file → x\n"+
		"  ✓ ↳ read_file → y\n"+
		`  ✓ ↳ run_code code=x (1 inner call) → x`+"\n",
		printed(sink.PrinterOptions{}, events...))
}
