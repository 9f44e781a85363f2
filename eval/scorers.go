package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/toolloop/toolloop"
)

// ToolCalled passes when the run called Tool at least MinTimes times (0
// means once) with arguments that contain Arguments as a subset (see
// [MatchJSON]), if set, and satisfy Match, if set. Dataset type
// "tool_called", with "name", "arguments" and "min_times".
type ToolCalled struct {
	Tool      string
	Arguments json.RawMessage
	Match     func(args json.RawMessage) bool
	MinTimes  int
}

// Name implements [Scorer]: "tool_called(TOOL)".
func (s *ToolCalled) Name() string { return "tool_called(" + s.Tool + ")" }

// Score implements [Scorer].
func (s *ToolCalled) Score(_ context.Context, t *Trial) Score {
	want := max(s.MinTimes, 1)
	named, matched := 0, 0
	for _, c := range t.ToolCalls() {
		if c.Name != s.Tool {
			continue
		}
		named++
		if s.Arguments != nil && !MatchJSON(s.Arguments, c.Arguments) {
			continue
		}
		if s.Match != nil && !s.Match(c.Arguments) {
			continue
		}
		matched++
	}
	switch {
	case matched >= want:
		return Pass(fmt.Sprintf("%s was called %d times with matching arguments", s.Tool, matched))
	case named == 0:
		return Fail(fmt.Sprintf("%s was never called (calls: %s)", s.Tool, callNames(t)))
	default:
		return Fail(fmt.Sprintf("%s was called %d times, %d with matching arguments; want %d", s.Tool, named, matched, want))
	}
}

