package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sink"
)

type setIn struct {
	Key   string `json:"key"`
	Value int    `json:"value" jsonschema:"minimum=0"`
}

func termFor(t *testing.T, input string, vars map[string]string) (*terminal, *bytes.Buffer) {
	t.Helper()
	var reg toolloop.ToolRegistry
	tool := toolloop.NewTool("set", "Set a key.", func(context.Context, setIn) (any, error) { return "ok", nil })
	tool.Annotations.Destructive = true
	reg.MustRegister(tool)
	var out bytes.Buffer
	in := newLineReader(strings.NewReader(input))
	t.Cleanup(in.close)
	term := &terminal{in: in, out: &out, getenv: func(k string) string { return vars[k] }, reg: &reg,
		editorIn: strings.NewReader(""), editorOut: &out}
	return term, &out
}

func TestTerminalAsk(t *testing.T) {
	call := &toolloop.Call{ID: "c1", Name: "set", Arguments: json.RawMessage(`{"key":"a","value":1}`)}
	for _, tc := range []struct {
		name     string
		input    string
		approved bool
		edited   string
		out      string
	}{
		{"yes", "y\n", true, "", "run it? [y]es, [n]o, [e]dit"},
		{"no", "no\n", false, "", ""},
		{"other answers ask again", "maybe\nY\n", true, "", ""},
		{"edit typed", "e\n{\"key\":\"b\",\"value\":2}\ny\n", true, `{"key":"b","value":2}`, `? set {"key":"b","value":2}`},
		{"edit then no", "e\n{\"key\":\"b\",\"value\":2}\nn\n", false, "", ""},
		{"edit not json", "e\n{key\ny\n", true, "", "not a JSON object"},
		{"edit not an object", "e\n[1]\ny\n", true, "", "not a JSON object"},
		{"edit against the schema", "e\n{\"key\":\"b\",\"value\":-1}\ny\n", true, "", "the tool's schema does not accept them"},
		{"input ends", "", false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, out := termFor(t, tc.input, nil)
			a, edited := term.ask(t.Context(), call, call.Arguments, "it changes things")
			assert.Equal(t, tc.approved, a.Approved, out.String())
			assert.NotEmpty(t, a.Reason)
			if tc.edited == "" {
				assert.Nil(t, edited)
			} else {
				assert.JSONEq(t, tc.edited, string(edited))
			}
			assert.Contains(t, out.String(), tc.out)
		})
	}
}

func TestTerminalEditor(t *testing.T) {
	dir := t.TempDir()
	// An "editor" that replaces the file with new arguments.
	ed := writeFile(t, dir, "ed.sh", "#!/bin/sh\nprintf '{\"key\": \"from-editor\", \"value\": 7}' > \"$1\"\n")
	require.NoError(t, os.Chmod(ed, 0o755))
	term, _ := termFor(t, "e\ny\n", map[string]string{"EDITOR": ed})
	call := &toolloop.Call{ID: "c1", Name: "set", Arguments: json.RawMessage(`{"key":"a","value":1}`)}
	a, edited := term.ask(t.Context(), call, call.Arguments, "")
	assert.True(t, a.Approved)
	assert.JSONEq(t, `{"key":"from-editor","value":7}`, string(edited))

	broken := writeFile(t, dir, "broken.sh", "#!/bin/sh\nexit 3\n")
	require.NoError(t, os.Chmod(broken, 0o755))
	term, out := termFor(t, "e\nn\n", map[string]string{"VISUAL": broken, "EDITOR": ed})
	a, edited = term.ask(t.Context(), call, call.Arguments, "")
	assert.False(t, a.Approved)
	assert.Nil(t, edited)
	assert.Contains(t, out.String(), "the editor failed")
}

// TestTerminalEdit runs a loop whose guard asks: the edited arguments
// are what the tool runs with, and the model is told so.
func TestTerminalEdit(t *testing.T) {
	term, _ := termFor(t, "e\n{\"key\":\"b\",\"value\":2}\ny\n", nil)
	var got setIn
	var reg toolloop.ToolRegistry
	tool := toolloop.NewTool("set", "Set a key.", func(_ context.Context, in setIn) (any, error) { got = in; return "ok", nil })
	tool.Annotations.Destructive = true
	reg.MustRegister(tool)
	term.reg = &reg
	loop := &toolloop.AgentLoop{Tools: &reg, Guard: policy(), Approver: term}
	res, _ := loop.RunCall(t.Context(), "r1", 1, toolloop.ToolCall{ID: "c1", Name: "set", Arguments: json.RawMessage(`{"key":"a","value":1}`)}, nil)
	require.NotNil(t, res)
	assert.Equal(t, toolloop.StatusOK, res.Status, res.Text())
	assert.Equal(t, setIn{Key: "b", Value: 2}, got)
	assert.Contains(t, res.Text(), "It ran with")
	assert.Equal(t, []string{"approval: edited"}, res.Meta.Modified)
}

func TestLineReaderCancel(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	lr := newLineReader(r)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = lr.readLine(ctx, nil)
	require.ErrorIs(t, err, context.Canceled)
	// The line asked for goes to the next read.
	_, err = w.WriteString("later\n")
	require.NoError(t, err)
	line, err := lr.readLine(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, "later", line)
	w.Close()
	_, err = lr.readLine(t.Context(), nil)
	require.Error(t, err)
	lr.close()
	r.Close()
}

func TestClean(t *testing.T) {
	assert.Equal(t, `a\u001b[31mb\u202e`, clean("a\x1b[31mb\u202e"))
	assert.True(t, strings.HasSuffix(clean(strings.Repeat("x", 5000)), " …"))
}

// TestTerminalRecordsOneLine: a call the person edited and approved at
// the prompt prints one line after the prompt, with the edited arguments,
// and no request for approval (issue 39).
func TestTerminalRecordsOneLine(t *testing.T) {
	term, out := termFor(t, "e\n{\"key\":\"b\",\"value\":2}\ny\n", nil)
	var printed bytes.Buffer
	asks := toolloop.GuardFunc(func(context.Context, *toolloop.Call) toolloop.Verdict {
		return toolloop.Verdict{Decision: toolloop.Ask, Reason: "it changes things"}
	})
	loop := &toolloop.AgentLoop{Tools: term.reg, Guard: asks, Approver: term,
		OnEvent: quietAsked(sink.NewPrinter(&printed, &sink.PrinterOptions{Color: sink.ColorNever}), term)}
	res, pending := loop.RunCall(t.Context(), "run_1", 1, toolloop.ToolCall{ID: "c1", Name: "set", Arguments: json.RawMessage(`{"key":"a","value":1}`)}, nil)
	require.Nil(t, pending)
	require.False(t, res.IsError(), res.Text())
	assert.Contains(t, out.String(), "run it?", "the prompt asked")
	// The loop's note that the arguments changed follows the result on a
	// line of its own.
	assert.Equal(t, "  ✓ set key=b value=2 (args edited by person, approved) → ok … (+1 line)\n", printed.String())
}
