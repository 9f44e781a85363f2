package codemode

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/toolloop/toolloop"
)

// caller makes a program's inner calls. The code tool adapts
// [toolloop.Inner] to it; tests use a fake.
type caller interface {
	// prepare numbers a call; it is called on the program's goroutine,
	// in program order, and never blocks.
	prepare(name string, args json.RawMessage) runner
}

// runner runs one prepared inner call (see [toolloop.InnerCall.Run]): the
// error is non-nil only when the program must stop.
type runner interface {
	Run(ctx context.Context) (*toolloop.ToolResult, error)
}

// program is one run of a program: its code and what it may use.
type program struct {
	code  string
	tools []string // the names tools offers, sorted
	// spaces maps the registry names of MCP servers' tools to the
	// namespace and member they are called as (see namespaces).
	spaces map[string][2]string
	limits Limits // with defaults
	calls  caller
	// now is the time Date.now() and new Date() give, all along.
	now time.Time
	// seed seeds Math.random.
	seed uint64
}

// outcome is how a program ended, when it did not pause.
type outcome struct {
	value    string // the return value as text, cut to MaxResultBytes
	hasValue bool
	valueCut int // bytes cut from the value

	console console
	calls   int // inner calls made
	compute time.Duration

	fail  *toolloop.ToolError // nil when the program returned
	limit Limit               // the limit that ended it, if one did
}

// completion is an inner call's end, sent to the program's goroutine.
type completion struct {
	id  int
	res *toolloop.ToolResult
	err error
}

// settlers resolve or reject one inner call's promise.
type settlers struct {
	name            string
	resolve, reject func(any) error
}

// helpers are the prelude's functions the Go side calls.
type helpers struct {
	parse, fail, show, describe goja.Callable
}

//go:embed prelude.js
var preludeSource string

// prelude is the prelude compiled, shared by every runtime (a goja
// Program is not tied to one).
var prelude = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("prelude.js", preludeSource, false)
})

// wrapStart and wrapEnd make the code the body of an async function
// called at once. The start is on the code's first line, so line numbers
// in errors are the code's own.
const (
	wrapStart = "(async function () {"
	wrapEnd   = "\n})()"
)

// run is the state of a program while it runs. Everything but stop, the
// busy clock and the runtime's Interrupt belongs to the program's
// goroutine.
type run struct {
	p   *program
	vm  *goja.Runtime
	h   helpers
	out *outcome

	done     chan completion
	pending  map[int]settlers
	inflight int
	paused   error // the first error an inner call's Run returned
	wg       sync.WaitGroup

	stop atomic.Pointer[limitError] // the limit that ended the program
	busy busyClock
}