func callNames(t *Trial) string {
	var names []string
	for _, c := range t.ToolCalls() {
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// TrajectoryMode says how a [Trajectory] compares the tools called with
// the tools expected.
type TrajectoryMode string

// The trajectory modes.
const (
	// Exact: the calls are the expected tools, in order, and no others.
	Exact TrajectoryMode = "exact"
	// InOrder: the expected tools were called in order, maybe with other
	// calls between them.
	InOrder TrajectoryMode = "in_order"
	// AnyOrder: the calls are the expected tools, as many times each,
	// in any order, and no others.
	AnyOrder TrajectoryMode = "any_order"
	// Subset: each expected tool was called (as many times as it is
	// listed), among any other calls.
	Subset TrajectoryMode = "subset"
)

// Trajectory passes when the names of the tools called, in call order,
// match Tools as Mode says (Exact when empty). A failing score's value
// is the part matched, out of the longer of Tools and the calls. Dataset type "trajectory", with "tools" and "mode".
type Trajectory struct {
	Tools []string
	Mode  TrajectoryMode
}

// Name implements [Scorer]: "trajectory(MODE)".
func (s *Trajectory) Name() string { return "trajectory(" + string(s.mode()) + ")" }

func (s *Trajectory) mode() TrajectoryMode {
	if s.Mode == "" {
		return Exact
	}
	return s.Mode
}

// Score implements [Scorer].
func (s *Trajectory) Score(_ context.Context, t *Trial) Score {
	var got []string
	for _, c := range t.ToolCalls() {
		got = append(got, c.Name)
	}
	var matched int
	var pass bool
	switch s.mode() {
	case Exact:
		for matched < min(len(got), len(s.Tools)) && got[matched] == s.Tools[matched] {
			matched++
		}
		pass = slices.Equal(got, s.Tools)
	case InOrder:
		for _, g := range got {
			if matched < len(s.Tools) && g == s.Tools[matched] {
				matched++
			}
		}
		pass = matched == len(s.Tools)
	case AnyOrder, Subset:
		left := slices.Clone(got)
		for _, w := range s.Tools {
			if i := slices.Index(left, w); i >= 0 {
				left = slices.Delete(left, i, i+1)
				matched++
			}
		}
		pass = matched == len(s.Tools) && (s.mode() == Subset || len(left) == 0)
	default:
		return Fail(fmt.Sprintf("unknown trajectory mode %q", s.Mode))
	}
	sc := Score{Pass: pass, Value: 1}
	if !pass {
		// Out of the longer list, so extra calls cost too.
		sc.Value = float64(matched) / float64(max(len(s.Tools), len(got)))
		sc.Reason = fmt.Sprintf("called [%s], want [%s] (%s)", strings.Join(got, ", "), strings.Join(s.Tools, ", "), s.mode())
	}
	return sc
}

// NoToolCalled passes when the run called none of Names, or no tool at
// all when Names is empty. Dataset type "no_tool_called", with "names".
type NoToolCalled struct {
	Names []string
}

// Name implements [Scorer]: "no_tool_called" or "no_tool_called(A,B)".
func (s *NoToolCalled) Name() string {
	if len(s.Names) == 0 {
		return "no_tool_called"
	}
	return "no_tool_called(" + strings.Join(s.Names, ",") + ")"
}

// Score implements [Scorer].
func (s *NoToolCalled) Score(_ context.Context, t *Trial) Score {
	var bad []string
	for _, c := range t.ToolCalls() {
		if len(s.Names) == 0 || slices.Contains(s.Names, c.Name) {
			bad = append(bad, c.Name)
		}
	}
	if len(bad) > 0 {
		return Fail("called " + strings.Join(bad, ", "))
	}
	return Pass("")
}

// Output passes when the run's final output is JSON valid for Schema (if
// set) whose values at the JSON Pointers of Equal are equal to theirs.
// The final output is RunResult.Output when the run had an output format,
// and the final text read as JSON otherwise (inside a ``` fence if it
// has one). Dataset type "output", with "schema" and "equal".
type Output struct {
	Schema json.RawMessage
	// Equal maps JSON Pointers ("/city", "/items/0/id"; "" is the whole
	// output) to the values expected there.
	Equal map[string]json.RawMessage

	once     sync.Once
	compiled *jsonschema.Schema
	err      error
}

// Name implements [Scorer]: "output".
func (s *Output) Name() string { return "output" }

// Score implements [Scorer].
func (s *Output) Score(_ context.Context, t *Trial) Score {
	raw := FinalOutput(t.Result)
	if raw == nil {
		return Fail("the final output is not JSON: " + clip(t.Result.FinalText, 200))
	}
	v, err := decode(raw)
	if err != nil {
		return Fail("the final output is not JSON: " + err.Error())
	}
	if s.Schema != nil {
		s.once.Do(func() { s.compiled, s.err = compile(s.Schema) })
		if s.err != nil {
			return Fail("the schema does not compile: " + s.err.Error())
		}
		if err := s.compiled.Validate(v); err != nil {
			return Fail("the final output does not match the schema: " + schemaError(err).Error())
		}
	}
	keys := make([]string, 0, len(s.Equal))
	for k := range s.Equal {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		want, err := decode(s.Equal[k])
		if err != nil {
			return Fail(fmt.Sprintf("the expected value at %q is not JSON", k))
		}
		got, ok := pointer(v, k)
		if !ok {
			return Fail(fmt.Sprintf("the final output has nothing at %q", k))
		}
		if !equal(want, got) {
			g, _ := json.Marshal(got)
			return Fail(fmt.Sprintf("at %q the final output has %s, want %s", k, g, s.Equal[k]))
		}
	}
	return Pass("")
}

// FinalOutput returns a run's final output as JSON, as the [Output]
// scorer reads it, or nil if it has none.
func FinalOutput(res *toolloop.RunResult) json.RawMessage {
	if len(res.Output) > 0 {
		return res.Output
	}
	text := strings.TrimSpace(res.FinalText)
	if i := strings.Index(text, "```"); i >= 0 {
		inner := text[i+3:]
		if nl := strings.IndexByte(inner, '\n'); nl >= 0 {
			inner = inner[nl+1:]
		}
		if j := strings.Index(inner, "```"); j >= 0 {
			text = strings.TrimSpace(inner[:j])
		}
	}
	if !json.Valid([]byte(text)) {
		return nil
	}
	return json.RawMessage(text)
}

func compile(schema json.RawMessage) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errors.New("remote schemas are not loaded") }
	const url = "mem://eval/output.schema.json"
	if err := c.AddResource(url, bytes.NewReader(schema)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// TextContains passes when the final text contains Text (ignoring case
// when IgnoreCase is set). Dataset type "text_contains", with "text" and
// "ignore_case".
type TextContains struct {
	Text       string
	IgnoreCase bool
}

// Name implements [Scorer]: "text_contains(TEXT)".
func (s *TextContains) Name() string { return fmt.Sprintf("text_contains(%q)", clip(s.Text, 40)) }

// Score implements [Scorer].
func (s *TextContains) Score(_ context.Context, t *Trial) Score {
	got, want := t.Result.FinalText, s.Text
	if s.IgnoreCase {
		got, want = strings.ToLower(got), strings.ToLower(want)
	}
	if strings.Contains(got, want) {
		return Pass("")
	}
	return Fail(fmt.Sprintf("the final text does not contain %q: %q", s.Text, clip(t.Result.FinalText, 200)))
}

// TextMatches passes when the final text matches Pattern. Dataset type
// "text_matches", with "pattern" (RE2 syntax).
type TextMatches struct {
	Pattern *regexp.Regexp
}

// Name implements [Scorer]: "text_matches(PATTERN)".
func (s *TextMatches) Name() string {
	return fmt.Sprintf("text_matches(%q)", clip(s.Pattern.String(), 40))
}

// Score implements [Scorer].
func (s *TextMatches) Score(_ context.Context, t *Trial) Score {
	if s.Pattern.MatchString(t.Result.FinalText) {
		return Pass("")
	}
	return Fail(fmt.Sprintf("the final text does not match %s: %q", s.Pattern, clip(t.Result.FinalText, 200)))
}

// Limits passes when the run stayed within each limit that is set: at
// most Turns model turns, Tokens tokens (input and output), CostUSD
// dollars and ToolCalls calls. Zero fields limit nothing. Dataset type
// "limits", with "turns", "tokens", "cost_usd" and "tool_calls".
type Limits struct {
	Turns     int
	Tokens    int64
	CostUSD   float64
	ToolCalls int
}

// Name implements [Scorer]: "limits".
func (s *Limits) Name() string { return "limits" }

// Score implements [Scorer].
func (s *Limits) Score(_ context.Context, t *Trial) Score {
	r := t.Result
	var over []string
	if s.Turns > 0 && r.Turns > s.Turns {
		over = append(over, fmt.Sprintf("%d turns, limit %d", r.Turns, s.Turns))
	}
	if tok := r.Usage.InputTokens + r.Usage.OutputTokens; s.Tokens > 0 && tok > s.Tokens {
		over = append(over, fmt.Sprintf("%d tokens, limit %d", tok, s.Tokens))
	}
	if s.CostUSD > 0 && r.Cost > s.CostUSD {
		over = append(over, fmt.Sprintf("$%.4f, limit $%.4f", r.Cost, s.CostUSD))
	}
	if s.ToolCalls > 0 && r.ToolCalls > s.ToolCalls {
		over = append(over, fmt.Sprintf("%d tool calls, limit %d", r.ToolCalls, s.ToolCalls))
	}
	if len(over) > 0 {
		return Fail("over its limits: " + strings.Join(over, "; "))
	}
	return Pass("")
}

// NoErrorKinds passes when no tool call failed with one of Kinds, or
// none failed at all when Kinds is empty. Dataset type "no_error_kinds",
// with "kinds".
type NoErrorKinds struct {
	Kinds []toolloop.ErrorKind
}

// Name implements [Scorer]: "no_error_kinds" or "no_error_kinds(A,B)".
func (s *NoErrorKinds) Name() string {
	if len(s.Kinds) == 0 {
		return "no_error_kinds"
	}
	names := make([]string, len(s.Kinds))
	for i, k := range s.Kinds {
		names[i] = string(k)
	}
	return "no_error_kinds(" + strings.Join(names, ",") + ")"
}

// Score implements [Scorer].
func (s *NoErrorKinds) Score(_ context.Context, t *Trial) Score {
	var bad []string
	for _, x := range t.Result.Executions {
		if x.Error != nil && (len(s.Kinds) == 0 || slices.Contains(s.Kinds, x.Error.Kind)) {
			bad = append(bad, fmt.Sprintf("%s (%s): %s", x.Name, x.Error.Kind, clip(x.Error.Message, 120)))
		}
	}
	if len(bad) > 0 {
		return Fail("calls failed: " + strings.Join(bad, "; "))
	}
	return Pass("")
}

// clip cuts s to about n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
