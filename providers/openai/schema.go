package openai

import (
	"fmt"
	"slices"

	"github.com/toolloop/toolloop/providers/internal/wire"
)

// strictKeywords are the schema keywords strict mode supports. A schema
// with any other keyword is sent non-strict.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "anyOf": true,
	"description": true, "title": true,
	"$ref": true, "$defs": true, "definitions": true,
	"pattern": true, "format": true,
	"multipleOf": true, "maximum": true, "exclusiveMaximum": true, "minimum": true, "exclusiveMinimum": true,
	"minItems": true, "maxItems": true,
}

// strictFormats are the string formats strict mode supports.
var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true,
}

// Strict mode's size limits.
const (
	strictMaxDepth      = 10
	strictMaxProperties = 5000
	strictMaxEnum       = 1000
)

// strictProblem returns why strict mode cannot take schema as it is, or ""
// if it can. The schema is never rewritten to fit: making an optional
// property required (even as nullable) would change what the model may
// send, and the loop validates against the schema as written.
func strictProblem(schema map[string]any) string {
	c := strictChecker{}
	return c.check(schema, "#", 1)
}

type strictChecker struct {
	properties int
}

func (c *strictChecker) check(node any, path string, depth int) string {
	s, ok := node.(map[string]any)
	if !ok {
		return fmt.Sprintf("%s: schema is not an object", path)
	}
	if depth > strictMaxDepth {
		return fmt.Sprintf("%s: nested deeper than %d levels", path, strictMaxDepth)
	}
	for _, k := range wire.SortedKeys(s) {
		if !strictKeywords[k] {
			return fmt.Sprintf("%s: keyword %q is not supported", path, k)
		}
	}
	if f, ok := s["format"].(string); ok && !strictFormats[f] {
		return fmt.Sprintf("%s: format %q is not supported", path, f)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > strictMaxEnum {
		return fmt.Sprintf("%s: more than %d enum values", path, strictMaxEnum)
	}
	if isObject(s) {
		if why := c.object(s, path, depth); why != "" {
			return why
		}
	}
	if items, ok := s["items"]; ok {
		if why := c.check(items, path+"/items", depth+1); why != "" {
			return why
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for i, sub := range alts {
			if why := c.check(sub, fmt.Sprintf("%s/anyOf/%d", path, i), depth+1); why != "" {
				return why
			}
		}
	} else if _, ok := s["anyOf"]; ok {
		return fmt.Sprintf("%s: anyOf is not a list", path)
	}
	for _, defsKey := range []string{"$defs", "definitions"} {
		defs, ok := s[defsKey]
		if !ok {
			continue
		}
		m, ok := defs.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %s is not an object", path, defsKey)
		}
		for _, name := range wire.SortedKeys(m) {
			if why := c.check(m[name], path+"/"+defsKey+"/"+name, depth); why != "" {
				return why
			}
		}
	}
	return ""
}

// object checks what strict mode asks of an object schema: no other
// properties allowed, and every property required.
func (c *strictChecker) object(s map[string]any, path string, depth int) string {
	if ap, ok := s["additionalProperties"]; !ok || ap != false {
		return fmt.Sprintf("%s: additionalProperties must be false", path)
	}
	props := map[string]any{}
	if p, ok := s["properties"]; ok {
		if props, ok = p.(map[string]any); !ok {
			return fmt.Sprintf("%s: properties is not an object", path)
		}
	}
	var required []string
	if r, ok := s["required"].([]any); ok {
		for _, v := range r {
			if name, ok := v.(string); ok {
				required = append(required, name)
			}
		}
	}
	c.properties += len(props)
	if c.properties > strictMaxProperties {
		return fmt.Sprintf("%s: more than %d properties in all", path, strictMaxProperties)
	}
	for _, name := range wire.SortedKeys(props) {
		if !slices.Contains(required, name) {
			return fmt.Sprintf("%s: property %q is optional, and strict mode needs every property required", path, name)
		}
		if why := c.check(props[name], path+"/properties/"+name, depth+1); why != "" {
			return why
		}
	}
	return ""
}

// isObject reports whether a schema describes objects.
func isObject(s map[string]any) bool {
	if _, ok := s["properties"]; ok {
		return true
	}
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}
