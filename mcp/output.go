package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/santhosh-tekuri/jsonschema/v5"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// maxViolation bounds the description of a schema violation.
const maxViolation = 1 << 10

var errNoRemoteRefs = errors.New("schemas may not load other documents")

// outputSchema returns the tool's output schema as JSON, and records its
// compiled form for checking the tool's results. A schema that does not
// compile is logged, and left out: its results are not checked.
func (s *Source) outputSchema(t *sdk.Tool) json.RawMessage {
	if t.OutputSchema == nil {
		s.cl.outputs.Delete(t.Name)
		return nil
	}
	raw, err := json.Marshal(t.OutputSchema)
	if err == nil && string(raw) == "null" {
		s.cl.outputs.Delete(t.Name)
		return nil
	}
	var sch *jsonschema.Schema
	if err == nil {
		sch, err = compileOutput(raw)
	}
	if err != nil {
		s.cl.outputs.Delete(t.Name)
		s.logger.Warn("mcp tool's output schema left out: it does not compile; its results are not checked", "tool", t.Name, "err", err)
		return nil
	}
	s.cl.outputs.Store(t.Name, sch)
	return raw
}

// compileOutput compiles an output schema, which may not load anything
// from outside itself.
func compileOutput(raw json.RawMessage) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errNoRemoteRefs }
	const url = "mem://toolloop/output-schema.json"
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// checkOutput checks a tool's result against the tool's output schema. A
// result that does not match becomes an error result saying why; one with
// isError, or whose structured content was cut to the budget (which a
// whole value might have matched), is left as it is.
func (s *Source) checkOutput(remote string, r *sdk.CallToolResult) {
	v, ok := s.cl.outputs.Load(remote)
	if !ok || r.IsError {
		return
	}
	sch := v.(*jsonschema.Schema)
	var violation string
	if r.StructuredContent == nil {
		violation = "the tool declares an output schema but returned no structured content"
	} else {
		raw, err := json.Marshal(r.StructuredContent)
		if err != nil || bytes.Contains(raw, []byte(`"_truncated"`)) || cutMarker.Match(raw) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return
		}
		if err := sch.Validate(doc); err != nil {
			violation = "the structured content does not match the tool's output schema: " + err.Error()
		}
	}
	if violation == "" {
		return
	}
	s.logger.Warn("mcp tool result violates its output schema", "tool", remote, "violation", violation)
	r.IsError = true
	r.StructuredContent = nil
	r.Content = []sdk.Content{&sdk.TextContent{Text: toolloop.TruncateText(violation, maxViolation)}}
}
