// Package codemode offers the model a code tool: instead of calling tools
// one turn at a time, the model writes a short JavaScript program that
// calls them, and only what the program returns and prints comes back to
// it. A task of fifty tool calls takes one model turn, and the fifty
// results never enter the transcript.
//
//	code := codemode.New(reg, nil) // every tool of reg
//	reg.MustRegister(code)         // the model can now call run_code
//
// The tool's description presents the tools as TypeScript-style
// declarations made from their JSON Schemas (see [Tool.API]), and the
// model writes, for example:
//
//	const files = await tools.list_files({dir: "."});
//	const sizes = await Promise.all(files.map(f => tools.stat({path: f})));
//	return sizes.sort((a, b) => b.size - a.size).slice(0, 3);
//
// An MCP server's tools (see the mcp module) are a namespace named after
// the server: the registry's "github__create_issue" is
// tools.github.create_issue, and its structured result reaches the
// program as a value. A registry served over MCP with mcp.Serve can offer
// its code tool like any other: a client's program runs there, its inner
// calls through the serving loop's guard.
//
// # Inner calls
//
// Each tools.X call is an inner call of the code call (see
// [toolloop.Inner]): it goes through the run's whole pipeline (validate,
// guard, hooks, execute, truncate), is an event with the code call as its
// parent, counts against the run's budgets, and runs under the loop's
// concurrency limit. Its result reaches the program as a value (a result
// that is one JSON block is decoded, any other is its text), and a failed
// call throws a ToolError with .kind, .tool and .message. An inner call
// that needs approval pauses the whole run; on resume the program runs
// again from the start and the calls already answered are served from the
// journal, so time and randomness are made deterministic: Date.now() and
// new Date() give the time the program first started, all along, and
// Math.random is seeded from the call's ID. (Date's local-time methods use
// the process's time zone, which the interpreter takes from time.Local.)
//
// # The sandbox
//
// Programs run in github.com/dop251/goja, a JavaScript interpreter
// written in Go, one runtime per call, on the calling goroutine. A
// program has ECMAScript's built-ins, console and tools, and nothing
// else: no require or import, no process, fetch or file access, no
// timers (setTimeout and setInterval are undefined; a program that waits
// for something only a timer would settle fails at once). Nothing of Go
// is reachable: only strings and plain JavaScript values cross between
// the interpreter and Go. ArrayBuffer, the typed arrays, DataView and
// Proxy are left out (see below).
//
// [Limits] bounds compute time, memory, call depth, console output and
// the returned value; the call's timeout bounds its wall-clock time.
// Reaching a bound ends the program with a failed result that names it,
// along with the console output so far.
//
// The interpreter counts no instructions, and the Go runtime cannot
// bound one goroutine's memory, so both are watched: a watchdog
// goroutine adds up the time the interpreter spends running JavaScript
// and samples the Go heap every few milliseconds, and interrupts the
// program when either passes its limit. An interrupt takes effect at
// the program's next instruction, not inside a built-in: one built-in
// call that allocates much or loops long would outrun it, so the prelude
// that runs before each program checks the size of what such built-ins
// will make before they run (String.prototype.repeat, padStart, padEnd,
// replace, split, concat and String.raw; every Array.prototype method
// but push and pop, the array iterator that spread and for-of use,
// Array, Array.from, Function.prototype.apply, Reflect.apply and
// Reflect.construct; JSON.stringify), against the memory limit. The
// built-ins whose size it cannot check in advance are left out. A
// program's string concatenation (a + b) is not a call and cannot be
// checked: a program doubling a string can pass the memory limit by up
// to the size of its last concatenation before the interrupt lands.
//
// Regular expressions that RE2 cannot run (backreferences, lookaround)
// backtrack in native code; importing this package gives such matches a
// timeout of 2s (regexp2.DefaultMatchTimeout, process-wide, set only if
// still unset).
//
// # Keeping the description current
//
// A registry reads a tool's spec once, when the tool is added. Register
// the code tool after the tools it offers; when the registry's tools
// change at run time (an MCP server adds some), add the code tool with
// reg.AddSource(ctx, code.Source()) instead (see [Tool.Source]).
package codemode
