package codemode

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

func TestLimitsDefaults(t *testing.T) {
	assert.Equal(t, Limits{
		ComputeTime:     DefaultComputeTime,
		Memory:          DefaultMemory,
		MaxStackDepth:   DefaultMaxStackDepth,
		MaxConsoleBytes: DefaultMaxConsoleBytes,
		MaxResultBytes:  DefaultMaxResultBytes,
	}, Limits{}.withDefaults())
	assert.Equal(t, Limits{}.withDefaults(), Limits{ComputeTime: -1, Memory: -1, MaxStackDepth: -1, MaxConsoleBytes: -1, MaxResultBytes: -1}.withDefaults())
	l := Limits{ComputeTime: time.Second, Memory: 1 << 20, MaxStackDepth: 10, MaxConsoleBytes: 5, MaxResultBytes: 6}
	assert.Equal(t, l, l.withDefaults())
}

// Every bound ends the program as a failed result that names it, never a
// crash. The limits are small so that the tests are quick; the memory
// tests do not run in parallel, as the measure is process-wide.
func TestLimitsEndPrograms(t *testing.T) {
	small := Limits{ComputeTime: 200 * time.Millisecond, Memory: 32 << 20, MaxStackDepth: 200}
	for _, tc := range []struct {
		name  string
		code  string
		limit Limit
		slow  bool // it grows step by step: give it compute time
	}{
		{"endless loop", `while (true) {}`, LimitComputeTime, false},
		{"endless loop that catches", `while (true) { try { while (true) {} } catch (e) {} }`, LimitComputeTime, false},
		{"endless loop after a tool call", `await tools.echo({}); for (;;) {}`, LimitComputeTime, false},
		{"endless recursion", `function f(n) { return f(n + 1) + 1 } return f(0)`, LimitStackDepth, false},
		{"endless recursion caught", `function f() { try { return f() } catch (e) { return f() } } return f()`, LimitStackDepth, false},
		{"huge repeat", `return "x".repeat(2 ** 30).length`, LimitMemory, false},
		{"huge repeat of unicode", `return "é".repeat(2 ** 28).length`, LimitMemory, false},
		{"huge padStart", `return "".padStart(2 ** 31).length`, LimitMemory, false},
		{"huge array filled", `return new Array(2 ** 32 - 1).fill(0).length`, LimitMemory, false},
		{"huge array by length", `const a = []; a.length = 2 ** 32 - 1; return a.map(x => x).length`, LimitMemory, false},
		{"huge array joined", `const a = []; a.length = 2 ** 32 - 1; return a.join("x").length`, LimitMemory, false},
		{"huge array stringified", `const a = []; a.length = 2 ** 32 - 1; return JSON.stringify(a).length`, LimitMemory, false},
		{"huge spread", `return [...new Array(2 ** 32 - 1)].length`, LimitMemory, false},
		{"huge array-like", `return Array.from({length: 2 ** 32}).length`, LimitMemory, false},
		{"huge apply", `return Math.max.apply(null, {length: 2 ** 31})`, LimitMemory, false},
		{"big string repeated by join", `const s = "x".repeat(1 << 20); return new Array(1000).fill(s).join("").length`, LimitMemory, false},
		{"splitting into too many pieces", `return "x".repeat(2e6).split("").length`, LimitMemory, true},
		{"big string repeated by replace", `const s = "x".repeat(1 << 16); return s.replace(/x/g, s).length`, LimitMemory, false},
		{"spread of a huge array", `const a = []; a.length = 2 ** 32 - 1; return Math.max(...a)`, LimitMemory, false},
		{"iterating a huge array natively", `const a = []; a.length = 2 ** 32 - 1; return new Set(a).size`, LimitMemory, false},
		{"String.raw of a huge array-like", `return String.raw({raw: {length: 2 ** 32}})`, LimitMemory, false},
		{"catastrophic regular expression", `return /^((a+)+\2?)+$/.test("a".repeat(40) + "!")`, LimitComputeTime, false},
		{"doubling a string", `let s = "x"; while (true) s = s + s;`, LimitMemory, true},
		{"growing an array", `const a = []; while (true) a.push({n: a.length, s: "abc"});`, LimitMemory, true},
		{"growing an object", `const o = {}; for (let i = 0; ; i++) o["k" + i] = [i];`, LimitMemory, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := small
			if tc.slow {
				l.ComputeTime = time.Minute
			}
			out, err := runProgram(t.Context(), newFake(map[string]toolFunc{"echo": echo}), l, tc.code)
			require.NoError(t, err)
			require.NotNil(t, out.fail, "the program ended normally: %q", out.value)
			assert.Equal(t, toolloop.KindExecutionFailed, out.fail.Kind)
			assert.Equal(t, tc.limit, out.limit, out.fail.Message)
			assert.Equal(t, string(tc.limit), out.result().Meta.Extra["limit"])
		})
	}
}

