package codemode

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

// standardGlobals are the only names a program finds on its global
// object: ECMAScript's, console and tools. Nothing of Go, no timers, no
// modules, no I/O.
var standardGlobals = []string{
	"AggregateError", "Array", "BigInt", "Boolean", "Date", "Error", "EvalError", "Function", "Infinity", "JSON",
	"Map", "Math", "NaN", "Number", "Object", "Promise", "RangeError", "ReferenceError", "Reflect", "RegExp", "Set",
	"String", "Symbol", "SyntaxError", "TypeError", "URIError", "WeakMap", "WeakSet", "console", "decodeURI",
	"decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "eval", "globalThis", "isFinite", "isNaN",
	"parseFloat", "parseInt", "tools", "undefined", "unescape", "Symbol(Symbol.toStringTag)",
}

func TestGlobalsAreOnlyStandard(t *testing.T) {
	out, err := runProgram(t.Context(), newFake(map[string]toolFunc{"echo": echo}), Limits{},
		`return Object.getOwnPropertyNames(globalThis).concat(Object.getOwnPropertySymbols(globalThis).map(String))`)
	require.NoError(t, err)
	var got []string
	require.NoError(t, json.Unmarshal([]byte(out.value), &got))
	assert.ElementsMatch(t, standardGlobals, got)
}

// Each escape attempt either fails inside the sandbox or reaches only
// the sandbox's own JavaScript values.
func TestEscapeAttempts(t *testing.T) {
	for _, tc := range []struct {
		name string
		code string
		want any // the decoded return value; nil: the program must fail
		kind toolloop.ErrorKind
	}{
		{name: "constructor of constructor reaches only the sandbox global",
			code: `const g = this.constructor.constructor("return this")(); return [g === globalThis, typeof g.process, typeof g.require]`,
			want: []any{true, "undefined", "undefined"}},
		{name: "Function reaches only the sandbox global",
			code: `const g = Function("return globalThis")(); return Object.keys(g).length === 0 && typeof g.tools`, want: "object"},
		{name: "eval runs in the sandbox", code: `return eval("typeof require + typeof fetch")`, want: "undefinedundefined"},
		{name: "require", code: `require("fs")`, kind: toolloop.KindExecutionFailed},
		{name: "process", code: `return process.env`, kind: toolloop.KindExecutionFailed},
		{name: "fetch", code: `return await fetch("http://example.com")`, kind: toolloop.KindExecutionFailed},
		{name: "dynamic import", code: `return await import("fs")`, kind: toolloop.KindInvalidArgs},
		{name: "timers", code: `return [typeof setTimeout, typeof setInterval, typeof setImmediate, typeof queueMicrotask]`,
			want: []any{"undefined", "undefined", "undefined", "undefined"}},
		{name: "tools has no prototype", code: `return [Object.getPrototypeOf(tools), typeof tools.constructor, typeof tools.__proto__]`,
			want: []any{nil, "undefined", "undefined"}},
		{name: "tools is frozen", code: `"use strict"; tools.echo = () => 1; return 1`, kind: toolloop.KindExecutionFailed},
		{name: "a tool function's constructor is the sandbox's Function",
			code: `return tools.echo.constructor("return typeof globalThis.require")()`, want: "undefined"},
		{name: "results are plain values",
			code: `const r = await tools.echo({a: 1}); return [Object.getPrototypeOf(r) === Object.prototype, Object.getOwnPropertyNames(r)]`,
			want: []any{true, []any{"a"}}},
		{name: "tool errors are plain errors",
			code: `try { await tools.deny({}) } catch (e) { return [e instanceof Error, Object.getOwnPropertyNames(e).sort()] }`,
			want: []any{true, []any{"kind", "message", "name", "stack", "tool"}}},
		{name: "a thrown Go error is not reachable", code: `return typeof GoError`, want: "undefined"},
		{name: "typed arrays are not offered", code: `return [typeof ArrayBuffer, typeof Uint8Array, typeof Proxy]`,
			want: []any{"undefined", "undefined", "undefined"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(map[string]toolFunc{"echo": echo, "deny": failing(toolloop.KindDenied, "no")})
			out, err := runProgram(t.Context(), f, Limits{}, tc.code)
			require.NoError(t, err)
			if tc.want == nil {
				require.NotNil(t, out.fail, "the attempt did not fail: %s", out.value)
				assert.Equal(t, tc.kind, out.fail.Kind, out.fail.Message)
				return
			}
			if s, ok := tc.want.(string); ok {
				require.Nil(t, out.fail)
				assert.Equal(t, s, out.value)
				return
			}
			assert.Equal(t, tc.want, decoded(t, out))
		})
	}
}

