package toolloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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

func (l *AgentLoop) maxOutputRetries() int {
	if l.MaxOutputRetries == 0 {
		return 2
	}
	return max(l.MaxOutputRetries, 0)
}

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
		for _, tc := range msg.ToolCalls {
			if tc.Name == o.format.Name {
				given = string(tc.Arguments)
				break
			}
		}
	}
	o.invalid++
	if rn.observed {
		rn.emit(&Event{Type: EventOutputInvalid, Error: why})
	}
	if o.invalid > rn.l.maxOutputRetries() {
		return true, &OutputError{Attempts: o.invalid, Answer: given, Reason: why}
	}
	if len(msg.ToolCalls) > 0 {
		return false, nil // the failed call's result tells the model why
	}
	n := len(res.Messages)
	edit := &TranscriptEdit{Strategy: "output_retry", Reason: "the final answer does not match the output schema",
		Splices: []Splice{{Start: n, End: n, Messages: []Message{UserMessage(why)}}}}
	if err := rn.applyEdit(res, edit); err != nil {
		return true, &OutputError{Attempts: o.invalid, Answer: given, Reason: why}
	}
	return false, nil
}

// typedFormats caches the output format of each type RunTyped is used
// with.
var typedFormats sync.Map // reflect.Type → *OutputFormat or error

// OutputFormatFor returns the output format of T, whose schema is
// inferred from T as a tool's input schema is (see [SchemaFor]): T must
// be a struct, or a pointer to one.
func OutputFormatFor[T any]() (*OutputFormat, error) {
	t := reflect.TypeFor[T]()
	if v, ok := typedFormats.Load(t); ok {
		if err, ok := v.(error); ok {
			return nil, err
		}
		return v.(*OutputFormat), nil
	}
	schema, err := SchemaFor[T]()
	if err != nil {
		err = fmt.Errorf("toolloop: output type: %w", err)
		typedFormats.Store(t, err)
		return nil, err
	}
	f := &OutputFormat{Name: DefaultOutputName, Schema: schema}
	typedFormats.Store(t, f)
	return f, nil
}

// RunTyped runs l on msgs as [AgentLoop.Run] does, asking for a final
// answer of type T (see [AgentLoop.Output], which it overrides for this
// run, and [OutputFormatFor]), and returns the answer decoded. The error
// is Run's, or an *OutputError when the model gave no valid answer; the
// RunResult is returned with every error, as Run returns it.
//
// With Budget.WrapUp, a run that reaches a limit asks for the typed
// answer in its wrap-up turn (see [Budget]); when the model gives a
// valid one, RunTyped returns it decoded together with the limit's error
// (a *BudgetError or ErrMaxIterations), so check the value's use against
// the error, not only err == nil. An invalid answer there ends the run
// with the limit's error joined to an *OutputError.
func RunTyped[T any](ctx context.Context, l *AgentLoop, msgs []Message) (T, *RunResult, error) {
	var zero T
	f, err := OutputFormatFor[T]()
	if err != nil {
		return zero, nil, err
	}
	res, err := l.runWith(ctx, msgs, nil, f)
	return typedResult[T](res, err)
}

// ResumeTyped resumes a run that RunTyped left paused, as
// [AgentLoop.Resume] does, and returns its answer decoded, as RunTyped
// does (a wrap-up turn's answer included).
func ResumeTyped[T any](ctx context.Context, l *AgentLoop, st *PauseState, decisions map[string]Approval) (T, *RunResult, error) {
	var zero T
	f, err := OutputFormatFor[T]()
	if err != nil {
		return zero, nil, err
	}
	res, err := l.resumeWith(ctx, st, decisions, nil, f)
	return typedResult[T](res, err)
}

// typedResult decodes the answer of a typed run that returned res and
// err: the answer, if the run gave one, even when it ended with an error
// (a limit's, after a wrap-up turn that answered).
func typedResult[T any](res *RunResult, err error) (T, *RunResult, error) {
	var zero T
	if err != nil && (res == nil || len(res.Output) == 0) {
		return zero, res, err
	}
	v, derr := DecodeOutput[T](res)
	if derr != nil {
		return zero, res, errors.Join(err, derr)
	}
	return v, res, err
}

// DecodeOutput decodes a run's final answer (RunResult.Output) into a T.
func DecodeOutput[T any](res *RunResult) (T, error) {
	var v T
	if res == nil || len(res.Output) == 0 {
		why := "the run gave no final answer"
		if res != nil && res.StopReason == StopRefusal {
			why = "the model refused to answer: " + res.FinalText
		}
		return v, &OutputError{Reason: why}
	}
	if err := json.Unmarshal(res.Output, &v); err != nil {
		return v, &OutputError{Answer: string(res.Output), Reason: fmt.Sprintf("the answer does not decode into %T: %v", v, err)}
	}
	return v, nil
}
