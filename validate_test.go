package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vtTool is a tool that is only a name and a schema.
type vtTool struct{ name, schema string }

func (t vtTool) Spec() ToolSpec {
	return ToolSpec{Name: t.name, InputSchema: json.RawMessage(t.schema)}
}

func (t vtTool) Run(context.Context, *Call) (*ToolResult, error) { return TextResult("ok"), nil }

// compiledEntry registers schema the way a registry does and returns the
// entry, fast path included when the schema allows it.
func compiledEntry(t testing.TB, schema string) *entry {
	t.Helper()
	es, err := compileTools(SourceBuiltin, "test", []Tool{vtTool{name: "tool", schema: schema}})
	require.NoError(t, err)
	require.Len(t, es, 1)
	return es[0]
}

// fullOnly returns a copy of e without its fast path: the full validator
// alone (json.Unmarshal into any, then the compiled schema).
func fullOnly(e *entry) *entry {
	c := *e
	c.fast = nil
	return &c
}

const validateSchema = `{
	"type": "object",
	"properties": {
		"path":  {"type": "string", "description": "file to read"},
		"count": {"type": "integer", "minimum": 1},
		"mode":  {"type": "string", "enum": ["read", "write"]},
		"items": {"type": "array", "items": {"type": "integer"}},
		"opts":  {"type": "object", "properties": {"depth": {"type": "integer"}}, "additionalProperties": false}
	},
	"required": ["path"],
	"additionalProperties": false
}`