// seedOf is the seed of Math.random for a call ID.
func seedOf(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// run runs the program to its end. The error is non-nil only when an
// inner call's Run returned one (ErrPaused, ErrDiverged): the program was
// stopped, every inner call it started has returned, and the code tool
// returns the error. Otherwise the outcome says how the program ended. No
// goroutine it started outlives it.
func (p *program) run(ctx context.Context) (out *outcome, err error) {
	r := &run{p: p, out: &outcome{}, done: make(chan completion), pending: map[int]settlers{}}
	r.out.console.max = p.limits.MaxConsoleBytes
	innerCtx, cancelInner := context.WithCancel(ctx)
	quit := make(chan struct{})
	defer func() {
		// A panic of the interpreter is a failed result of kind panic
		// (its stack is not the model's business), after the inner
		// calls and the watchdog are done.
		if v := recover(); v != nil {
			cancelInner()
			r.drain()
			r.out.fail = toolloop.Errorf(toolloop.KindPanic, "the interpreter panicked: %v", v)
			out, err = r.out, nil
			if r.paused != nil {
				out, err = nil, r.paused
			}
		}
		close(quit)
		cancelInner()
		r.wg.Wait()
		if out != nil {
			out.compute = r.busy.used()
		}
	}()
	r.vm = goja.New()
	r.vm.SetMaxCallStackSize(p.limits.MaxStackDepth)
	now := p.now
	r.vm.SetTimeSource(func() time.Time { return now })
	rng := rand.New(rand.NewPCG(p.seed, p.seed^0x9e3779b97f4a7c15))
	r.vm.SetRandSource(rng.Float64)

	r.wg.Go(func() { r.watch(ctx, quit) })
	if ctx.Err() != nil {
		r.interrupt(&limitError{limit: LimitWallClock})
	}

	if f := r.setup(innerCtx); f != nil || r.stop.Load() != nil {
		r.out.fail = f
		return r.finish(ctx, cancelInner)
	}
	code, err := goja.Compile("program.js", wrapStart+p.code+wrapEnd, false)
	if body := asBody(p.code); body != p.code {
		// A whole function is called; if calling it does not compile (two
		// functions, say), the code is a body after all.
		if whole, werr := goja.Compile("program.js", wrapStart+body+wrapEnd, false); werr == nil {
			code, err = whole, nil
		}
	}
	if err != nil {
		r.out.fail = syntaxError(err)
		return r.out, nil
	}
	var v goja.Value
	if r.enter(func() error {
		var err error
		v, err = r.vm.RunProgram(code)
		return err
	}) {
		return r.finish(ctx, cancelInner)
	}
	promise, ok := v.Export().(*goja.Promise)
	if !ok {
		r.out.fail = toolloop.Errorf(toolloop.KindExecutionFailed, "the program did not run as an async function")
		return r.finish(ctx, cancelInner)
	}
	r.loop(ctx, promise)
	if r.out.fail == nil && r.paused == nil && r.stop.Load() == nil {
		r.settle(promise)
	}
	return r.finish(ctx, cancelInner)
}

// wholeFunction matches a program written as a whole function without
// parameters, as some agents' docs have models write it:
// "async () => { ... }" or "async function main() { ... }".
var wholeFunction = regexp.MustCompile(`^async\s*(?:\(\s*\)\s*=>|function\s*[\w$]*\s*\(\s*\))\s*\{`)

// asBody returns the code as the body of the program's function: as it
// is, or, for a program written as a whole function, a call of that
// function whose answer is returned (on the same lines, so line numbers
// in errors stay the code's own).
func asBody(code string) string {
	t := strings.TrimSpace(code)
	t = strings.TrimSpace(strings.TrimSuffix(t, ";"))
	if !wholeFunction.MatchString(t) || !strings.HasSuffix(t, "}") {
		return code
	}
	lead := code[:strings.Index(code, t[:5])]
	return lead + "return await (" + t + ")();"
}

// finish waits for the inner calls still running (cancelled if the
// program failed) and says how the program ended.
func (r *run) finish(ctx context.Context, cancelInner context.CancelFunc) (*outcome, error) {
	if r.out.fail == nil {
		if e := r.stop.Load(); e != nil {
			r.out.fail, r.out.limit = r.limitFailure(ctx, e), e.limit
		}
	}
	if r.out.fail != nil {
		cancelInner()
	}
	r.drain()
	if r.paused != nil {
		return nil, r.paused
	}
	return r.out, nil
}

// limitFailure is the failure for a limit reached.
func (r *run) limitFailure(ctx context.Context, e *limitError) *toolloop.ToolError {
	if e.limit == LimitWallClock {
		if errors.Is(ctx.Err(), context.Canceled) {
			return toolloop.Errorf(toolloop.KindCanceled, "the program was cancelled: %v", context.Cause(ctx))
		}
		return toolloop.Errorf(toolloop.KindTimeout, "%s", e.Error())
	}
	return toolloop.Errorf(toolloop.KindExecutionFailed, "%s", e.Error())
}

// setup runs the prelude and takes its helpers.
func (r *run) setup(innerCtx context.Context) *toolloop.ToolError {
	prog, err := prelude()
	if err != nil {
		return toolloop.Errorf(toolloop.KindExecutionFailed, "the prelude does not compile: %v", err)
	}
	// Each tool is its name, or [name, namespace, member].
	entries := make([]any, len(r.p.tools))
	for i, name := range r.p.tools {
		entries[i] = name
		if sp, ok := r.p.spaces[name]; ok {
			entries[i] = []string{name, sp[0], sp[1]}
		}
	}
	names, _ := json.Marshal(entries)
	lim := r.p.limits
	maxChars := lim.Memory / 2 // a character is up to 2 bytes
	maxElems := lim.Memory / 32
	var hv goja.Value
	failed := r.enter(func() error {
		f, err := r.vm.RunProgram(prog)
		if err != nil {
			return err
		}
		fn, ok := goja.AssertFunction(f)
		if !ok {
			return errors.New("the prelude is not a function")
		}
		hv, err = fn(goja.Undefined(),
			r.vm.ToValue(func(c goja.FunctionCall) goja.Value { return r.call(innerCtx, c) }),
			r.vm.ToValue(func(c goja.FunctionCall) goja.Value {
				r.out.console.write(c.Argument(0).String())
				return goja.Undefined()
			}),
			r.vm.ToValue(func(goja.FunctionCall) goja.Value {
				r.interrupt(&limitError{limit: LimitMemory, value: formatBytes(lim.Memory)})
				return goja.Undefined()
			}),
			r.vm.ToValue(string(names)),
			r.vm.ToValue(maxElems),
			r.vm.ToValue(maxChars),
			r.vm.ToValue(lim.MaxStackDepth),
		)
		return err
	})
	if failed {
		if r.stop.Load() != nil {
			return nil // finish names the limit
		}
		if r.out.fail != nil {
			return r.out.fail
		}
		return toolloop.Errorf(toolloop.KindExecutionFailed, "the prelude failed")
	}
	obj := hv.ToObject(r.vm)
	for name, dst := range map[string]*goja.Callable{"parse": &r.h.parse, "fail": &r.h.fail, "show": &r.h.show, "describe": &r.h.describe} {
		f, ok := goja.AssertFunction(obj.Get(name))
		if !ok {
			return toolloop.Errorf(toolloop.KindExecutionFailed, "the prelude has no %s", name)
		}
		*dst = f
	}
	return nil
}

// enter runs f, which runs JavaScript, on the busy clock, and reports
// whether the program must end: an uncatchable error (a limit) or an
// error the helpers threw, which it records in the outcome.
func (r *run) enter(f func() error) (ended bool) {
	if r.stop.Load() != nil {
		return true
	}
	r.busy.start()
	err := f()
	r.busy.end()
	if err == nil {
		return r.stop.Load() != nil
	}
	var soe *goja.StackOverflowError
	var ie *goja.InterruptedError
	var ex *goja.Exception
	switch {
	case errors.As(err, &soe):
		r.stop.CompareAndSwap(nil, &limitError{limit: LimitStackDepth, value: fmt.Sprint(r.p.limits.MaxStackDepth)})
	case errors.As(err, &ie):
		if r.stop.Load() == nil {
			r.out.fail = toolloop.Errorf(toolloop.KindExecutionFailed, "the program was interrupted: %v", ie.Value())
		}
	case errors.As(err, &ex):
		r.out.fail = toolloop.Errorf(toolloop.KindExecutionFailed, "%s", r.describeQuietly(ex.Value()))
	default:
		r.out.fail = toolloop.Errorf(toolloop.KindExecutionFailed, "the program failed: %v", err)
	}
	return true
}

// describeQuietly describes a thrown value without letting a second
// error out.
func (r *run) describeQuietly(v goja.Value) string {
	if r.h.describe == nil || r.stop.Load() != nil {
		return "the program threw " + v.String()
	}
	var s string
	r.busy.start()
	d, err := r.h.describe(goja.Undefined(), v)
	r.busy.end()
	if err != nil {
		return "the program threw an error that cannot be described"
	}
	s = d.String()
	return s
}

// call is tools.X: it prepares the inner call, runs it on a goroutine of
// its own, and returns a promise the loop settles.
func (r *run) call(ctx context.Context, c goja.FunctionCall) goja.Value {
	name := c.Argument(0).String()
	args := c.Argument(1).String()
	promise, resolve, reject := r.vm.NewPromise()
	ic := r.p.calls.prepare(name, json.RawMessage(args))
	id := r.out.calls
	r.out.calls++
	r.pending[id] = settlers{name: name, resolve: resolve, reject: reject}
	r.inflight++
	r.wg.Go(func() {
		res, err := runQuietly(ctx, ic)
		r.done <- completion{id: id, res: res, err: err}
	})
	return r.vm.ToValue(promise)
}

// runQuietly runs an inner call, turning a panic into a failed result.
func runQuietly(ctx context.Context, ic runner) (res *toolloop.ToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = toolloop.ErrorResult(toolloop.Errorf(toolloop.KindPanic, "the inner call panicked: %v", v)), nil
		}
	}()
	res, err = ic.Run(ctx)
	if err == nil && res == nil {
		res = toolloop.ErrorResult(toolloop.Errorf(toolloop.KindExecutionFailed, "the inner call returned no result"))
	}
	return res, err
}

