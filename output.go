package toolloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// DefaultOutputName is the name of an [OutputFormat] that gives none: the
// name of the tool the model answers with when the format is not sent
// natively.
const DefaultOutputName = "final_answer"

// ErrOutput: the run ended without a final answer that matches the
// output schema. The error is an *OutputError.
var ErrOutput = errors.New("toolloop: no valid final answer")

// OutputError says why a run with an output format ended without a valid
// answer. It matches [ErrOutput] with errors.Is.
type OutputError struct {
	// Attempts counts the invalid answers the model gave.
	Attempts int
	// Answer is the last invalid answer, as the model sent it.
	Answer string
	// Reason is what the validator said of it.
	Reason string
}

// Error implements the error interface.
func (e *OutputError) Error() string {
	return fmt.Sprintf("toolloop: no valid final answer after %d attempt(s): %s", e.Attempts, e.Reason)
}

// Is reports whether target is ErrOutput.
func (e *OutputError) Is(target error) bool { return target == ErrOutput }

// outputState is a run's output format and how it is asked for.
type outputState struct {
	format *OutputFormat
	// check validates an answer against the schema.
	check *entry
	// tool is the final-answer tool when the model is not sent the format
	// natively; nil when it is.
	tool    *entry
	answers answers
	// invalid counts the invalid answers so far.
	invalid int
}

// newOutputState checks format and decides how the run asks for it.
func newOutputState(rn *runState, format *OutputFormat) (*outputState, error) {
	f := *format
	if f.Name == "" {
		f.Name = DefaultOutputName
	}
	if !ValidToolName(f.Name) {
		return nil, fmt.Errorf("toolloop: output format name %q: want 1 to 64 of a-z, A-Z, 0-9, _ and -", f.Name)
	}
	if len(f.Schema) == 0 {
		return nil, errors.New("toolloop: output format has no schema")
	}
	o := &outputState{format: &f}
	spec := ToolSpec{Name: f.Name, InputSchema: f.Schema, Description: orDefault(f.Description,
		"Give your final answer by calling this tool, with the answer as its arguments. "+
			"Call it once, when you are done; the run ends when the answer is accepted.")}
	e, err := compileOutput(spec, &answerTool{o: o, spec: spec})
	if err != nil {
		return nil, err
	}
	o.check = e
	withTools := rn.l.Tools != nil || rn.l.Deferred != nil
	if n, ok := rn.l.Model.(NativeOutput); !ok || !nativeOutput(n, withTools) {
		o.tool = e
	}
	return o, nil
}

// nativeOutput asks a model whether it takes the format natively,
// treating a panic as no.
func nativeOutput(n NativeOutput, withTools bool) bool {
	ok, err := protect(func() bool { return n.NativeOutput(withTools) })
	return err == nil && ok
}

// outputSchemas caches compiled output schemas by their bytes, so that
// RunTyped does not compile its type's schema on every run. It stops
// growing at maxOutputSchemas.
var outputSchemas struct {
	sync.Mutex
	m map[schemaKey]*compiledSchema
}

const maxOutputSchemas = 256

func compileOutput(spec ToolSpec, t Tool) (*entry, error) {
	var buf bytes.Buffer
	k := keyOf(spec.InputSchema, &buf)
	outputSchemas.Lock()
	cs := outputSchemas.m[k]
	outputSchemas.Unlock()
	e := &entry{tool: t, spec: spec, key: k, kind: SourceBuiltin, source: loopSource}
	if cs != nil {
		e.schema, e.fast = cs.schema, cs.fast
		return e, nil
	}
	es, err := compileTools(SourceBuiltin, loopSource, []Tool{t})
	if err != nil {
		return nil, fmt.Errorf("toolloop: output format: %w", err)
	}
	e = es[0]
	outputSchemas.Lock()
	if outputSchemas.m == nil {
		outputSchemas.m = make(map[schemaKey]*compiledSchema)
	}
	if len(outputSchemas.m) < maxOutputSchemas {
		outputSchemas.m[k] = &compiledSchema{schema: e.schema, fast: e.fast}
	}
	outputSchemas.Unlock()
	return e, nil
}

// answerTool is the final-answer tool: it accepts arguments the schema
// validated, and the loop ends the run with them.
type answerTool struct {
	o    *outputState
	spec ToolSpec
}

func (t *answerTool) Spec() ToolSpec { return t.spec }

func (t *answerTool) Run(_ context.Context, call *Call) (*ToolResult, error) {
	t.o.answers.put(call.ID, call.Arguments)
	return &ToolResult{Content: []Content{TextContent("Answer accepted.")}}, nil
}

