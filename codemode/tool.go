package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolloop/toolloop"
)

// DefaultName is the code tool's name when Tool.Name is empty.
const DefaultName = "run_code"

// Tool is the code tool: the model gives it a JavaScript program, the
// program calls the registry's tools, and the model sees what the
// program returns and prints. Make one with [New]; set its fields before
// adding it to a registry.
type Tool struct {
	// Name is the tool's name; empty means [DefaultName].
	Name string
	// Timeout is the wall-clock limit of one call, program and tool
	// calls together (it becomes ToolSpec.Timeout); 0 means the loop's
	// ToolTimeout. A program that runs past it ends with kind timeout.
	Timeout time.Duration
	// Limits bound what one program may use; the zero value is the
	// defaults.
	Limits Limits

	reg *toolloop.ToolRegistry
	sel toolloop.ToolSelector

	view    atomic.Pointer[view] // what the spec describes
	mu      sync.Mutex           // guards changed
	changed func()               // from the registry, when added as a source
}

// view is the registry's tools as the spec describes them.
type view struct {
	names []string
	// spaces maps the registry names of MCP servers' tools to their
	// namespace and member (see namespaces).
	spaces map[string][2]string
	api    string
	ann    toolloop.Annotations
	// first and n identify the registry's tool list the view was made
	// from (the registry shares one slice per state), and sum its
	// content, so that a change is noticed cheaply.
	first *toolloop.ToolInfo
	n     int
	sum   uint64
}

// New returns a code tool offering the tools of reg that sel selects
// (nil: every tool of reg but the code tool itself); a code tool is never
// offered to a program, as programs do not nest. The tools are looked up
// in reg when a program runs, and its inner calls run in the run's
// registry, through its whole pipeline.
//
// The spec's description lists the tools reg has when New is called.
// Register the code tool after the tools it offers; if reg's tools change
// later (an MCP server adds some), add the code tool as a source instead,
// with reg.AddSource(ctx, t.Source()), and its description follows them
// (see [Tool.Source]).
func New(reg *toolloop.ToolRegistry, sel toolloop.ToolSelector) *Tool {
	t := &Tool{reg: reg, sel: sel}
	t.view.Store(t.look(context.Background()))
	return t
}

// name is the tool's name.
func (t *Tool) name() string {
	if t.Name == "" {
		return DefaultName
	}
	return t.Name
}

// codeSchema is the input schema of the code tool.
var codeSchema = json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","minLength":1,` +
	`"description":"The body of an async JavaScript function: use await, and return the answer."}},` +
	`"required":["code"],"additionalProperties":false}`)

// instructions open the description.
const instructions = `Run a JavaScript program that calls tools itself; only what it returns and prints comes back to you. Use it to make many tool calls, or calls that depend on each other, in one step.

- The code is the body of an async function: use await at the top level and ` + "`return`" + ` the answer (a string as it is, any other value as JSON). Code that is one whole ` + "`async () => { ... }`" + ` function is called, and its answer returned.
- Call a tool as ` + "`await tools.name({...})`" + ` (a name that is not an identifier as ` + "`tools[\"my-tool\"]`" + `; an MCP server's tools as ` + "`tools.server.name`" + `); it resolves to the tool's result, decoded when it is JSON, text otherwise. Run independent calls at once with Promise.all.
- A failed call throws a ToolError with .kind (not_found, invalid_args, denied, timeout, canceled, panic, execution_failed), .tool and .message; catch it with try/catch.
- console.log output is captured and shown after the return value.
- There is no file, network, process or module access (no require, import, fetch, process), no setTimeout or setInterval, and Date.now() is fixed at the program's start; Math.random is seeded. Compute time, memory, call depth and output are limited.

The tools:
`

// Spec describes the code tool; its description lists the tools as
// TypeScript-style declarations (see [Tool.API]) as they were when the
// registry last read the spec.
func (t *Tool) Spec() toolloop.ToolSpec {
	v := t.view.Load()
	if v == nil {
		v = &view{api: declarations(nil, nil)}
	}
	return toolloop.ToolSpec{
		Name:        t.name(),
		Description: instructions + "\n```ts\n" + v.api + "```\n",
		InputSchema: codeSchema,
		Annotations: v.ann,
		Timeout:     t.Timeout,
	}
}

// API returns the declarations of the tools a program may call now, as
// the description shows them: for each tool, sorted by name, its
// description as a comment and its signature, with TypeScript types made
// from its JSON Schemas, inside "declare const tools: { ... }".
func (t *Tool) API(ctx context.Context) string {
	return t.look(ctx).api
}