// loop settles the inner calls' promises as their calls end, until the
// program's promise is settled and no inner call runs, or the program
// must stop.
func (r *run) loop(ctx context.Context, promise *goja.Promise) {
	for {
		if r.out.fail != nil || r.paused != nil || r.stop.Load() != nil {
			return
		}
		if r.inflight == 0 {
			if promise.State() == goja.PromiseStatePending {
				r.out.fail = toolloop.Errorf(toolloop.KindExecutionFailed,
					"the program waits for a promise that nothing will settle: only tool calls settle promises here (there are no timers)")
			}
			return
		}
		select {
		case c := <-r.done:
			r.inflight--
			s := r.pending[c.id]
			delete(r.pending, c.id)
			if c.err != nil {
				r.paused = c.err
				return
			}
			r.enter(func() error { return r.deliver(s, c.res) })
		case <-ctx.Done():
			r.interrupt(&limitError{limit: LimitWallClock})
			return
		}
	}
}

// deliver settles a promise with an inner call's result.
func (r *run) deliver(s settlers, res *toolloop.ToolResult) error {
	if res.Status == toolloop.StatusError {
		kind, msg := toolloop.KindExecutionFailed, res.Text()
		if res.Error != nil {
			kind = res.Error.Kind
			if msg == "" {
				msg = res.Error.Message
			}
		}
		e, err := r.h.fail(goja.Undefined(), r.vm.ToValue(s.name), r.vm.ToValue(string(kind)), r.vm.ToValue(msg))
		if err != nil {
			return err
		}
		return s.reject(e)
	}
	if raw := jsonOf(res); raw != "" {
		v, err := r.h.parse(goja.Undefined(), r.vm.ToValue(raw))
		var ex *goja.Exception
		switch {
		case errors.As(err, &ex): // not JSON after all: its text
			return s.resolve(r.vm.ToValue(res.Text()))
		case err != nil:
			return err
		}
		return s.resolve(v)
	}
	return s.resolve(r.vm.ToValue(res.Text()))
}

