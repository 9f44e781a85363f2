package toolloop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

var errNoRemoteRefs = errors.New("schemas may not load other documents")

// compileSchema compiles a tool's input schema. The schema must be a JSON
// object describing an object, and may not load anything from outside
// itself: a tool source is not allowed to make the host read files or the
// network through a $ref.
//
// The result does not depend on the tool's name, only on the schema's
// bytes, so tools with identical schemas may share one (see schemaCache).
// Most of the time goes to the schema library checking the schema against
// its metaschema, which it does on every compile.
func compileSchema(_ string, raw json.RawMessage) (*jsonschema.Schema, error) {
	// Only the top-level type is looked at here; the library decodes the
	// whole document itself.
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %v", err)
	}
	var typ any
	if t, ok := doc["type"]; ok {
		if err := json.Unmarshal(t, &typ); err != nil {
			return nil, fmt.Errorf("input schema: %v", err)
		}
	}
	if !describesObject(typ) {
		return nil, fmt.Errorf(`input schema must have "type": "object", has %v`, typeOrNone(typ))
	}
	c := jsonschema.NewCompiler()
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errNoRemoteRefs }
	const url = "mem://toolloop/input-schema.json"
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("input schema: %v", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("input schema does not compile: %v", err)
	}
	return s, nil
}

func describesObject(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return len(t) == 1 && t[0] == "object"
	}
	return false
}

func typeOrNone(t any) any {
	if t == nil {
		return "none"
	}
	return t
}

// validate checks raw arguments against the entry's schema. The error is
// an invalid_args *ToolError written for the model.
func (e *entry) validate(raw json.RawMessage) *ToolError {
	if tooDeep(raw) {
		return &ToolError{Kind: KindInvalidArgs, Message: fmt.Sprintf(
			"arguments for %s nest deeper than %d levels. Send flatter arguments.", e.spec.Name, MaxJSONDepth)}
	}
	if e.fast != nil && e.fast.accepts(raw) {
		return nil
	}
	v, err := decodeArgs(raw)
	if err != nil {
		return &ToolError{Kind: KindInvalidArgs, Message: fmt.Sprintf(
			"arguments for %s are not valid JSON (%v). Send a single JSON object matching the tool's input schema.",
			e.spec.Name, syntaxHint(err))}
	}
	if _, ok := v.(map[string]any); !ok {
		return &ToolError{Kind: KindInvalidArgs, Message: fmt.Sprintf(
			"arguments for %s must be a JSON object, got %s.", e.spec.Name, jsonKind(v))}
	}
	err = e.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ToolError{Kind: KindInvalidArgs, Message: fmt.Sprintf("arguments for %s: %v", e.spec.Name, err)}
	}
	return &ToolError{Kind: KindInvalidArgs, Message: describeViolations(e.spec.Name, ve)}
}

// decodeArgs decodes arguments for the validator, keeping numbers exact
// (json.Number), so that a number too large for a float64 is judged by the
// schema, not refused as malformed.
func decodeArgs(raw json.RawMessage) (any, error) {
	if err := json.Unmarshal(raw, new(json.RawMessage)); err != nil {
		return nil, err // a syntax error, with its offset
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// describeViolations lists each failed check as "at <pointer>: <words>",
// deepest first, so the model can fix exactly the field that is wrong.
func describeViolations(tool string, ve *jsonschema.ValidationError) string {
	var leaves []*jsonschema.ValidationError
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			leaves = append(leaves, v)
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	var b strings.Builder
	fmt.Fprintf(&b, "arguments for %s do not match its input schema:", tool)
	var seen []string
	for _, l := range leaves {
		loc := l.InstanceLocation
		if u, err := url.PathUnescape(loc); err == nil {
			loc = u // the validator percent-encodes; the model knows its fields by name
		}
		if loc == "" {
			loc = "/"
		}
		line := fmt.Sprintf("\n- at %s: %s", loc, l.Message)
		if slices.Contains(seen, line) {
			continue
		}
		seen = append(seen, line)
		b.WriteString(line)
	}
	b.WriteString("\nFix these fields and call the tool again.")
	return b.String()
}

func syntaxHint(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se, se.Offset)
	}
	return err.Error()
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}
