package codemode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/toolloop/toolloop"
)

// The bounds of the declarations: a tool whose declaration is longer than
// maxDeclBytes is declared more briefly (see declare), and once the
// declarations pass maxAPIBytes, the remaining tools are declared with
// their names alone.
const (
	maxDeclBytes = 4 << 10
	maxAPIBytes  = 96 << 10
	// maxSchemaDepth is how deep nested schemas are rendered; deeper ones,
	// and $ref cycles, are unknown.
	maxSchemaDepth = 8
	// maxCommentBytes bounds one property's description.
	maxCommentBytes = 300
)

// declarations renders the TypeScript-style declaration of tools, in the
// order given (the registry's: by name). A tool that spaces names
// (registry name to namespace and member, see namespaceOf) is declared
// as a member of its namespace, after the tools of tools itself; the
// namespaces come in name order.
func declarations(tools []toolloop.ToolSpec, spaces map[string][2]string) string {
	var b strings.Builder
	b.WriteString("declare const tools: {\n")
	var nested []toolloop.ToolSpec
	for _, t := range tools {
		if _, ok := spaces[t.Name]; ok {
			nested = append(nested, t)
			continue
		}
		b.WriteString(declare(t, b.Len() > maxAPIBytes))
	}
	slices.SortStableFunc(nested, func(a, b toolloop.ToolSpec) int { return cmp.Compare(spaces[a.Name][0], spaces[b.Name][0]) })
	for i, t := range nested {
		ns, member := spaces[t.Name][0], spaces[t.Name][1]
		if i == 0 || spaces[nested[i-1].Name][0] != ns {
			fmt.Fprintf(&b, "  /** The tools of the MCP server %s. */\n  %s: {\n", ns, propName(ns))
		}
		t.Name = member
		for line := range strings.Lines(declare(t, b.Len() > maxAPIBytes)) {
			b.WriteString("  " + line)
		}
		if i == len(nested)-1 || spaces[nested[i+1].Name][0] != ns {
			b.WriteString("  };\n")
		}
	}
	b.WriteString("};\n")
	return b.String()
}

// mcpSeparator joins an MCP server's name and its tool's name in the
// registry (mcp.Separator, which this module does not import).
const mcpSeparator = "__"

// namespaces returns, for the tools of MCP servers among infos, the
// namespace and member each is declared and called as: tool
// "tracker__get_issue" of server tracker is tools.tracker.get_issue. A
// server whose namespace would take the name of another tool keeps its
// tools' registry names.
func namespaces(infos []*toolloop.ToolInfo) map[string][2]string {
	var spaces map[string][2]string
	flat := make(map[string]bool, len(infos))
	for _, ti := range infos {
		flat[ti.Name] = true
	}
	for _, ti := range infos {
		if ti.Source != toolloop.SourceMCP {
			continue
		}
		ns, member, ok := strings.Cut(ti.Name, mcpSeparator)
		if !ok || ns == "" || member == "" || flat[ns] {
			continue
		}
		if spaces == nil {
			spaces = make(map[string][2]string)
		}
		spaces[ti.Name] = [2]string{ns, member}
	}
	return spaces
}

// declare renders one tool's member of the tools object: its description
// as a comment, and its signature. A declaration over maxDeclBytes loses
// its property comments, then its nested types, and at last its
// argument types, which are then named in the comment; brief gives the
// last form at once.
func declare(t toolloop.ToolSpec, brief bool) string {
	ret := "unknown"
	if len(t.OutputSchema) > 0 {
		if s := (&render{root: parseSchema(t.OutputSchema), depthCap: 3}).typ(parseSchema(t.OutputSchema), 0, 1); len(s) <= maxDeclBytes/4 {
			ret = s
		}
	}
	root := parseSchema(t.InputSchema)
	if !brief {
		for _, r := range []*render{
			{root: root, comments: true, depthCap: maxSchemaDepth},
			{root: root, depthCap: maxSchemaDepth},
			{root: root, depthCap: 1},
		} {
			d := member(t, r.args(root), ret)
			if len(d) <= maxDeclBytes {
				return d
			}
		}
	}
	var props []string
	for _, p := range root.Properties {
		props = append(props, p.name)
	}
	desc := t.Description
	if len(props) > 0 {
		list := strings.Join(props, ", ")
		if len(list) > maxCommentBytes {
			list = list[:maxCommentBytes] + "…"
		}
		desc += "\nArguments (the schema is too large to show): " + list + "."
	}
	t.Description = desc
	return member(t, "args?: Record<string, unknown>", ret)
}