// jsonOf returns the JSON a result is, or "": the JSON of a result that
// is one JSON block; or the text of one text block of an MCP server's
// tool that is a JSON object or array, since the mcp module passes a
// server's structured content on as the text it sent beside it (an MCP
// tool's JSON reaches the program as a value either way).
func jsonOf(res *toolloop.ToolResult) string {
	if len(res.Content) != 1 {
		return ""
	}
	c := &res.Content[0]
	switch {
	case c.Type == toolloop.ContentJSON:
		return string(c.JSON)
	case c.Type == toolloop.ContentText && res.Meta.Source == toolloop.SourceMCP:
		t := strings.TrimSpace(c.Text)
		if t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
			return t
		}
	}
	return ""
}

// drain waits for every inner call still running; one that returns an
// error stops the program (the first such error is kept).
func (r *run) drain() {
	for r.inflight > 0 {
		c := <-r.done
		r.inflight--
		delete(r.pending, c.id)
		if c.err != nil && r.paused == nil {
			r.paused = c.err
		}
	}
}

// settle records the program's end from its promise.
func (r *run) settle(promise *goja.Promise) {
	switch promise.State() {
	case goja.PromiseStateRejected:
		msg := r.describeQuietly(promise.Result())
		if e := r.stop.Load(); e != nil {
			return
		}
		r.out.fail = toolloop.Errorf(toolloop.KindExecutionFailed, "%s", msg)
	case goja.PromiseStateFulfilled:
		var shown goja.Value
		if r.enter(func() error {
			var err error
			shown, err = r.h.show(goja.Undefined(), promise.Result())
			return err
		}) {
			return
		}
		if shown == nil || goja.IsUndefined(shown) {
			return
		}
		r.out.value, r.out.valueCut = cut(shown.String(), r.p.limits.MaxResultBytes)
		r.out.hasValue = true
	}
}

