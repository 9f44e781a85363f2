package wire

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/toolloop/toolloop"
)

// rootOnlyForbidden are keywords both APIs refuse at the top of a tool's
// input schema: the root must be a plain object schema.
var rootOnlyForbidden = []string{"anyOf", "oneOf", "allOf", "not", "if", "then", "else", "enum", "const"}

// ObjectSchema decodes a tool's input schema into the object the APIs take
// as a tool's parameters. Nil means an object with no constraints. It
// drops the root's $schema and $id, which are metadata, and any keyword the
// APIs refuse at the root (anyOf, oneOf, allOf, not, if/then/else, enum,
// const), and sets the root's type to object. The loop still validates
// the arguments against the full schema, so loosening what the model is
// shown never lets bad arguments through. notes says what was dropped.
func ObjectSchema(raw json.RawMessage) (schema map[string]any, notes []string, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil, nil
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, nil, fmt.Errorf("tool input schema is not a JSON object: %w", err)
	}
	if schema == nil {
		schema = map[string]any{}
	}
	delete(schema, "$schema")
	delete(schema, "$id")
	for _, k := range rootOnlyForbidden {
		if _, ok := schema[k]; ok {
			delete(schema, k)
			notes = append(notes, "dropped "+k+" at the schema's root, which the API does not accept there")
		}
	}
	if t, ok := schema["type"]; !ok || t != "object" {
		if ok {
			notes = append(notes, fmt.Sprintf("set the root type %v to object", t))
		}
		schema["type"] = "object"
	}
	return schema, notes, nil
}

// Cache remembers the conversion of each tool spec, so that a tool is
// converted (and any fallback logged) once, not on every turn. It is safe
// for concurrent use. The zero value is ready to use.
type Cache[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// maxCached bounds a Cache: past it the cache starts over, so tool sets
// that keep changing cannot grow it without limit.
const maxCached = 512

// Get returns the cached value for key, or computes, stores and returns it.
func (c *Cache[T]) Get(key string, compute func() T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[key]; ok {
		return v
	}
	v := compute()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = make(map[string]T)
	}
	c.m[key] = v
	return v
}

// Key returns a cache key made of parts.
func Key(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
		b = append(b, 0)
	}
	return string(b)
}

// SortedKeys returns the keys of m in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// OutputSchema decodes an output format's schema as ObjectSchema does,
// for APIs that take the format's description inside the schema: it is
// set as the root's description when the schema has none. provider
// prefixes the errors; name is the format's name, "final_answer" if it
// has none.
func OutputSchema(provider string, f *toolloop.OutputFormat) (name string, schema map[string]any, notes []string, err error) {
	name = f.Name
	if name == "" {
		name = toolloop.DefaultOutputName
	}
	if len(f.Schema) == 0 || string(f.Schema) == "null" {
		return name, nil, nil, fmt.Errorf("%s: output format %s has no schema", provider, name)
	}
	schema, notes, err = ObjectSchema(f.Schema)
	if err != nil {
		return name, nil, nil, fmt.Errorf("%s: output format %s: %w", provider, name, err)
	}
	if _, has := schema["description"]; !has && f.Description != "" {
		schema["description"] = f.Description
	}
	return name, schema, notes, nil
}
