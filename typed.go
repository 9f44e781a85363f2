package toolloop

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/invopop/jsonschema"
)

// FuncTool is a [Tool] built from a Go function by [NewTool]. Set its
// exported fields before registering it; the registry reads the spec once.
type FuncTool[In any] struct {
	// Annotations, Timeout, Exclusive and Background go into the tool's
	// [ToolSpec].
	Annotations Annotations
	Timeout     time.Duration
	Exclusive   bool
	Background  bool

	name, description string
	schema            json.RawMessage
	fn                func(context.Context, In) (any, error)
	dec               *structDecoder // nil: decode with encoding/json
}

// NewTool builds a tool from fn, inferring the input schema from In, which
// must be a struct (or a pointer to one).
//
// The schema comes from the struct's json tags and its jsonschema tags, as
// read by github.com/invopop/jsonschema: a field is required unless its
// json tag says omitempty or omitzero, unknown properties are refused, and
// `jsonschema:"description=...,enum=a,enum=b,minimum=1"` and the like add
// descriptions, enums and bounds. A `jsonschema_description` tag may hold a
// description with commas in it.
//
// fn's result becomes the tool's output: a string is text, a *ToolResult,
// Content or []Content is used as is, nil (or a nil *ToolResult) is an
// empty success, and any other value is marshalled to a JSON block. An
// error fails the call (see [Tool]). A string longer than the call's
// [Call.MaxOutputBytes] is cut as soon as fn returns.
//
// NewTool panics if In has no valid schema: that is a mistake in the
// program, like registering a nil handler. The panic names the tool, the
// type and the path of a field JSON cannot carry (a channel, a function,
// a complex number), such as "Items[].Done"; [SchemaFor] returns the same
// as an error.
func NewTool[In any](name, description string, fn func(context.Context, In) (any, error)) *FuncTool[In] {
	if fn == nil {
		panic("toolloop: NewTool " + name + ": nil function")
	}
	schema, err := SchemaFor[In]()
	if err != nil {
		panic(fmt.Sprintf("toolloop: NewTool %q: %v", name, err))
	}
	return &FuncTool[In]{name: name, description: description, schema: schema, fn: fn,
		dec: newStructDecoder(reflect.TypeFor[In]())}
}

// Spec implements [Tool].
func (t *FuncTool[In]) Spec() ToolSpec {
	return ToolSpec{
		Name:        t.name,
		Description: t.description,
		InputSchema: t.schema,
		Annotations: t.Annotations,
		Timeout:     t.Timeout,
		Exclusive:   t.Exclusive,
		Background:  t.Background,
	}
}

// Run implements [Tool]: it decodes the arguments into In and calls the
// function.
func (t *FuncTool[In]) Run(ctx context.Context, call *Call) (*ToolResult, error) {
	res := new(ToolResult)
	if err := t.runInto(ctx, call, res); err != nil {
		return nil, err
	}
	return res, nil
}

// resultWriter is what the loop looks for to let a tool write its result
// in place.
type resultWriter interface {
	runInto(ctx context.Context, call *Call, res *ToolResult) error
}

func (t *FuncTool[In]) runInto(ctx context.Context, call *Call, res *ToolResult) error {
	var in In
	if t.dec == nil || !t.dec.decode(call.Arguments, reflect.ValueOf(&in).Elem()) {
		in = *new(In) // the fast decoder may have filled part of it
		if err := call.Bind(&in); err != nil {
			return err
		}
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return err
	}
	return setResult(res, out, call.MaxOutputBytes)
}

// resultBlock is a typed tool's result with room for the one content
// block most results have, so that the loop allocates both at once (see
// callRun.execute).
type resultBlock struct {
	r ToolResult
	c [1]Content
}

// newResultBlock returns a result whose Content is empty with room for
// one block, for setResult.
func newResultBlock() *ToolResult {
	b := new(resultBlock)
	b.r.Content = b.c[:0]
	return &b.r
}

// oneContent is a content list of c alone: in spare's room, if it has
// some (see newResultBlock).
func oneContent(spare []Content, c Content) []Content {
	if cap(spare) > 0 {
		return append(spare[:0], c)
	}
	return []Content{c}
}

// setResult turns a typed tool's output into res. Text longer than limit
// (if positive) is cut at once, so the loop holds no more of it. A
// single content block goes in the room res.Content has (see
// newResultBlock).
//
// It fills res in place rather than assigning a ToolResult literal per
// case: each literal took its 264 bytes of the stack frame, which made
// every call's worker grow its stack after the garbage collector had
// shrunk it.
func setResult(res *ToolResult, out any, limit int) error {
	spare := res.Content
	var (
		content []Content
		mime    string
		bytes   int
		cut     bool
	)
	switch v := out.(type) {
	case nil:
	case string:
		content = oneContent(spare, TextContent(v))
		if limit > 0 && len(v) > limit {
			content[0].Text = TruncateText(v, limit)
			bytes, cut = len(v), true
		}
	case *ToolResult:
		if v != nil {
			*res = *v
			return nil
		}
		// A nil result and no error: an empty success.
	case Content:
		content = oneContent(spare, v)
	case []Content:
		content = v
	case json.RawMessage:
		if !json.Valid(v) {
			return fmt.Errorf("tool returned invalid JSON")
		}
		content = oneContent(spare, JSONContent(v))
	default:
		b, err := json.Marshal(out)
		if err != nil {
			return fmt.Errorf("encoding tool output: %w", err)
		}
		content, mime = oneContent(spare, JSONContent(b)), "application/json"
	}
	*res = ToolResult{}
	res.Status, res.Content = StatusOK, content
	res.Meta.MIMEType, res.Meta.Bytes, res.Meta.Truncated = mime, bytes, cut
	return nil
}

// SchemaFor returns the JSON Schema that [NewTool] infers for In. Plugin and
// MCP adapters use it to describe typed tools the same way. It fails when
// In is not a struct (or a pointer to one), or when a field that JSON
// would read has a type JSON cannot carry; the error names the field's
// path.
func SchemaFor[In any]() (json.RawMessage, error) {
	t := reflect.TypeFor[In]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("input type %s is not a struct", t)
	}
	if err := describable(t); err != nil {
		return nil, err
	}
	s, err := reflectSchema(t)
	if err != nil {
		return nil, err
	}
	s.Version = "" // providers do not want $schema in tool parameters
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding schema for %s: %w", t, err)
	}
	return b, nil
}

// reflectSchema infers t's schema, turning a panic of the reflector (on
// a type it cannot describe) into an error that names t.
func reflectSchema(t reflect.Type) (s *jsonschema.Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("input type %s: the schema cannot be inferred: %v", t, p)
		}
	}()
	r := jsonschema.Reflector{
		Anonymous:      true,
		DoNotReference: true,
		ExpandedStruct: true,
	}
	return r.ReflectFromType(t), nil
}
