package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	_ "embed"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/toolloop/toolloop"
)

// Case is one task of a dataset: the input the agent is given, the tools
// it may use, and what its run is expected to do. A dataset line decodes
// into a Case (see the package doc for the format); a program may also
// build cases in Go, with Scorers in place of or besides Expect.
type Case struct {
	// ID names the case; unique in a dataset.
	ID string `json:"id"`
	// Prompt is the user's message, a shortcut for Messages holding one
	// user message. A case has Prompt or Messages, not both.
	Prompt string `json:"prompt,omitempty"`
	// Messages is the input transcript.
	Messages []toolloop.Message `json:"messages,omitempty"`
	// System, if set, is a system prompt put before the messages.
	System string `json:"system,omitempty"`
	// Tools, if set, are the only tools the model is offered (the loop's
	// tools and the fixtures alike); nil offers every tool.
	Tools []string `json:"tools,omitempty"`
	// Fixtures are tools the runner serves with canned results, by name,
	// in place of the loop's tools of the same name.
	Fixtures map[string]Fixture `json:"fixtures,omitempty"`
	// Expect names the scorers of the case, with their parameters.
	Expect []Expectation `json:"expect,omitempty"`
	// Scorers are scorers given in Go; they score after those of Expect.
	Scorers []Scorer `json:"-"`
	// Trials is how many times the case runs; 0 means Runner.Trials.
	Trials int `json:"trials,omitempty"`
	// MinPassRate is the part of the trials that must pass for the case
	// to pass; nil means all of them.
	MinPassRate *float64 `json:"min_pass_rate,omitempty"`
	// AllowError keeps a run that ends with an error from failing the
	// trial by itself: for cases that expect a limit to be reached.
	AllowError bool `json:"allow_error,omitempty"`
}

// Input returns the transcript the case's runs start from: the system
// prompt, then Messages or the prompt as a user message.
func (c *Case) Input() []toolloop.Message {
	var msgs []toolloop.Message
	if c.System != "" {
		msgs = append(msgs, toolloop.SystemMessage(c.System))
	}
	if c.Prompt != "" {
		return append(msgs, toolloop.UserMessage(c.Prompt))
	}
	return append(msgs, c.Messages...)
}

// Fixture is a tool served with canned results.
type Fixture struct {
	// Description is what the model is told of the tool.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of its arguments; nil accepts any
	// object.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Results are tried in order for each call: the first whose
	// Arguments match answers it. A call no result matches fails with
	// invalid_args, saying so.
	Results []FixtureResult `json:"results"`
}

// FixtureResult is one canned result of a [Fixture].
type FixtureResult struct {
	// Arguments, if set, is a JSON object that must be a subset of the
	// call's arguments (see [MatchJSON]); nil matches every call.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Text is the result's text.
	Text string `json:"text,omitempty"`
	// JSON, if set, is the result's JSON block, after the text.
	JSON json.RawMessage `json:"json,omitempty"`
	// Error, if set, fails the call with this message, of ErrorKind
	// (execution_failed when empty).
	Error     string             `json:"error,omitempty"`
	ErrorKind toolloop.ErrorKind `json:"error_kind,omitempty"`
}

// Expectation names a scorer of a case and holds its parameters: the JSON
// object of a dataset's "expect" list, whose "type" member names the
// scorer. [Runner] builds each into a [Scorer] (see [Builder]).
type Expectation struct {
	// Type names the scorer: one of the built-in types (see the package
	// doc) or a type of Runner.Builders.
	Type string
	// Params is the whole JSON object, "type" included.
	Params json.RawMessage
}

// NewExpectation returns the expectation of the given type whose
// parameters are params marshalled to a JSON object (nil for none), as a
// program writes a dataset: NewExpectation("trajectory",
// map[string]any{"tools": names, "mode": "exact"}).
func NewExpectation(typ string, params any) (Expectation, error) {
	obj := map[string]json.RawMessage{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return Expectation{}, fmt.Errorf("eval: expectation %s: %w", typ, err)
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return Expectation{}, fmt.Errorf("eval: expectation %s: the parameters are not a JSON object", typ)
		}
	}
	t, _ := json.Marshal(typ)
	obj["type"] = t
	b, err := json.Marshal(obj)
	if err != nil {
		return Expectation{}, err
	}
	return Expectation{Type: typ, Params: b}, nil
}

