package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
)

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
// (a *BudgetError), so check the value's use against
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

// TypedStream is a [Stream] whose run asks for a final answer of type T,
// as [RunTyped] does: range over Events, then read the decoded answer
// from Result.
type TypedStream[T any] struct {
	*Stream
}

// RunStreamTyped is [RunTyped] as a stream: it returns the run of msgs,
// asking for a final answer of type T, to range over its events as they
// happen (see [Stream]) and then read the answer, decoded, from Result.
// A type with no valid schema yields no events, and Result reports why.
func RunStreamTyped[T any](ctx context.Context, l *AgentLoop, msgs []Message) *TypedStream[T] {
	msgs = slices.Clone(msgs)
	f, ferr := OutputFormatFor[T]()
	return &TypedStream[T]{newStream(ctx, func(ctx context.Context, sink func(Event)) (*RunResult, error) {
		if ferr != nil {
			return nil, ferr
		}
		return l.runWith(ctx, msgs, sink, f)
	})}
}

// Result returns the run's answer decoded, with its result and error, as
// RunTyped would (see [Stream.Result] for when it may be called).
func (s *TypedStream[T]) Result() (T, *RunResult, error) {
	return typedResult[T](s.Stream.Result())
}
