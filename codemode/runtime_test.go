package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

type toolFunc = func(context.Context, json.RawMessage) (*toolloop.ToolResult, error)

func newFake(tools map[string]toolFunc) *fakeCalls {
	if tools == nil {
		tools = map[string]toolFunc{}
	}
	return &fakeCalls{tools: tools}
}

// decoded is a value the program returned, decoded from its JSON.
func decoded(t *testing.T, out *outcome) any {
	t.Helper()
	require.Nil(t, out.fail, "the program failed")
	require.True(t, out.hasValue, "the program returned nothing")
	var v any
	require.NoError(t, json.Unmarshal([]byte(out.value), &v), "not JSON: %s", out.value)
	return v
}

func TestProgramResults(t *testing.T) {
	tools := map[string]toolFunc{
		"echo":  echo,
		"hello": text("hello, world"),
		"deny":  failing(toolloop.KindDenied, "not allowed"),
		"bad_json": func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
			return &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"cut":`))}}, nil
		},
	}
	for _, tc := range []struct {
		name  string
		code  string
		want  any    // decoded JSON value, if wantS is empty
		wantS string // the value as text
		calls []string
	}{
		{name: "plain value", code: `return 1 + 1`, want: 2.0},
		{name: "string as is", code: `return "a\nb"`, wantS: "a\nb"},
		{name: "JSON result decoded", code: `const r = await tools.echo({a: 1, b: [true]}); return r.b[0]`, want: true, calls: []string{`echo {"a":1,"b":[true]}`}},
		{name: "text result as string", code: `return typeof (await tools.hello()) + ":" + await tools.hello()`, wantS: "string:hello, world", calls: []string{"hello {}", "hello {}"}},
		{name: "no arguments is {}", code: `await tools.echo(); return "ok"`, wantS: "ok", calls: []string{"echo {}"}},
		{name: "parallel calls", code: `const [a, b] = await Promise.all([tools.echo({n: 1}), tools.echo({n: 2})]); return a.n + b.n`, want: 3.0,
			calls: []string{`echo {"n":1}`, `echo {"n":2}`}},
		{name: "tool error caught", code: `try { await tools.deny({}) } catch (e) { return {name: e.name, kind: e.kind, tool: e.tool, message: e.message, isError: e instanceof Error} }`,
			want: map[string]any{"name": "ToolError", "kind": "denied", "tool": "deny", "message": "not allowed", "isError": true}, calls: []string{"deny {}"}},
		{name: "returns a promise", code: `return tools.echo({x: 1})`, want: map[string]any{"x": 1.0}, calls: []string{`echo {"x":1}`}},
		{name: "returns an object as JSON", code: `return {a: [1, "two"], b: null}`, want: map[string]any{"a": []any{1.0, "two"}, "b": nil}},
		{name: "loop and string handling", code: "let s = []; for (const w of 'a b c'.split(' ')) s.push(w.toUpperCase()); return s.join('-')", wantS: "A-B-C"},
		{name: "quoted names", code: `return await tools["echo"]({q: "x"})`, want: map[string]any{"q": "x"}, calls: []string{`echo {"q":"x"}`}},
		{name: "a JSON block that is not JSON comes as text", code: `return await tools.bad_json()`, wantS: `{"cut":`},
		{name: "a whole arrow function", code: "\n  async () => {\n  const r = await tools.echo({n: 4});\n  return r.n * 2;\n};\n", want: 8.0, calls: []string{`echo {"n":4}`}},
		{name: "a whole function", code: `async function main() { return "main ran" }`, wantS: "main ran"},
		{name: "a function defined and called is a body", code: `async function f() { return 1 } return await f() + 1`, want: 2.0},
		{name: "date is fixed", code: `return [Date.now(), new Date().toISOString()]`, want: []any{1767323045000.0, "2026-01-02T03:04:05.000Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(tools)
			out, err := runProgram(t.Context(), f, Limits{}, tc.code)
			require.NoError(t, err)
			require.Nil(t, out.fail)
			if tc.wantS != "" {
				assert.Equal(t, tc.wantS, out.value)
			} else {
				assert.Equal(t, tc.want, decoded(t, out))
			}
			if tc.calls != nil {
				assert.ElementsMatch(t, tc.calls, f.calls())
				assert.Equal(t, len(tc.calls), out.calls)
			}
		})
	}
}

// TestTwoFunctionsAreABody: code that only defines functions is a body
// that returns nothing, not a function to call.
func TestTwoFunctionsAreABody(t *testing.T) {
	out, err := runProgram(t.Context(), newFake(nil), Limits{}, "async function a() { return 1 }\nasync function b() { return 2 }")
	require.NoError(t, err)
	require.Nil(t, out.fail)
	assert.False(t, out.hasValue)
}

func TestProgramFailures(t *testing.T) {
	tools := map[string]toolFunc{"deny": failing(toolloop.KindDenied, "not allowed")}
	for _, tc := range []struct {
		name     string
		code     string
		kind     toolloop.ErrorKind
		contains []string
		console  string
	}{
		{name: "thrown error", code: "console.log('before');\nthrow new Error('boom')", kind: toolloop.KindExecutionFailed,
			contains: []string{"Error: boom", "program.js:2:"}, console: "before\n"},
		{name: "uncaught tool error", code: `await tools.deny({})`, kind: toolloop.KindExecutionFailed, contains: []string{"ToolError (denied) from tool deny: not allowed"}},
		{name: "thrown string", code: `throw "plain"`, kind: toolloop.KindExecutionFailed, contains: []string{"not an Error", "plain"}},
		{name: "thrown object", code: `throw {code: 7}`, kind: toolloop.KindExecutionFailed, contains: []string{`{"code":7}`}},
		{name: "syntax error", code: "const a = 1;\nconst = 2;", kind: toolloop.KindInvalidArgs, contains: []string{"SyntaxError", "line 2, column 7"}},
		{name: "syntax error on line 1", code: "let x = ;", kind: toolloop.KindInvalidArgs, contains: []string{"line 1, column 9"}},
		{name: "unknown tool", code: `await tools.nope({})`, kind: toolloop.KindExecutionFailed,
			contains: []string{"TypeError", "there is no tool named nope; the tools are deny"}},
		{name: "promise that never settles", code: `await new Promise(() => {})`, kind: toolloop.KindExecutionFailed, contains: []string{"nothing will settle"}},
		{name: "reference error", code: `return missing + 1`, kind: toolloop.KindExecutionFailed, contains: []string{"ReferenceError", "missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runProgram(t.Context(), newFake(tools), Limits{}, tc.code)
			require.NoError(t, err)
			require.NotNil(t, out.fail, "the program did not fail; value %q", out.value)
			assert.Equal(t, tc.kind, out.fail.Kind)
			for _, s := range tc.contains {
				assert.Contains(t, out.fail.Message, s)
			}
			assert.Equal(t, tc.console, out.console.buf.String())
			res := out.result()
			assert.True(t, res.IsError())
			if tc.console != "" {
				assert.Contains(t, res.Text(), "Console output:\n"+tc.console)
			}
		})
	}
}

// A program that starts calls without awaiting them returns once they
// have all ended; their handlers still run.
func TestUnawaitedCallsSettleBeforeReturn(t *testing.T) {
	var ended atomic.Int32
	f := newFake(map[string]toolFunc{"slow": func(ctx context.Context, _ json.RawMessage) (*toolloop.ToolResult, error) {
		time.Sleep(20 * time.Millisecond)
		ended.Add(1)
		return toolloop.TextResult("done"), nil
	}})
	out, err := runProgram(t.Context(), f, Limits{}, `tools.slow({}).then(r => console.log("then", r)); tools.slow({}); return "early"`)
	require.NoError(t, err)
	assert.Equal(t, "early", out.value)
	assert.EqualValues(t, 2, ended.Load(), "run returned before its inner calls ended")
	assert.Equal(t, "then done\n", out.console.buf.String())
}

// An inner call that pauses the run stops the program: the calls already
// running finish, no further promise is settled, and the error is run's.
func TestPauseStopsTheProgram(t *testing.T) {
	var other atomic.Bool
	f := newFake(map[string]toolFunc{
		"ask": func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
			return nil, fmt.Errorf("inner call 1: %w", toolloop.ErrPaused)
		},
		"slow": func(ctx context.Context, _ json.RawMessage) (*toolloop.ToolResult, error) {
			time.Sleep(30 * time.Millisecond)
			other.Store(true)
			return toolloop.TextResult("ok"), nil
		},
		"after": echo,
	})
	out, err := runProgram(t.Context(), f, Limits{}, `
const s = tools.slow({});
try { await tools.ask({}) } catch (e) { console.log("caught", e) }
await tools.after({});
return await s`)
	require.ErrorIs(t, err, toolloop.ErrPaused)
	assert.Nil(t, out)
	assert.True(t, other.Load(), "run returned before a running inner call ended")
	assert.NotContains(t, f.calls(), "after {}", "the program went on after the pause")
}

func TestDivergedStopsTheProgram(t *testing.T) {
	f := newFake(map[string]toolFunc{"x": func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
		return nil, toolloop.ErrDiverged
	}})
	_, err := runProgram(t.Context(), f, Limits{}, `await tools.x({}); return 1`)
	require.ErrorIs(t, err, toolloop.ErrDiverged)
}

// The same call ID gives the same random numbers; another gives others.
func TestRandomIsSeededByCallID(t *testing.T) {
	run := func(id string) string {
		p := &program{code: `return [Math.random(), Math.random()]`, limits: Limits{}.withDefaults(), calls: newFake(nil), seed: seedOf(id)}
		out, err := p.run(t.Context())
		require.NoError(t, err)
		require.Nil(t, out.fail)
		return out.value
	}
	assert.Equal(t, run("call_1"), run("call_1"))
	assert.NotEqual(t, run("call_1"), run("call_2"))
}

// A panic in an inner call's Run is a failed result for the program, not
// a crash.
func TestInnerPanicIsAToolError(t *testing.T) {
	f := newFake(map[string]toolFunc{"bad": func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) { panic("oops") }})
	out, err := runProgram(t.Context(), f, Limits{}, `try { await tools.bad({}) } catch (e) { return e.kind }`)
	require.NoError(t, err)
	assert.Equal(t, "panic", out.value)
}

// The wall clock is the context: a program waiting for a tool, or
// looping, ends with kind timeout when it ends, and its inner calls are
// cancelled.
func TestWallClock(t *testing.T) {
	for _, tc := range []struct{ name, code string }{
		{"waiting for a tool", `await tools.slow({}); return 1`},
		{"looping", `while (true) {}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			f := newFake(map[string]toolFunc{"slow": slow(time.Hour)})
			out, err := runProgram(ctx, f, Limits{ComputeTime: time.Hour}, tc.code)
			require.NoError(t, err)
			require.NotNil(t, out.fail)
			assert.Equal(t, toolloop.KindTimeout, out.fail.Kind)
			assert.Equal(t, LimitWallClock, out.limit)
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := newFake(map[string]toolFunc{"slow": func(ctx context.Context, a json.RawMessage) (*toolloop.ToolResult, error) {
			cancel()
			return slow(time.Hour)(ctx, a)
		}})
		out, err := runProgram(ctx, f, Limits{}, `await tools.slow({})`)
		require.NoError(t, err)
		require.NotNil(t, out.fail)
		assert.Equal(t, toolloop.KindCanceled, out.fail.Kind)
	})
}

func TestContextEndedBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out, err := runProgram(ctx, newFake(nil), Limits{}, `return 1`)
	require.NoError(t, err)
	require.NotNil(t, out.fail)
	assert.Equal(t, toolloop.KindCanceled, out.fail.Kind)
}

func TestConsoleIsBounded(t *testing.T) {
	out, err := runProgram(t.Context(), newFake(nil), Limits{MaxConsoleBytes: 100}, `for (let i = 0; i < 1000; i++) console.log("line " + i); return "done"`)
	require.NoError(t, err)
	assert.Equal(t, "done", out.value)
	assert.Equal(t, 100, out.console.buf.Len())
	assert.True(t, len("line 0\n") > 0 && out.console.buf.String()[:7] == "line 0\n", "the head is kept")
	assert.Greater(t, out.console.dropped, 5000)
	res := out.result()
	assert.Contains(t, res.Text(), fmt.Sprintf("[console output cut: %d more bytes]", out.console.dropped))
	assert.Equal(t, out.console.total, res.Meta.Extra["console_bytes"])
}

func TestResultIsBounded(t *testing.T) {
	out, err := runProgram(t.Context(), newFake(nil), Limits{MaxResultBytes: 10}, `return "é".repeat(100)`)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(out.value), 10)
	assert.Equal(t, 200-len(out.value), out.valueCut)
	assert.Contains(t, out.result().Text(), "[the return value was cut: ")
}

func TestResultText(t *testing.T) {
	for _, tc := range []struct {
		code, want string
	}{
		{`return "x"`, "x"},
		{`console.log("a", {b: 1}); console.warn("w")`, "Console output:\na {\"b\":1}\n[warn] w\n"},
		{`console.log("a"); return [1]`, "[\n  1\n]\n\nConsole output:\na\n"},
		{`return undefined`, "(the program returned nothing and printed nothing)"},
	} {
		out, err := runProgram(t.Context(), newFake(nil), Limits{}, tc.code)
		require.NoError(t, err)
		res := out.result()
		assert.False(t, res.IsError())
		assert.Equal(t, tc.want, res.Text(), tc.code)
	}
}