// Built-ins that recurse on the Go stack meet a nesting bound (the stack
// depth limit) instead of overflowing it.
func TestDeepNestingIsRefused(t *testing.T) {
	for _, code := range []string{
		`let o = {}; for (let i = 0; i < 5000; i++) o = {o}; return JSON.stringify(o)`,
		`let a = [1]; for (let i = 0; i < 5000; i++) a = [a]; return a.flat(Infinity)`,
		`let o = {}; for (let i = 0; i < 5000; i++) o = {o}; console.log(o)`,
	} {
		out, err := runProgram(t.Context(), newFake(nil), Limits{MaxStackDepth: 100}, code)
		require.NoError(t, err)
		if out.fail == nil {
			// console.log shows what it cannot make JSON another way.
			assert.NotContains(t, out.console.buf.String(), `{"o":{"o"`, code)
			continue
		}
		assert.Contains(t, out.fail.Message, "RangeError: code mode:", code)
		assert.Contains(t, out.fail.Message, "deeper than 100 levels", code)
	}
}

// split is checked on the pieces it makes, not on the length of the
// string: a long text split into lines is fine.
func TestSplitOfALongText(t *testing.T) {
	// 1.2 M characters, more than the 1 M pieces 32 MiB allows. The
	// splits take about a second of compute, which on a loaded machine
	// came to more than the default 5 s: the test is of split, not of
	// the time limit.
	out, err := runProgram(t.Context(), newFake(nil), Limits{Memory: 32 << 20, ComputeTime: time.Minute}, `
const text = "aaaaaaaaa\n".repeat(120000);
return [text.length, text.split("\n").length, text.split(/\n/).length, text.split("\n", 3).length]`)
	require.NoError(t, err)
	assert.Equal(t, []any{1200000.0, 120001.0, 120001.0, 3.0}, decoded(t, out))
}

// A getter-made length cannot tell the guard one length and the built-in
// another.
func TestLengthGetterIsRefused(t *testing.T) {
	out, err := runProgram(t.Context(), newFake(nil), Limits{}, `
let n = 0;
const o = { get length() { return n++ ? 2 ** 32 : 1 } };
return Array.prototype.fill.call(o, 0)`)
	require.NoError(t, err)
	require.NotNil(t, out.fail)
	assert.Contains(t, out.fail.Message, "length is a getter")
}

// Compute time counts only JavaScript: a program that waits long for its
// tools is not stopped by a small compute limit.
func TestComputeTimeExcludesToolWaits(t *testing.T) {
	f := newFake(map[string]toolFunc{"slow": slow(300 * time.Millisecond)})
	out, err := runProgram(t.Context(), f, Limits{ComputeTime: 100 * time.Millisecond}, `await tools.slow({}); await tools.slow({}); return "ok"`)
	require.NoError(t, err)
	require.Nil(t, out.fail)
	assert.Equal(t, "ok", out.value)
	assert.Less(t, out.compute, 100*time.Millisecond)
}

// Programs of ordinary size stay well inside the default memory and size
// bounds. (Compute time is not what this checks: under the race detector
// on a loaded machine the program takes seconds, not its 0.2s.)
func TestOrdinaryProgramsFit(t *testing.T) {
	out, err := runProgram(t.Context(), newFake(nil), Limits{ComputeTime: 5 * time.Minute}, `
const rows = [];
for (let i = 0; i < 20000; i++) rows.push({id: i, name: "item " + i, tags: ["a", "b"]});
const text = rows.map(r => r.id + "," + r.name).join("\n");
const back = JSON.parse(JSON.stringify(rows));
return [rows.length, text.length, back.length, "ab".repeat(1000).length, [1, [2, [3]]].flat(Infinity).length]`)
	require.NoError(t, err)
	require.Nil(t, out.fail)
	assert.Equal(t, []any{20000.0, 317779.0, 20000.0, 2000.0, 3.0}, decoded(t, out))
}
