package codemode_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/codemode"
	"github.com/toolloop/toolloop/looptest"
)

// TestPrograms runs each of the 30 programs in testdata/programs, written
// the way the peers' documentation shows models writing code-mode
// programs, unchanged: a scripted model makes one run_code call with the
// program and then answers, inside a real AgentLoop whose registry holds
// the fixture tools (fixtures_test.go) and the code tool. The run_code
// result must be the program's "// want:" line (see wantMatches).
// RESULTS.md there records how the same tasks fared on goja and, written
// in Python, on Starlark.
func TestPrograms(t *testing.T) {
	files, err := filepath.Glob("testdata/programs/*.js")
	require.NoError(t, err)
	require.Len(t, files, 30)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".js"), func(t *testing.T) {
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			want, ok := wantLine(string(src))
			require.True(t, ok, "%s has no first line // want: ...", file)

			reg := fixtureRegistry()
			reg.MustRegister(codemode.New(reg, nil))
			args, err := json.Marshal(map[string]string{"code": string(src)})
			require.NoError(t, err)
			model := looptest.NewModel(t,
				looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "run_code", string(args)))},
				looptest.Turn{Reply: looptest.Text("done")},
			)
			loop := &toolloop.AgentLoop{Model: model, Tools: reg}
			res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Run the program.")})
			require.NoError(t, err)
			looptest.AssertValid(t, res.Messages)

			var runs []toolloop.ToolExecution
			for _, ex := range res.Executions {
				if ex.Name == "run_code" {
					runs = append(runs, ex)
				}
			}
			require.Len(t, runs, 1, "executions: %+v", res.Executions)
			require.True(t, runs[0].Success, "run_code failed: %v\n%s", runs[0].Error, runs[0].Output)
			wantMatches(t, want, runs[0].Output)
		})
	}
}

// wantLine returns the text after "// want: " on the program's first line.
func wantLine(src string) (string, bool) {
	first, _, _ := strings.Cut(src, "\n")
	return strings.CutPrefix(strings.TrimRight(first, "\r "), "// want: ")
}

// wantMatches checks the code tool's answer got against a want line. A
// want that is a JSON string is the exact text expected (so a report of
// several lines can be written on one line); any other JSON value is
// compared with got decoded as JSON, so key order and spacing do not
// matter; a want that is not JSON is the exact text expected.
func wantMatches(t *testing.T, want, got string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		assert.Equal(t, want, got)
		return
	}
	if s, ok := w.(string); ok {
		assert.Equal(t, s, got)
		return
	}
	var g any
	if !assert.NoError(t, json.Unmarshal([]byte(got), &g), "the answer is not JSON: %s", got) {
		return
	}
	assert.Equal(t, w, g)
}