// interrupt ends the program at its next instruction for the reason e;
// the first reason wins. Safe from any goroutine.
func (r *run) interrupt(e *limitError) {
	if r.stop.CompareAndSwap(nil, e) {
		r.vm.Interrupt(e)
	}
}

// syntaxError is the failure for code that does not compile.
func syntaxError(err error) *toolloop.ToolError {
	var se *goja.CompilerSyntaxError
	msg := err.Error()
	if errors.As(err, &se) {
		// goja reports "program.js: Line L:C message (and N more
		// errors)"; the others are the wrapper's, which the first
		// error leaves unclosed.
		msg = strings.TrimPrefix(se.Message, "program.js: ")
		if i := strings.LastIndex(msg, " (and "); i > 0 && strings.HasSuffix(msg, " more errors)") {
			msg = msg[:i]
		}
		msg = fixColumn(msg)
	}
	return toolloop.Errorf(toolloop.KindInvalidArgs, "the code does not compile: SyntaxError: %s", msg)
}

// fixColumn takes the wrapper's length off a column on line 1 in a goja
// message "Line 1:C ...".
func fixColumn(msg string) string {
	var line, col int
	var rest string
	if n, _ := fmt.Sscanf(msg, "Line %d:%d", &line, &col); n == 2 {
		prefix := fmt.Sprintf("Line %d:%d", line, col)
		rest = strings.TrimPrefix(msg, prefix)
		if line == 1 {
			col -= len(wrapStart)
			if col < 1 {
				col = 1
			}
		}
		return fmt.Sprintf("line %d, column %d:%s", line, col, rest)
	}
	return msg
}

// cut returns s cut to at most n bytes at a UTF-8 boundary, and how many
// bytes were cut.
func cut(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	k := n
	for k > 0 && s[k]&0xC0 == 0x80 {
		k--
	}
	return s[:k], len(s) - k
}

// console is the console output kept: the head, up to max bytes.
type console struct {
	max     int
	buf     strings.Builder
	total   int
	dropped int
}

func (c *console) write(s string) {
	c.total += len(s)
	room := c.max - c.buf.Len()
	if room >= len(s) {
		c.buf.WriteString(s)
		return
	}
	if room > 0 {
		head, rest := cut(s, room)
		c.buf.WriteString(head)
		c.dropped += rest
		return
	}
	c.dropped += len(s)
}

// busyClock adds up the time the runtime spends running JavaScript.
type busyClock struct {
	mu    sync.Mutex
	total time.Duration
	since time.Time // zero while idle
}

func (b *busyClock) start() {
	b.mu.Lock()
	b.since = time.Now()
	b.mu.Unlock()
}

func (b *busyClock) end() {
	b.mu.Lock()
	b.total += time.Since(b.since)
	b.since = time.Time{}
	b.mu.Unlock()
}

func (b *busyClock) used() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.total
	if !b.since.IsZero() {
		t += time.Since(b.since)
	}
	return t
}
