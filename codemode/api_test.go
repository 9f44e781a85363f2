package codemode

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop"
)

func TestDeclarations(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec toolloop.ToolSpec
		want string
	}{
		{
			name: "properties in schema order, optional marked, comments",
			spec: toolloop.ToolSpec{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object",
				"properties":{"path":{"type":"string","description":"Path relative to the workspace."},"offset":{"type":"integer"},"all":{"type":"boolean"}},
				"required":["path"]}`)},
			want: `  /** Read a file. */
  read_file(args: {
    /** Path relative to the workspace. */
    path: string;
    offset?: number;
    all?: boolean;
  }): Promise<unknown>;
`,
		},
		{
			name: "no arguments",
			spec: toolloop.ToolSpec{Name: "now", Description: "The time."},
			want: "  /** The time. */\n  now(args?: Record<string, unknown>): Promise<unknown>;\n",
		},
		{
			name: "name that is not an identifier",
			spec: toolloop.ToolSpec{Name: "my-tool", InputSchema: json.RawMessage(`{"type":"object","properties":{"a-b":{"type":"number"}}}`)},
			want: "  \"my-tool\"(args?: {\n    \"a-b\"?: number;\n  }): Promise<unknown>;\n",
		},
		{
			name: "enums, unions, arrays, nested objects, maps, refs",
			spec: toolloop.ToolSpec{Name: "q", InputSchema: json.RawMessage(`{"type":"object","properties":{
				"mode":{"enum":["fast","slow",3,null]},
				"id":{"anyOf":[{"type":"string"},{"type":"integer"}]},
				"tags":{"type":"array","items":{"type":"string"}},
				"pairs":{"type":"array","items":{"oneOf":[{"type":"string"},{"type":"null"}]}},
				"where":{"type":"object","properties":{"col":{"type":"string"}},"required":["col"]},
				"meta":{"type":"object","additionalProperties":{"type":"number"}},
				"maybe":{"type":["string","null"]},
				"node":{"$ref":"#/$defs/node"},
				"k":{"const":"x"},
				"anything":{}
			},"required":["mode"],"$defs":{"node":{"type":"object","properties":{"v":{"type":"number"}}}}}`)},
			want: `  q(args: {
    mode: "fast" | "slow" | 3 | null;
    id?: string | number;
    tags?: string[];
    pairs?: (string | null)[];
    where?: {
      col: string;
    };
    meta?: Record<string, number>;
    maybe?: string | null;
    node?: {
      v?: number;
    };
    k?: "x";
    anything?: unknown;
  }): Promise<unknown>;
`,
		},
		{
			name: "output schema types the promise",
			spec: toolloop.ToolSpec{Name: "count", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
			want: "  count(args?: Record<string, unknown>): Promise<{\n  n: number;\n}>;\n",
		},
		{
			name: "comment markers in descriptions are defused",
			spec: toolloop.ToolSpec{Name: "x", Description: "Ends */ here.\nSecond line."},
			want: "  /**\n   * Ends *\\/ here.\n   * Second line.\n   */\n  x(args?: Record<string, unknown>): Promise<unknown>;\n",
		},
		{
			name: "recursive refs end",
			spec: toolloop.ToolSpec{Name: "tree", InputSchema: json.RawMessage(`{"type":"object","properties":{"t":{"$ref":"#"}}}`)},
			want: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := declare(tc.spec, false)
			if tc.want == "" {
				assert.LessOrEqual(t, len(got), maxDeclBytes)
				assert.Contains(t, got, "unknown")
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// A gigantic schema gets a shorter declaration that still names its
// arguments.
func TestDeclarationIsBounded(t *testing.T) {
	var props []string
	for i := range 500 {
		props = append(props, fmt.Sprintf(`"field_%d":{"type":"object","description":%q,"properties":{"a":{"type":"string"},"b":{"type":"number"}}}`, i, strings.Repeat("words ", 20)))
	}
	spec := toolloop.ToolSpec{Name: "big", Description: "Big.", InputSchema: json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)}
	got := declare(spec, false)
	assert.LessOrEqual(t, len(got), maxDeclBytes+maxCommentBytes+200)
	assert.Contains(t, got, "big(args?: Record<string, unknown>)")
	assert.Contains(t, got, "field_0, field_1")

	// Mid-sized: loses its comments first, keeping its types.
	props = props[:40]
	spec.InputSchema = json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)
	got = declare(spec, false)
	assert.NotContains(t, got, "words")
	assert.Contains(t, got, "field_39?: {")
}

func TestDeclarationsAreSortedAndDeterministic(t *testing.T) {
	specs := []toolloop.ToolSpec{{Name: "a"}, {Name: "b"}}
	d := declarations(specs, nil)
	assert.Equal(t, d, declarations(specs, nil))
	assert.True(t, strings.HasPrefix(d, "declare const tools: {\n"))
	assert.True(t, strings.HasSuffix(d, "};\n"))
	assert.Less(t, strings.Index(d, "  a("), strings.Index(d, "  b("))
}

// TestNamespaces: an MCP server's tools are declared, and called, as a
// namespace named after the server; a server whose name another tool
// has keeps the registry's names.
func TestNamespaces(t *testing.T) {
	infos := []*toolloop.ToolInfo{
		{ToolSpec: toolloop.ToolSpec{Name: "read_file", Description: "Read.", InputSchema: json.RawMessage(`{"type":"object"}`)}, Source: toolloop.SourceBuiltin},
		{ToolSpec: toolloop.ToolSpec{Name: "tracker__get-issue", Description: "Get one issue.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)}, Source: toolloop.SourceMCP, SourceName: "tracker"},
		{ToolSpec: toolloop.ToolSpec{Name: "tracker__list", Description: "List.", InputSchema: json.RawMessage(`{"type":"object"}`)}, Source: toolloop.SourceMCP, SourceName: "tracker"},
		{ToolSpec: toolloop.ToolSpec{Name: "wiki__page", Description: "A page.", InputSchema: json.RawMessage(`{"type":"object"}`)}, Source: toolloop.SourceMCP, SourceName: "wiki"},
		{ToolSpec: toolloop.ToolSpec{Name: "wiki", Description: "A local tool named as a server.", InputSchema: json.RawMessage(`{"type":"object"}`)}, Source: toolloop.SourceLocal},
	}
	spaces := namespaces(infos)
	assert.Equal(t, map[string][2]string{"tracker__get-issue": {"tracker", "get-issue"}, "tracker__list": {"tracker", "list"}}, spaces)
	var specs []toolloop.ToolSpec
	for _, ti := range infos {
		specs = append(specs, ti.ToolSpec)
	}
	d := declarations(specs, spaces)
	assert.Equal(t, `declare const tools: {
  /** Read. */
  read_file(args?: Record<string, unknown>): Promise<unknown>;
  /** A page. */
  wiki__page(args?: Record<string, unknown>): Promise<unknown>;
  /** A local tool named as a server. */
  wiki(args?: Record<string, unknown>): Promise<unknown>;
  /** The tools of the MCP server tracker. */
  tracker: {
    /** Get one issue. */
    "get-issue"(args: {
      id: number;
    }): Promise<unknown>;
    /** List. */
    list(args?: Record<string, unknown>): Promise<unknown>;
  };
};
`, d)
}