// MarshalJSON implements [json.Marshaler]: it writes Params, or an object
// holding only the type when Params is empty.
func (e Expectation) MarshalJSON() ([]byte, error) {
	if len(e.Params) == 0 {
		return json.Marshal(map[string]string{"type": e.Type})
	}
	return e.Params, nil
}

// UnmarshalJSON implements [json.Unmarshaler].
func (e *Expectation) UnmarshalJSON(b []byte) error {
	var w struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.Type, e.Params = w.Type, slices.Clone(b)
	return nil
}

//go:embed case.schema.json
var caseSchema []byte

// Schema returns the JSON Schema (draft 2020-12) of one line of a
// dataset, as [ReadDataset] checks it.
func Schema() []byte { return slices.Clone(caseSchema) }

var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errors.New("eval: remote schemas are not loaded") }
	const url = "https://github.com/toolloop/toolloop/eval/case.schema.json"
	if err := c.AddResource(url, bytes.NewReader(caseSchema)); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// ErrDataset is matched (with errors.Is) by every [LineError].
var ErrDataset = errors.New("eval: invalid dataset")

// LineError reports a line of a dataset that is not a valid case.
type LineError struct {
	// Line counts from 1.
	Line int
	// Err says what is wrong.
	Err error
}

// Error implements the error interface.
func (e *LineError) Error() string { return fmt.Sprintf("eval: dataset line %d: %v", e.Line, e.Err) }

// Unwrap returns ErrDataset and the error.
func (e *LineError) Unwrap() []error { return []error{ErrDataset, e.Err} }

// ReadDataset reads a dataset in JSON Lines: one case per line, checked
// against [Schema]. Blank lines and lines starting with "//" are skipped.
// The first line that is not a valid case, or repeats an ID, stops it
// with a *[LineError] naming the line.
func ReadDataset(r io.Reader) ([]Case, error) {
	schema, err := compiledSchema()
	if err != nil {
		return nil, fmt.Errorf("eval: the case schema does not compile: %w", err)
	}
	var cases []Case
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || bytes.HasPrefix(line, []byte("//")) {
			continue
		}
		c, err := parseCase(schema, line)
		if err != nil {
			return nil, &LineError{Line: n, Err: err}
		}
		if first, ok := seen[c.ID]; ok {
			return nil, &LineError{Line: n, Err: fmt.Errorf("case %q repeats the ID of line %d", c.ID, first)}
		}
		seen[c.ID] = n
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: reading the dataset: %w", err)
	}
	return cases, nil
}

// LoadDataset reads the dataset file at path (see [ReadDataset]).
func LoadDataset(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cases, err := ReadDataset(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cases, nil
}

// WriteDataset writes cases as a dataset, one JSON line each, that
// [ReadDataset] reads back. Scorers given in Go (Case.Scorers) are not
// written.
func WriteDataset(w io.Writer, cases []Case) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range cases {
		if err := enc.Encode(&cases[i]); err != nil {
			return fmt.Errorf("eval: case %q: %w", cases[i].ID, err)
		}
	}
	return nil
}

func parseCase(schema *jsonschema.Schema, line []byte) (Case, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return Case{}, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return Case{}, errors.New("more than one JSON value on the line")
	}
	if m, ok := doc.(map[string]any); ok {
		_, p := m["prompt"]
		_, msgs := m["messages"]
		if p == msgs {
			return Case{}, errors.New(`not a valid case: it needs "prompt" or "messages", and not both`)
		}
	}
	if err := schema.Validate(doc); err != nil {
		return Case{}, schemaError(err)
	}
	var c Case
	if err := json.Unmarshal(line, &c); err != nil {
		return Case{}, err
	}
	return c, nil
}

// schemaError turns the validator's error into one line per failure,
// naming where in the case each is.
func schemaError(err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			msgs = append(msgs, fmt.Sprintf("at %s: %s", loc, e.Message))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(msgs)
	msgs = slices.Compact(msgs)
	return fmt.Errorf("not a valid case: %s", strings.Join(msgs, "; "))
}