// member is one member of the tools object.
func member(t toolloop.ToolSpec, args, ret string) string {
	var b strings.Builder
	writeComment(&b, "  ", t.Description)
	fmt.Fprintf(&b, "  %s(%s): Promise<%s>;\n", propName(t.Name), args, ret)
	return b.String()
}

// writeComment writes text as a JSDoc comment, each line indented.
func writeComment(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\\/"))
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, text)
		return
	}
	fmt.Fprintf(b, "%s/**\n", indent)
	for _, l := range lines {
		fmt.Fprintf(b, "%s * %s\n", indent, strings.TrimRight(l, " \t\r"))
	}
	fmt.Fprintf(b, "%s */\n", indent)
}

// identifier matches the names usable as they are after "tools.".
var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// propName is a member name: as it is if it is an identifier, quoted
// otherwise.
func propName(name string) string {
	if identifier.MatchString(name) && !reserved[name] {
		return name
	}
	q, _ := json.Marshal(name)
	return string(q)
}

// reserved are words a model would rather see quoted.
var reserved = map[string]bool{"constructor": true, "__proto__": true, "prototype": true}

// schema is the part of a JSON Schema the declarations use. Properties
// keep their order.
type schema struct {
	Type                 typeList                   `json:"type"`
	Description          string                     `json:"description"`
	Properties           props                      `json:"properties"`
	Required             []string                   `json:"required"`
	Items                json.RawMessage            `json:"items"`
	PrefixItems          []json.RawMessage          `json:"prefixItems"`
	Enum                 []json.RawMessage          `json:"enum"`
	Const                json.RawMessage            `json:"const"`
	AnyOf                []json.RawMessage          `json:"anyOf"`
	OneOf                []json.RawMessage          `json:"oneOf"`
	AllOf                []json.RawMessage          `json:"allOf"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	Ref                  string                     `json:"$ref"`
	Defs                 map[string]json.RawMessage `json:"$defs"`
	Definitions          map[string]json.RawMessage `json:"definitions"`
	Nullable             bool                       `json:"nullable"`
}

// typeList is a schema's type: one name or several.
type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = typeList{one}
		return nil
	}
	var many []string
	if json.Unmarshal(b, &many) == nil {
		*t = many
	}
	return nil
}

// prop is one property, in schema order.
type prop struct {
	name string
	raw  json.RawMessage
}

// props are an object's properties in the order the schema lists them.
type props []prop

func (p *props) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil // not an object: no properties
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		*p = append(*p, prop{name: name, raw: raw})
	}
	return nil
}

// parseSchema decodes a schema; anything that is not one is the empty
// schema (unknown).
func parseSchema(raw json.RawMessage) *schema {
	s := &schema{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, s)
	}
	return s
}

// render turns schemas into TypeScript types.
type render struct {
	root     *schema // for $ref
	comments bool    // property descriptions as comments
	depthCap int
}

// args is the parameter list of a tool whose input schema is s.
func (r *render) args(s *schema) string {
	optional := len(s.Required) == 0
	t := r.typ(s, 1, 0)
	if t == "unknown" || t == "Record<string, unknown>" {
		t = "Record<string, unknown>"
		optional = true
	}
	if optional {
		return "args?: " + t
	}
	return "args: " + t
}

// typ renders s at nesting depth (for indentation) and ref depth.
func (r *render) typ(s *schema, indent, depth int) string {
	if depth > r.depthCap {
		return "unknown"
	}
	if s.Ref != "" {
		t := r.resolve(s.Ref)
		if t == nil {
			return "unknown"
		}
		return r.typ(t, indent, depth+1)
	}
	var t string
	switch {
	case len(s.Const) > 0:
		t = literal(s.Const)
	case len(s.Enum) > 0:
		var parts []string
		for _, e := range s.Enum {
			parts = append(parts, literal(e))
		}
		t = strings.Join(parts, " | ")
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		t = r.union(append(append([]json.RawMessage{}, s.AnyOf...), s.OneOf...), " | ", indent, depth)
	case len(s.AllOf) > 0:
		t = r.union(s.AllOf, " & ", indent, depth)
	case len(s.Type) > 0:
		var parts []string
		for _, name := range s.Type {
			parts = append(parts, r.named(name, s, indent, depth))
		}
		t = strings.Join(dedupe(parts), " | ")
	case len(s.Properties) > 0:
		t = r.object(s, indent, depth)
	case len(s.Items) > 0 || len(s.PrefixItems) > 0:
		t = r.array(s, indent, depth)
	default:
		return "unknown"
	}
	if s.Nullable && !strings.Contains(t, "null") {
		t += " | null"
	}
	return t
}

// named renders the type name of s's type list.
func (r *render) named(name string, s *schema, indent, depth int) string {
	switch name {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		return r.array(s, indent, depth)
	case "object":
		return r.object(s, indent, depth)
	}
	return "unknown"
}

func (r *render) union(raws []json.RawMessage, sep string, indent, depth int) string {
	var parts []string
	for _, raw := range raws {
		p := r.typ(parseSchema(raw), indent, depth+1)
		if strings.Contains(p, " | ") || strings.Contains(p, " & ") {
			p = "(" + p + ")"
		}
		parts = append(parts, p)
	}
	parts = dedupe(parts)
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, sep)
}

func (r *render) array(s *schema, indent, depth int) string {
	if len(s.PrefixItems) > 0 {
		var parts []string
		for _, raw := range s.PrefixItems {
			parts = append(parts, r.typ(parseSchema(raw), indent, depth+1))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if len(s.Items) == 0 {
		return "unknown[]"
	}
	if s.Items[0] == '[' { // the tuple form of older drafts
		var raws []json.RawMessage
		_ = json.Unmarshal(s.Items, &raws)
		var parts []string
		for _, raw := range raws {
			parts = append(parts, r.typ(parseSchema(raw), indent, depth+1))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	e := r.typ(parseSchema(s.Items), indent, depth+1)
	if strings.ContainsAny(e, "|&") && !strings.HasPrefix(e, "{") {
		e = "(" + e + ")"
	}
	return e + "[]"
}

func (r *render) object(s *schema, indent, depth int) string {
	if len(s.Properties) == 0 {
		if ap := s.AdditionalProperties; len(ap) > 0 && ap[0] == '{' {
			return "Record<string, " + r.typ(parseSchema(ap), indent, depth+1) + ">"
		}
		return "Record<string, unknown>"
	}
	if depth >= r.depthCap {
		return "Record<string, unknown>"
	}
	required := map[string]bool{}
	for _, n := range s.Required {
		required[n] = true
	}
	pad := strings.Repeat("  ", indent+1)
	var b strings.Builder
	b.WriteString("{\n")
	for _, p := range s.Properties {
		ps := parseSchema(p.raw)
		if r.comments && ps.Description != "" {
			d := ps.Description
			if len(d) > maxCommentBytes {
				d, _ = cut(d, maxCommentBytes)
				d += "…"
			}
			writeComment(&b, pad, d)
		}
		opt := "?"
		if required[p.name] {
			opt = ""
		}
		fmt.Fprintf(&b, "%s%s%s: %s;\n", pad, propName(p.name), opt, r.typ(ps, indent+1, depth+1))
	}
	b.WriteString(strings.Repeat("  ", indent) + "}")
	return b.String()
}

// resolve finds a local $ref ("#/$defs/x", "#/definitions/x") in the
// root schema.
func (r *render) resolve(ref string) *schema {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		name, ok := strings.CutPrefix(ref, prefix)
		if !ok {
			continue
		}
		m := r.root.Defs
		if prefix == "#/definitions/" {
			m = r.root.Definitions
		}
		if raw, ok := m[name]; ok {
			return parseSchema(raw)
		}
	}
	if ref == "#" {
		return r.root
	}
	return nil
}

// literal renders a JSON value as a TypeScript literal type.
func literal(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "unknown"
	}
	switch v.(type) {
	case string, float64, bool, nil:
		var b bytes.Buffer
		_ = json.Compact(&b, raw)
		return b.String()
	}
	return "unknown"
}

func dedupe(parts []string) []string {
	seen := map[string]bool{}
	out := parts[:0]
	for _, p := range parts {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