func TestValidateInvalidArgs(t *testing.T) {
	e := compiledEntry(t, validateSchema)
	tests := []struct {
		name string
		args string
		// at lists the JSON pointers the message must name, each followed by
		// some of the schema's words.
		at map[string][]string
	}{
		{"missing property", `{}`, map[string][]string{"/": {"missing", "path"}}},
		{"wrong type", `{"path":1}`, map[string][]string{"/path": {"string", "number"}}},
		{"integer with fraction", `{"path":"a","count":1.5}`, map[string][]string{"/count": {"integer"}}},
		{"minimum", `{"path":"a","count":0}`, map[string][]string{"/count": {">= 1"}}},
		{"enum", `{"path":"a","mode":"delete"}`, map[string][]string{"/mode": {`"read"`, `"write"`}}},
		{"additionalProperties", `{"path":"a","extra":1}`, map[string][]string{"/": {"additionalProperties", "extra"}}},
		{"array element", `{"path":"a","items":[1,2,"x"]}`, map[string][]string{"/items/2": {"integer", "string"}}},
		{"nested property", `{"path":"a","opts":{"depth":"deep"}}`, map[string][]string{"/opts/depth": {"integer"}}},
		{"nested additionalProperties", `{"path":"a","opts":{"x":1}}`, map[string][]string{"/opts": {"additionalProperties", "x"}}},
		{"several at once", `{"count":"x","mode":1}`, map[string][]string{
			"/":      {"missing", "path"},
			"/count": {"integer"},
			"/mode":  {"string"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ent := range []*entry{e, fullOnly(e)} {
				te := ent.validate(json.RawMessage(tt.args))
				require.NotNil(t, te)
				assert.Equal(t, KindInvalidArgs, te.Kind)
				var asTE *ToolError
				require.True(t, errors.As(error(te), &asTE))
				assert.Contains(t, te.Message, "tool", "the message names the tool")
				for ptr, words := range tt.at {
					// The pointer is the contract: "at <pointer>: <schema's words>".
					line := lineAt(te.Message, ptr)
					if assert.NotEmpty(t, line, "no line for %s in:\n%s", ptr, te.Message) {
						for _, w := range words {
							assert.Contains(t, line, w)
						}
					}
				}
			}
		})
	}
}

// lineAt returns the line of msg about the JSON pointer ptr.
func lineAt(msg, ptr string) string {
	for line := range strings.SplitSeq(msg, "\n") {
		if strings.HasPrefix(line, "- at "+ptr+": ") {
			return line
		}
	}
	return ""
}

func TestValidateNotAnObject(t *testing.T) {
	e := compiledEntry(t, validateSchema)
	tests := []struct {
		name, args string
		words      []string
	}{
		{"truncated", `{"path":`, []string{"not valid JSON"}},
		{"garbage", `path=a`, []string{"not valid JSON"}},
		{"trailing comma", `{"path":"a",}`, []string{"not valid JSON"}},
		{"two objects", `{"path":"a"}{}`, []string{"not valid JSON"}},
		{"empty", ``, []string{"not valid JSON"}},
		{"array", `[{"path":"a"}]`, []string{"JSON object", "an array"}},
		{"string", `"{\"path\":\"a\"}"`, []string{"JSON object", "a string"}},
		{"number", `3`, []string{"JSON object", "a number"}},
		{"bool", `true`, []string{"JSON object", "a boolean"}},
		{"null", `null`, []string{"JSON object", "null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := e.validate(json.RawMessage(tt.args))
			require.NotNil(t, te)
			assert.Equal(t, KindInvalidArgs, te.Kind)
			for _, w := range tt.words {
				assert.Contains(t, te.Message, w)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	e := compiledEntry(t, validateSchema)
	for _, args := range []string{
		`{"path":"a"}`,
		` {"path":"a"} `,
		`{"path":"a","count":1,"mode":"write","items":[],"opts":{}}`,
		`{"path":"a","count":2.0}`,
		`{"path":"a","items":[1,2,3],"opts":{"depth":3}}`,
		`{"path":"\u00e9\n"}`,
	} {
		t.Run(args, func(t *testing.T) {
			assert.Nil(t, e.validate(json.RawMessage(args)))
			assert.Nil(t, fullOnly(e).validate(json.RawMessage(args)))
		})
	}
}

// The JSON pointer in an invalid_args message is what tells the model which
// field to fix. It must be the field's name (RFC 6901: only "~" and "/" are
// escaped), not a percent-encoded URI fragment.
func TestInvalidArgsPointerNamesFieldVerbatim(t *testing.T) {
	e := compiledEntry(t, `{"type":"object","properties":{
		"file name":{"type":"string"},"ünï":{"type":"string"},"a/b":{"type":"string"},"a~b":{"type":"string"},"q%":{"type":"string"}}}`)
	tests := []struct{ args, ptr string }{
		{`{"a/b":1}`, "/a~1b"},
		{`{"a~b":1}`, "/a~0b"},
		{`{"file name":1}`, "/file name"},
		{`{"ünï":1}`, "/ünï"},
		{`{"q%":1}`, "/q%"},
	}
	for _, tt := range tests {
		t.Run(tt.ptr, func(t *testing.T) {
			te := e.validate(json.RawMessage(tt.args))
			require.NotNil(t, te)
			assert.NotEmpty(t, lineAt(te.Message, tt.ptr), "want a line for %q in:\n%s", tt.ptr, te.Message)
		})
	}
}

// Schemas for the fast-path tables and fuzz targets.
const (
	// Flat, open, every primitive type, plus untyped, object and array
	// properties whose values are any JSON.
	fastFlatSchema = `{"type":"object","properties":{
		"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},
		"z":{"type":"null"},"a":{},"o":{"type":"object"},"arr":{"type":"array"}}}`
	// Closed, with a required property and an enum.
	fastClosedSchema = `{"type":"object","title":"t","description":"d","properties":{
		"mode":{"type":"string","enum":["read","write"]},
		"path":{"type":"string","description":"the path"}},
		"required":["path"],"additionalProperties":false}`
	// The same, open.
	fastOpenSchema = `{"type":"object","properties":{
		"mode":{"type":"string","enum":["read","write"]},
		"path":{"type":"string"}},
		"required":["path"],"additionalProperties":true}`
	// Arrays of primitives.
	fastArraySchema = `{"type":"object","properties":{
		"tags":{"type":"array","items":{"type":"string"}},
		"ids":{"type":"array","items":{"type":"integer","description":"an id"}},
		"any":{"type":"array"}}}`
	// An enum without a type.
	fastEnumSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{
		"c":{"enum":["red","green"],"default":"red"}},"additionalProperties":false}`
)

// manyPropsSchema has n required integer properties p0..p(n-1).
func manyPropsSchema(n int) string {
	var props, req []string
	for i := range n {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"integer"}`, i))
		req = append(req, fmt.Sprintf(`"p%d"`, i))
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `]}`
}

// manyPropsArgs sets p0..p(n-1), skipping skip.
func manyPropsArgs(n, skip int) string {
	var kv []string
	for i := range n {
		if i != skip {
			kv = append(kv, fmt.Sprintf(`"p%d":%d`, i, i))
		}
	}
	return "{" + strings.Join(kv, ",") + "}"
}

func TestCompileFastEligibility(t *testing.T) {
	prop := func(p string) string { return `{"type":"object","properties":{"a":` + p + `}}` }
	tests := []struct {
		name   string
		schema string
		want   bool
	}{
		{"flat typed", fastFlatSchema, true},
		{"closed required enum", fastClosedSchema, true},
		{"open", fastOpenSchema, true},
		{"arrays of primitives", fastArraySchema, true},
		{"untyped enum", fastEnumSchema, true},
		{"empty object", `{"type":"object","properties":{}}`, true},
		{"no properties", `{"type":"object"}`, true},
		{"64 properties", manyPropsSchema(64), true},

		{"65 properties", manyPropsSchema(65), false},
		{"minLength", prop(`{"type":"string","minLength":1}`), false},
		{"pattern", prop(`{"type":"string","pattern":"^x"}`), false},
		{"format", prop(`{"type":"string","format":"email"}`), false},
		{"const", prop(`{"const":"x"}`), false},
		{"minimum", prop(`{"type":"integer","minimum":0}`), false},
		{"type list", prop(`{"type":["string","null"]}`), false},
		{"enum on integer", prop(`{"type":"integer","enum":["1"]}`), false},
		{"enum of numbers", prop(`{"enum":[1,2]}`), false},
		{"empty enum", prop(`{"type":"string","enum":[]}`), false},
		{"nested properties", prop(`{"type":"object","properties":{"b":{"type":"string"}}}`), false},
		{"array of objects", prop(`{"type":"array","items":{"type":"object"}}`), false},
		{"array of arrays", prop(`{"type":"array","items":{"type":"array"}}`), false},
		{"items with constraint", prop(`{"type":"array","items":{"type":"string","minLength":1}}`), false},
		{"items without array type", prop(`{"items":{"type":"string"}}`), false},
		{"items on string", prop(`{"type":"string","items":{"type":"string"}}`), false},
		{"maxItems", prop(`{"type":"array","maxItems":3}`), false},
		{"unknown type", prop(`{"type":"text"}`), false},
		{"boolean subschema", prop(`true`), false},
		{"ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`, false},
		{"allOf", `{"type":"object","allOf":[{"required":["a"]}]}`, false},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"string"}}`, false},
		{"required undeclared", `{"type":"object","properties":{"a":{}},"required":["b"]}`, false},
		{"minProperties", `{"type":"object","minProperties":1}`, false},
		{"patternProperties", `{"type":"object","patternProperties":{"^x":{}}}`, false},
		{"type list at root", `{"type":["object"]}`, false},
		{"not JSON", `{`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := compileFast(json.RawMessage(tt.schema))
			assert.Equal(t, tt.want, fs != nil)
		})
	}
}

func TestFastPathAccepts(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	type tc struct {
		args string
		want bool
	}
	tests := []struct {
		name   string
		schema string
		cases  []tc
	}{
		{"flat", fastFlatSchema, []tc{
			{`{}`, true},
			{" \t\n{ }\r\n", true},
			{`{"s":"x","i":1,"n":1.5,"b":true,"z":null}`, true},
			{`{"b":false}`, true},
			{`{"unknown":[1,{"x":null}]}`, true},
			// Numbers.
			{`{"i":-0}`, true},
			{`{"i":-12}`, true},
			{`{"i":12345678901234567}`, true},
			{`{"i":1.0}`, false}, // an integer, but the full validator decides
			{`{"i":1e2}`, false},
			{`{"i":1E2}`, false},
			{`{"i":01}`, false},
			{`{"i":-}`, false},
			{`{"i":+1}`, false},
			{`{"i":"1"}`, false},
			{`{"n":1e2}`, true},
			{`{"n":-0.0}`, true},
			{`{"n":1.5E-3}`, true},
			{`{"n":.5}`, false},
			{`{"n":1.}`, false},
			{`{"n":1e}`, false},
			{`{"n":1e+}`, false},
			{`{"n":00}`, false},
			{`{"n":0x1}`, false},
			{`{"n":NaN}`, false},
			{`{"n":Infinity}`, false},
			// Strings.
			{`{"s":"a\"b\\c\/d\b\f\n\r\t"}`, true},
			{`{"s":"\u00e9\uD83D\uDE00"}`, true},
			{`{"s":"\ud800"}`, true}, // a lone surrogate is valid JSON syntax
			{"{\"s\":\"\xff\xfe\"}", true},
			{`{"s":"\x"}`, false},
			{`{"s":"\'"}`, false},
			{`{"s":"\u12"}`, false},
			{`{"s":"\uZZZZ"}`, false},
			{`{"s":"\`, false},
			{"{\"s\":\"a\nb\"}", false},
			{"{\"s\":\"a\tb\"}", false},
			{"{\"s\":\"a\x00b\"}", false},
			{`{"s":"abc`, false},
			{`{"s":"abc}`, false},
			{`{"s":'a'}`, false},
			{`{"s":1}`, false},
			// Keys.
			{`{"\u0073":"x"}`, false}, // escaped keys go to the full validator
			{`{"s":"a","s":"b"}`, false},
			{`{"x":1,"x":2}`, true},
			{`{s:"a"}`, false},
			{`{"s" "a"}`, false},
			{`{"s":}`, false},
			{`{"s"}`, false},
			{`{"s":"a" "i":1}`, false},
			{`{"s":"a",}`, false},
			{`{,}`, false},
			{"{\"s\"\n:\n\"a\"\n,\n\"i\"\t:\t1\n}", true},
			// Other types.
			{`{"b":tru}`, false},
			{`{"b":truex}`, false},
			{`{"b":"true"}`, false},
			{`{"z":nul}`, false},
			{`{"z":0}`, false},
			{`{"o":{"k":[true,false,null]}}`, true},
			{`{"o":[]}`, false},
			{`{"arr":[1,"two",{"3":[]}]}`, true},
			{`{"arr":{}}`, false},
			// Nested any-typed values must still be valid JSON.
			{`{"a":{"x":[1,{"y":null}],"z":"w"}}`, true},
			{`{"a":{"x":tru}}`, false},
			{`{"a":[1,]}`, false},
			{`{"a":[,1]}`, false},
			{`{"a":{"x" 1}}`, false},
			{`{"a":{1:2}}`, false},
			{`{"a":{"x":1,}}`, false},
			{`{"a":[1 2]}`, false},
			{`{"a":{"k":"\q"}}`, false},
			{`{"a":` + deep(10) + `}`, true},
			{`{"a":` + deep(32) + `}`, true},
			{`{"a":` + deep(33) + `}`, false}, // too deep for the fast path
			{`{"a":` + deep(1000) + `}`, false},
			{`{"a":` + strings.Repeat("[", 40) + `}`, false},
			// Not one object.
			{``, false},
			{`   `, false},
			{`[]`, false},
			{`"x"`, false},
			{`null`, false},
			{`{`, false},
			{`{"s":"a"`, false},
			{`{"s":"a"}x`, false},
			{`{"s":"a"}{}`, false},
			{`{"s":"a"},`, false},
			{`{}}`, false},
			{"{}\x00", false},
			{"\v{}", false},
			{"\u00a0{}", false},
		}},
		{"closed", fastClosedSchema, []tc{
			{`{"path":"a"}`, true},
			{`{"path":"a","mode":"read"}`, true},
			{`{"mode":"write","path":""}`, true},
			{`{}`, false},
			{`{"mode":"read"}`, false},
			{`{"path":"a","mode":"delete"}`, false},
			{`{"path":"a","mode":"READ"}`, false},
			{`{"path":"a","mode":"re\u0061d"}`, false}, // an escaped enum value goes to the full validator
			{`{"path":"a","mode":null}`, false},
			{`{"path":"a","extra":1}`, false},
			{`{"path":1}`, false},
		}},
		{"open", fastOpenSchema, []tc{
			{`{"path":"a","extra":1}`, true},
			{`{"path":"a","extra":{"deep":[1,2]}}`, true},
			{`{"extra":1}`, false},
		}},
		{"arrays", fastArraySchema, []tc{
			{`{"tags":["a","b"]}`, true},
			{`{"tags":[]}`, true},
			{`{"tags":[ ]}`, true},
			{`{"tags":[ "a" , "b" ]}`, true},
			{`{"tags":["a",1]}`, false},
			{`{"tags":[null]}`, false},
			{`{"tags":"a"}`, false},
			{`{"tags":["a",]}`, false},
			{`{"tags":["a"`, false},
			{`{"ids":[1,2,3]}`, true},
			{`{"ids":[-0]}`, true},
			{`{"ids":[1.5]}`, false},
			{`{"ids":[1e3]}`, false},
			{`{"ids":[1,[2]]}`, false},
			{`{"any":[1,"x",null,{},[]]}`, true},
		}},
		{"untyped enum", fastEnumSchema, []tc{
			{`{"c":"red"}`, true},
			{`{"c":"blue"}`, false},
			{`{"c":1}`, false},
			{`{"c":["red"]}`, false},
			{`{"d":"red"}`, false},
		}},
		{"64 required", manyPropsSchema(64), []tc{
			{manyPropsArgs(64, -1), true},
			{manyPropsArgs(64, 0), false},
			{manyPropsArgs(64, 63), false},
			{manyPropsArgs(64, 31), false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := compiledEntry(t, tt.schema)
			require.NotNil(t, e.fast, "schema should be in the fast path's subset")
			full := fullOnly(e)
			for _, c := range tt.cases {
				got := e.fast.accepts([]byte(c.args))
				assert.Equal(t, c.want, got, "accepts(%q)", c.args)
				if got {
					// Whatever the fast path accepts, the full validator accepts.
					assert.True(t, json.Valid([]byte(c.args)), "accepted invalid JSON %q", c.args)
					assert.Nil(t, full.validate(json.RawMessage(c.args)), "accepted %q, which the full validator rejects", c.args)
				}
				// And entry.validate agrees with the full validator either way.
				assert.Equal(t, full.validate(json.RawMessage(c.args)) == nil, e.validate(json.RawMessage(c.args)) == nil, "validate(%q)", c.args)
			}
		})
	}
}

// TestFastPathCoreBugs lists inputs where the fast path says "certainly
// valid" but the full validator rejects the arguments. Each is a core bug
// (see the report on issue 2); keep them failing until fixed.
func TestFastPathCoreBugs(t *testing.T) {
	tests := []struct {
		name, schema, args string
	}{
		// compileFastProp decodes the enum into []string, and
		// json.Unmarshal turns null into "", so "" is accepted.
		{"enum containing null", `{"type":"object","properties":{"a":{"type":"string","enum":["x",null]}}}`, `{"a":""}`},
		{"enum of null only", `{"type":"object","properties":{"a":{"enum":[null]}}}`, `{"a":""}`},
		// json.Unmarshal into any cannot hold numbers beyond float64, so the
		// full validator calls them "not valid JSON"; the fast path accepts.
		{"number overflows float64", `{"type":"object","properties":{"a":{"type":"number"}}}`, `{"a":1e400}`},
		{"integer overflows float64", `{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"a":1` + strings.Repeat("0", 400) + `}`},
		{"huge number in an unknown property", `{"type":"object","properties":{}}`, `{"x":-1e309}`},
		// Keys are compared undecoded: invalid UTF-8 decodes to U+FFFD.
		{"invalid UTF-8 key", `{"type":"object","properties":{"\ufffd":{"type":"integer"}}}`, "{\"\xff\":\"x\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := compiledEntry(t, tt.schema)
			fast := e.fast != nil && e.fast.accepts([]byte(tt.args))
			full := fullOnly(e).validate(json.RawMessage(tt.args)) == nil
			assert.False(t, fast && !full, "fast path accepts %q, full validator rejects it", tt.args)
		})
	}
}

// fuzzSchemas are the schemas the fast-path fuzz targets check.
var fuzzSchemas = []string{fastFlatSchema, fastClosedSchema, fastOpenSchema, fastArraySchema, fastEnumSchema, manyPropsSchema(64)}

// FuzzFastPath checks the fast path against the full validator: whatever
// it accepts must be valid JSON that the full validator accepts too.
func FuzzFastPath(f *testing.F) {
	type pair struct{ fast, full *entry }
	var entries []pair
	for _, s := range fuzzSchemas {
		e := compiledEntry(f, s)
		require.NotNil(f, e.fast)
		entries = append(entries, pair{e, fullOnly(e)})
	}
	for _, s := range []string{
		`{"s":"x","i":1,"n":1.5,"b":true,"z":null,"a":{"k":[1,"2",null]},"o":{},"arr":[]}`,
		`{"path":"a","mode":"read"}`,
		`{"tags":["a","b"],"ids":[1,2],"any":[{}]}`,
		`{"c":"green"}`,
		manyPropsArgs(64, -1),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i, p := range entries {
			if !p.fast.fast.accepts(b) {
				continue
			}
			if !json.Valid(b) {
				t.Fatalf("schema %d: fast path accepted invalid JSON %q", i, b)
			}
			if te := p.full.validate(b); te != nil {
				t.Fatalf("schema %d: fast path accepted %q, full validator rejects it: %v", i, b, te)
			}
		}
	})
}

// FuzzValidate checks that validation never panics and fails only with
// invalid_args.
func FuzzValidate(f *testing.F) {
	schemas := append(slices.Clone(fuzzSchemas), validateSchema,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"string","pattern":"^x"}}}}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer","minimum":3}]}}}`)
	var entries []*entry
	for _, s := range schemas {
		entries = append(entries, compiledEntry(f, s))
	}
	for _, s := range []string{`{}`, `{"path":"a","count":2}`, `{"a":[{"b":"xy"}]}`, `{"a":2}`, `[`, `null`, `"s"`, `{"a":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, e := range entries {
			te := e.validate(b)
			if te == nil {
				if !json.Valid(b) {
					t.Fatalf("validate accepted invalid JSON %q", b)
				}
				continue
			}
			if te.Kind != KindInvalidArgs || te.Message == "" {
				t.Fatalf("validate(%q) = %#v, want an invalid_args error with a message", b, te)
			}
		}
	})
}
