package gemini

import (
	"fmt"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// schemaKeywords are the keywords the API understands in
// parametersJsonSchema: the JSON Schema subset Google documents for
// Gemini, and the fields of its OpenAPI-style Schema. Any other keyword is
// dropped before the schema is sent.
var schemaKeywords = map[string]bool{
	"$id": true, "$defs": true, "$ref": true, "$anchor": true,
	"type": true, "format": true, "title": true, "description": true,
	"enum": true, "default": true, "nullable": true, "example": true,
	"properties": true, "required": true, "additionalProperties": true, "propertyOrdering": true,
	"minProperties": true, "maxProperties": true,
	"items": true, "prefixItems": true, "minItems": true, "maxItems": true,
	"minimum": true, "maximum": true,
	"minLength": true, "maxLength": true, "pattern": true,
	"anyOf": true, "oneOf": true,
}

// subschemaMaps and subschemaLists name the keywords whose values hold
// schemas, by name or in a list.
var (
	subschemaMaps  = []string{"properties", "$defs"}
	subschemaLists = []string{"anyOf", "oneOf", "prefixItems"}
)

// cleanSchema drops, in place, every keyword of schema and its subschemas
// that the API does not understand, and turns a const into a one-value
// enum. It returns what it changed.
func cleanSchema(schema map[string]any) []string {
	var notes []string
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		for _, k := range wire.SortedKeys(s) {
			if schemaKeywords[k] {
				continue
			}
			if k == "const" {
				if _, has := s["enum"]; !has {
					s["enum"] = []any{s[k]}
					delete(s, k)
					notes = append(notes, path+": sent const as a one-value enum")
					continue
				}
			}
			delete(s, k)
			notes = append(notes, fmt.Sprintf("%s: dropped %s, which the API does not take", path, k))
		}
		for _, k := range subschemaMaps {
			if m, ok := s[k].(map[string]any); ok {
				for _, name := range wire.SortedKeys(m) {
					if sub, ok := m[name].(map[string]any); ok {
						walk(sub, path+"/"+k+"/"+name)
					}
				}
			}
		}
		for _, k := range subschemaLists {
			if l, ok := s[k].([]any); ok {
				for i, v := range l {
					if sub, ok := v.(map[string]any); ok {
						walk(sub, fmt.Sprintf("%s/%s/%d", path, k, i))
					}
				}
			}
		}
		for _, k := range []string{"items", "additionalProperties"} {
			if sub, ok := s[k].(map[string]any); ok {
				walk(sub, path+"/"+k)
			}
		}
	}
	walk(schema, "#")
	return notes
}

// convertedTool is a converted tool spec, cached per spec.
type convertedTool struct {
	decl *genai.FunctionDeclaration
	err  error
}

// tool converts a tool spec, once per distinct spec: its input schema goes
// as parametersJsonSchema, which takes JSON Schema as it is, less what the
// API refuses.
func (m *Model) tool(spec toolloop.ToolSpec) convertedTool {
	key := wire.Key(spec.Name, spec.Description, string(spec.InputSchema))
	return m.tools.Get(key, func() convertedTool {
		schema, notes, err := wire.ObjectSchema(spec.InputSchema)
		if err != nil {
			return convertedTool{err: fmt.Errorf("gemini: tool %s: %w", spec.Name, err)}
		}
		notes = append(notes, cleanSchema(schema)...)
		for _, n := range notes {
			m.log.Debug("gemini: tool schema loosened for the API", "tool", spec.Name, "change", n)
		}
		return convertedTool{decl: &genai.FunctionDeclaration{
			Name:                 spec.Name,
			Description:          spec.Description,
			ParametersJsonSchema: schema,
		}}
	})
}