// A program that replaces built-ins and pollutes prototypes changes its
// own world only: the Go side and the next program are untouched.
func TestPrototypePollutionStaysInside(t *testing.T) {
	f := newFake(map[string]toolFunc{"echo": echo, "deny": failing(toolloop.KindDenied, "no")})
	out, err := runProgram(t.Context(), f, Limits{}, `
Object.prototype.kind = "polluted";
Object.prototype.toJSON = function () { return "polluted" };
JSON.stringify = () => "polluted";
JSON.parse = () => "polluted";
Function.prototype.call = () => "polluted";
Reflect.apply = () => "polluted";
Array.prototype.push = () => 0;
const r = await tools.echo({a: 1});
let kind;
try { await tools.deny({}) } catch (e) { kind = Object.getOwnPropertyDescriptor(e, "kind").value }
console.log({x: 1});
return [r, kind];`)
	require.NoError(t, err)
	require.Nil(t, out.fail)
	// toJSON applies to what the program itself sends and returns.
	assert.Equal(t, []string{`echo "polluted"`, `deny "polluted"`}, f.calls())
	assert.Equal(t, `"polluted"`, out.value)
	assert.Equal(t, "\"polluted\"\n", out.console.buf.String())

	// A fresh program sees a fresh world.
	out, err = runProgram(t.Context(), f, Limits{}, `return [({}).kind, typeof Object.prototype.toJSON]`)
	require.NoError(t, err)
	assert.Equal(t, []any{nil, "undefined"}, decoded(t, out))
}

// A tool result whose JSON has a "__proto__" key gives the program an
// own property of that name, not a new prototype.
func TestResultCannotPollute(t *testing.T) {
	f := newFake(map[string]toolFunc{"evil": func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
		return &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.JSONContent(json.RawMessage(`{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}`))}}, nil
	}})
	out, err := runProgram(t.Context(), f, Limits{}, `
const r = await tools.evil();
return [({}).polluted === undefined, Object.getPrototypeOf(r) === Object.prototype, Object.keys(r).sort()]`)
	require.NoError(t, err)
	assert.Equal(t, []any{true, true, []any{"__proto__", "constructor"}}, decoded(t, out))
}

// A console flood without end is bounded twice: the output kept, and the
// compute time.
func TestConsoleFlood(t *testing.T) {
	out, err := runProgram(t.Context(), newFake(nil), Limits{ComputeTime: 200 * time.Millisecond, MaxConsoleBytes: 1000}, `for (;;) console.log("x".repeat(1000))`)
	require.NoError(t, err)
	require.NotNil(t, out.fail)
	assert.Equal(t, LimitComputeTime, out.limit)
	assert.Equal(t, 1000, out.console.buf.Len())
	assert.Greater(t, out.console.dropped, 10000)
	assert.Contains(t, out.result().Text(), "Console output:\n")
}

// No timer outlives the call: there are none, and a promise that only a
// timer would settle ends the program with a failure, at once.
func TestNoTimerOutlivesTheCall(t *testing.T) {
	var calls atomic.Int32
	f := newFake(map[string]toolFunc{"tick": func(context.Context, json.RawMessage) (*toolloop.ToolResult, error) {
		calls.Add(1)
		return toolloop.TextResult("tick"), nil
	}})
	start := time.Now()
	out, err := runProgram(t.Context(), f, Limits{}, `
const later = new Promise(resolve => { if (typeof setTimeout === "function") setTimeout(resolve, 10) });
later.then(() => tools.tick({}));
await later;`)
	require.NoError(t, err)
	require.NotNil(t, out.fail)
	assert.Contains(t, out.fail.Message, "nothing will settle")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Zero(t, calls.Load())
}