// textAnswer judges a final text answer (native mode, or a model that
// answered in text instead of calling the final-answer tool). It returns
// the answer if it is valid, or what to tell the model.
func (o *outputState) textAnswer(text string) (json.RawMessage, string) {
	if o.tool != nil {
		return nil, fmt.Sprintf("Your final answer must be given by calling the %s tool, with the answer as its arguments; "+
			"a text answer is not accepted. Call %s now.", o.format.Name, o.format.Name)
	}
	raw := json.RawMessage(unfence(text))
	if te := o.check.validate(raw); te != nil {
		msg := strings.Replace(te.Message, "arguments for "+o.format.Name, "the answer", 1)
		return nil, "Your final answer does not match the required JSON schema: " + msg +
			" Answer again with only the corrected JSON."
	}
	return raw, ""
}

// unfence strips white space and a Markdown code fence around text.
func unfence(text string) string {
	s := strings.TrimSpace(text)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = strings.TrimSuffix(s[3:], "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[\"") {
		s = s[i+1:] // the fence's language tag
	}
	return strings.TrimSpace(s)
}

// toolAnswer returns the accepted answer of a turn's final-answer calls:
// the first in call order whose result is a success. invalid says
// whether the turn held a final-answer call that failed.
func (o *outputState) toolAnswer(calls []ToolCall, results []*ToolResult) (answer json.RawMessage, invalid *ToolResult) {
	for i, tc := range calls {
		if tc.Name != o.format.Name {
			continue
		}
		args, ran := o.answers.take(tc.ID)
		r := results[i]
		switch {
		case r != nil && r.Status == StatusOK && ran && answer == nil:
			answer = args
		case r != nil && r.Status == StatusError && invalid == nil:
			invalid = r
		}
	}
	return answer, invalid
}

// checkAnswer handles a turn that may hold the final answer: a text
// answer (calls empty), or the final-answer tool's calls and results. It
// reports whether the run ends, and with what error.
func (rn *runState) checkAnswer(res *RunResult, msg *Message, results []*ToolResult) (bool, error) {
	o := rn.ctl.out
	var why, given string
	if len(msg.ToolCalls) == 0 {
		answer, bad := o.textAnswer(msg.Text())
		if bad == "" {
			res.Output = answer
			return true, nil
		}
		why, given = bad, msg.Text()
	} else {
		if o.tool == nil {
			return false, nil
		}
		answer, bad := o.toolAnswer(msg.ToolCalls, results)
		if answer != nil {
			res.Output, res.FinalText, res.StopReason = answer, string(answer), StopEnd
			return true, nil
		}
		if bad == nil || bad.Error == nil || bad.Error.Kind != KindInvalidArgs {
			return false, nil // no answer yet, or one the guard or a hook refused
		}
		why = bad.Error.Message
		given = o.given(msg.ToolCalls)
	}
	o.invalided(rn, why)
	if o.invalid > max(rn.l.Budget.WithDefaults().MaxOutputRetries, 0) {
		return true, rn.retriesError(&OutputError{Attempts: o.invalid, Answer: given, Reason: why})
	}
	if len(msg.ToolCalls) > 0 {
		return false, nil // the failed call's result tells the model why
	}
	n := len(res.Messages)
	edit := &TranscriptEdit{Strategy: "output_retry", Reason: "the final answer does not match the output schema",
		Splices: []Splice{{Start: n, End: n, Messages: []Message{UserMessage(why)}}}}
	if err := rn.applyEdit(res, edit); err != nil {
		return true, rn.retriesError(&OutputError{Attempts: o.invalid, Answer: given, Reason: why})
	}
	return false, nil
}

// retriesError is the error of a run whose last invalid answer was one
// too many: the output-retry limit, caused by oe.
func (rn *runState) retriesError(oe *OutputError) *BudgetError {
	return &BudgetError{Limit: LimitOutputRetries, Used: float64(oe.Attempts),
		Max: float64(max(rn.l.Budget.WithDefaults().MaxOutputRetries, 0)), Err: oe}
}

// OutputFormat asks the model for a final answer that is JSON of a given
// schema. See [AgentLoop.Output] and [RunTyped].
type OutputFormat struct {
	// Name names the format for providers that want one (1 to 64 of a-z,
	// A-Z, 0-9, _ and -); empty means "final_answer".
	Name string `json:"name,omitempty"`
	// Description tells the model what the answer is.
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the answer: an object.
	Schema json.RawMessage `json:"schema"`
}

// outState is the run's output state; nil when the run has no output
// format.
func (rn *runState) outState() *outputState {
	if rn.ctl == nil {
		return nil
	}
	return rn.ctl.out
}

// answerName is the name of the output tool; empty when the run has
// none (o is nil, or the format is sent natively).
func (o *outputState) answerName() string {
	if o == nil || o.tool == nil {
		return ""
	}
	return o.format.Name
}

// given is the arguments of the first call of the output tool in calls:
// the answer the model gave.
func (o *outputState) given(calls []ToolCall) string {
	for _, tc := range calls {
		if tc.Name == o.format.Name {
			return string(tc.Arguments)
		}
	}
	return ""
}

// invalided counts an invalid answer, and reports it.
func (o *outputState) invalided(rn *runState, why string) {
	o.invalid++
	if rn.observed {
		rn.emit(&Event{Type: EventOutputInvalid, Error: why})
	}
}