// look reads the registry's tools and makes the view of those selected.
func (t *Tool) look(ctx context.Context) *view {
	v := &view{ann: toolloop.Annotations{Title: "Run code", ReadOnly: true}}
	var infos []toolloop.ToolInfo
	if t.reg != nil {
		infos = t.reg.Tools(ctx)
	}
	if len(infos) > 0 {
		v.first, v.n = &infos[0], len(infos)
	}
	var specs []toolloop.ToolSpec
	var chosen []*toolloop.ToolInfo
	h := fnv.New64a()
	for i := range infos {
		ti := &infos[i]
		if ti.Name == t.name() || (t.sel != nil && !t.sel(ti)) {
			continue
		}
		if tool, ok := t.reg.Lookup(ctx, ti.Name); ok {
			if _, code := tool.(*Tool); code {
				continue
			}
		}
		specs = append(specs, ti.ToolSpec)
		chosen = append(chosen, ti)
		v.names = append(v.names, ti.Name)
		v.ann.ReadOnly = v.ann.ReadOnly && ti.Annotations.ReadOnly
		v.ann.Destructive = v.ann.Destructive || ti.Annotations.Destructive
		v.ann.OpenWorld = v.ann.OpenWorld || ti.Annotations.OpenWorld
		for _, s := range []string{ti.Name, ti.Description, string(ti.InputSchema), string(ti.OutputSchema)} {
			_, _ = io.WriteString(h, s)
			_, _ = h.Write([]byte{0})
		}
	}
	v.sum = h.Sum64()
	v.spaces = namespaces(chosen)
	v.api = declarations(specs, v.spaces)
	return v
}

// current returns the tools selected now, and tells the registry to read
// the spec again if they changed since it last did.
func (t *Tool) current(ctx context.Context) *view {
	old := t.view.Load()
	if t.reg == nil {
		return &view{}
	}
	infos := t.reg.Tools(ctx)
	if old != nil && len(infos) == old.n && (len(infos) == 0 || &infos[0] == old.first) {
		return old
	}
	v := t.look(ctx)
	t.view.Store(v)
	if old == nil || v.sum != old.sum {
		t.mu.Lock()
		changed := t.changed
		t.mu.Unlock()
		if changed != nil {
			changed()
		}
	}
	return v
}

// Source returns a source of kind builtin, named as the tool, that offers
// the code tool. Add it to the registry the tool was made from, instead
// of registering the tool, when that registry's tools change at run time:
// the registry reads the tool's spec again when the source says it
// changed, and the source says so when a program runs and finds the
// selected tools changed since the description was made. The
// description is thus up to date from the turn after the first code call
// that follows the change; the tools themselves are callable at once.
func (t *Tool) Source() toolloop.Source { return &source{t: t} }

type source struct{ t *Tool }

func (s *source) Name() string              { return s.t.name() }
func (s *source) Kind() toolloop.SourceKind { return toolloop.SourceBuiltin }

// Tools makes the spec's view afresh and offers the tool.
func (s *source) Tools(ctx context.Context) ([]toolloop.Tool, error) {
	s.t.view.Store(s.t.look(ctx))
	return []toolloop.Tool{s.t}, nil
}

// Notify keeps the registry's callback for [Tool.current].
func (s *source) Notify(changed func()) {
	s.t.mu.Lock()
	s.t.changed = changed
	s.t.mu.Unlock()
}

// innerCalls adapts [toolloop.Inner] to caller.
type innerCalls struct{ in *toolloop.Inner }

func (c innerCalls) prepare(name string, args json.RawMessage) runner {
	return c.in.Prepare(name, args)
}

// Run runs the program in the call's arguments and returns what it
// returned and printed. A program that fails (it throws, reaches a
// limit, or does not compile) gives a failed result the model sees; the
// error is non-nil only when an inner call paused the run or a program
// run again on resume took another path (see [toolloop.Inner]).
func (t *Tool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in struct {
		Code string `json:"code"`
	}
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, toolloop.Errorf(toolloop.KindInvalidArgs, "the code is empty")
	}
	inner := call.Inner()
	if inner == nil {
		return nil, toolloop.Errorf(toolloop.KindExecutionFailed,
			"%s runs only as a call of an agent loop: not from inside another program, and not as a background job", t.name())
	}
	v := t.current(ctx)
	p := &program{
		code:   in.Code,
		tools:  v.names,
		spaces: v.spaces,
		limits: t.Limits.withDefaults(),
		calls:  innerCalls{inner},
		now:    inner.Started(),
		seed:   seedOf(call.ID),
	}
	out, err := p.run(ctx)
	if err != nil {
		return nil, err
	}
	return out.result(), nil
}

// result is the outcome as the model sees it: the return value, then
// the console output under a header; or the failure, then the console
// output.
func (o *outcome) result() *toolloop.ToolResult {
	var b strings.Builder
	if o.fail != nil {
		b.WriteString(o.fail.Message)
	} else if o.hasValue {
		b.WriteString(o.value)
		if o.valueCut > 0 {
			fmt.Fprintf(&b, "\n[the return value was cut: %d more bytes]", o.valueCut)
		}
	}
	if o.console.total > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("Console output:\n")
		b.WriteString(o.console.buf.String())
		if o.console.dropped > 0 {
			fmt.Fprintf(&b, "\n[console output cut: %d more bytes]", o.console.dropped)
		}
	}
	if b.Len() == 0 {
		b.WriteString("(the program returned nothing and printed nothing)")
	}
	res := &toolloop.ToolResult{Status: toolloop.StatusOK, Content: []toolloop.Content{toolloop.TextContent(b.String())}}
	if o.fail != nil {
		res.Status, res.Error = toolloop.StatusError, o.fail
	}
	res.Meta.Extra = map[string]any{
		"inner_calls":   o.calls,
		"console_bytes": o.console.total,
		"compute_ms":    o.compute.Milliseconds(),
	}
	if o.limit != "" {
		res.Meta.Extra["limit"] = string(o.limit)
	}
	return res
}
