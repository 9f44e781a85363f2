package eval_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
)

const goodDataset = `{"id": "paris", "prompt": "Weather in Paris?", "system": "Be brief.", "tools": ["get_weather"], "trials": 3, "min_pass_rate": 0.5, "fixtures": {"get_weather": {"description": "Weather.", "input_schema": {"type": "object"}, "results": [{"arguments": {"city": "Paris"}, "text": "18°C"}, {"error": "unknown city", "error_kind": "not_found"}]}}, "expect": [{"type": "tool_called", "name": "get_weather", "arguments": {"city": "Paris"}}, {"type": "text_contains", "text": "18"}]}

// a comment
{"id": "chat", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "expect": [{"type": "no_tool_called"}], "allow_error": true}
`

func TestReadDataset(t *testing.T) {
	cases, err := eval.ReadDataset(strings.NewReader(goodDataset))
	require.NoError(t, err)
	require.Len(t, cases, 2)

	c := cases[0]
	assert.Equal(t, "paris", c.ID)
	assert.Equal(t, 3, c.Trials)
	require.NotNil(t, c.MinPassRate)
	assert.Equal(t, 0.5, *c.MinPassRate)
	assert.Equal(t, []string{"get_weather"}, c.Tools)
	require.Len(t, c.Expect, 2)
	assert.Equal(t, "tool_called", c.Expect[0].Type)
	assert.JSONEq(t, `{"type": "tool_called", "name": "get_weather", "arguments": {"city": "Paris"}}`, string(c.Expect[0].Params))
	assert.Equal(t, []toolloop.Message{toolloop.SystemMessage("Be brief."), toolloop.UserMessage("Weather in Paris?")}, c.Input())
	f := c.Fixtures["get_weather"]
	require.Len(t, f.Results, 2)
	assert.Equal(t, toolloop.KindNotFound, f.Results[1].ErrorKind)

	assert.Equal(t, []toolloop.Message{toolloop.UserMessage("hi")}, cases[1].Input())
	assert.True(t, cases[1].AllowError)

	// A case marshals back to a line that reads the same.
	b, err := json.Marshal(cases[0])
	require.NoError(t, err)
	again, err := eval.ReadDataset(bytes.NewReader(b))
	require.NoError(t, err)
	b2, err := json.Marshal(again[0])
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(b2))
}

func TestReadDatasetErrors(t *testing.T) {
	tests := []struct {
		name, data string
		line       int
		mention    string
	}{
		{"not JSON", `{"id": "a", "prompt": "x"}` + "\n{nope", 2, "not JSON"},
		{"no id", `{"prompt": "x"}`, 1, "id"},
		{"no input", `{"id": "a"}`, 1, "prompt"},
		{"prompt and messages", `{"id": "a", "prompt": "x", "messages": [{"role": "user"}]}`, 1, "not both"},
		{"unknown member", `{"id": "a", "prompt": "x", "trails": 3}`, 1, "trails"},
		{"bad trials", `{"id": "a", "prompt": "x", "trials": 0}`, 1, "/trials"},
		{"bad role", `{"id": "a", "messages": [{"role": "robot"}]}`, 1, "/messages/0/role"},
		{"expectation without type", "\n\n" + `{"id": "a", "prompt": "x", "expect": [{"name": "t"}]}`, 3, "/expect/0"},
		{"tool_called without name", `{"id": "a", "prompt": "x", "expect": [{"type": "tool_called"}]}`, 1, "/expect/0"},
		{"misspelled parameter", `{"id": "a", "prompt": "x", "expect": [{"type": "text_contains", "txt": "y"}]}`, 1, "/expect/0"},
		{"bad mode", `{"id": "a", "prompt": "x", "expect": [{"type": "trajectory", "tools": [], "mode": "roughly"}]}`, 1, "/expect/0/mode"},
		{"fixture without results", `{"id": "a", "prompt": "x", "fixtures": {"t": {}}}`, 1, "/fixtures/t"},
		{"duplicate id", `{"id": "a", "prompt": "x"}` + "\n" + `{"id": "a", "prompt": "y"}`, 2, "line 1"},
		{"two values", `{"id": "a", "prompt": "x"} {}`, 1, "more than one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eval.ReadDataset(strings.NewReader(tt.data))
			require.ErrorIs(t, err, eval.ErrDataset)
			var le *eval.LineError
			require.True(t, errors.As(err, &le))
			assert.Equal(t, tt.line, le.Line)
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

func TestSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("case.json", bytes.NewReader(eval.Schema())))
	_, err := c.Compile("case.json")
	require.NoError(t, err)
	// It is a copy.
	s := eval.Schema()
	s[0] = 'x'
	assert.Equal(t, byte('{'), eval.Schema()[0])
}

func TestLoadDataset(t *testing.T) {
	_, err := eval.LoadDataset("testdata/missing.jsonl")
	require.Error(t, err)
	cases, err := eval.LoadDataset("testdata/weather.jsonl")
	require.NoError(t, err)
	assert.NotEmpty(t, cases)
}

func TestWriteDataset(t *testing.T) {
	traj, err := eval.NewExpectation("trajectory", map[string]any{"tools": []string{"get_weather"}, "mode": eval.InOrder})
	require.NoError(t, err)
	none, err := eval.NewExpectation("no_tool_called", nil)
	require.NoError(t, err)
	_, err = eval.NewExpectation("x", []int{1})
	assert.Error(t, err)

	cases := []eval.Case{
		{ID: "a <b>", Prompt: "Weather?", Expect: []eval.Expectation{traj}},
		{ID: "c", Messages: []toolloop.Message{toolloop.UserMessage("hi")}, Expect: []eval.Expectation{none}, Trials: 2},
	}
	var b bytes.Buffer
	require.NoError(t, eval.WriteDataset(&b, cases))
	assert.Equal(t, 2, strings.Count(b.String(), "\n"))
	back, err := eval.ReadDataset(&b)
	require.NoError(t, err)
	require.Len(t, back, 2)
	assert.Equal(t, "a <b>", back[0].ID)
	assert.JSONEq(t, `{"type": "trajectory", "tools": ["get_weather"], "mode": "in_order"}`, string(back[0].Expect[0].Params))
	assert.Equal(t, "no_tool_called", back[1].Expect[0].Type)
	assert.Equal(t, 2, back[1].Trials)
	scorers, err := (&eval.Runner{}).Scorers(&back[0])
	require.NoError(t, err)
	assert.Equal(t, "trajectory(in_order)", scorers[0].Name())
}
