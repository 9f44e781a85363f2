package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestOffline runs the command as `go run ./examples/coder -dir DIR` does
// with no model configured: the scripted model finds the bug in the
// built-in project, fixes it (the edit approved, as stdin is no
// terminal and the project a fresh copy), and the tests pass.
func TestOffline(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "stats")
	logPath := filepath.Join(t.TempDir(), "coder.log")
	var out, errOut bytes.Buffer
	res, err := run(t.Context(), []string{"-dir", dir, "-log", logPath, "-log-level", "info"},
		strings.NewReader(""), &out, &errOut, env())
	require.NoError(t, err, "stderr: %s", errOut.String())
	assert.Contains(t, errOut.String(), "scripted model")

	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, toolloop.StopEnd, res.StopReason)
	results := looptest.Results(res.Messages)
	require.Len(t, results, 5)
	for _, id := range []string{"call_1", "call_3", "call_4", "call_5"} {
		assert.Falsef(t, results[id].IsError(), "%s: %s", id, results[id].Text())
	}
	require.True(t, results["call_2"].IsError(), "the tests fail before the fix")
	assert.Equal(t, toolloop.KindExecutionFailed, results["call_2"].Error.Kind)
	assert.Contains(t, results["call_2"].Text(), "--- FAIL: TestMean")
	assert.Contains(t, results["call_5"].Text(), "ok  \texample.com/stats")

	// The fix is on disk.
	src, err := os.ReadFile(filepath.Join(dir, "stats.go"))
	require.NoError(t, err)
	assert.Contains(t, string(src), "return sum / float64(len(xs))\n")
	assert.NotContains(t, string(src), "len(xs)-1")

	// The typed tool's result is JSON, which the model reads as text.
	var funcs []function
	require.NoError(t, json.Unmarshal([]byte(results["call_1"].Text()), &funcs))
	assert.Equal(t, []function{
		{Name: "Mean", Line: 5, Doc: "Mean returns the arithmetic mean of xs, or 0 when xs is empty."},
		{Name: "Max", Line: 17, Doc: "Max returns the largest of xs, or 0 when xs is empty."},
	}, funcs)

	printed := out.String()
	for _, want := range []string{
		"Let me see what stats.go holds and how the tests fail.\n",
		`  ✓ go_outline path=stats.go → [{"name":"Mean","line":5,`,
		`  ✗ exec_shell command="go test ./..."`,
		"  ? edit_file path=stats.go edits=",
		" (approved) → edited stats.go: 1 edit",
		"→ edited stats.go: 1 edit",
		"Fixed: Mean in stats.go",
	} {
		assert.Contains(t, printed, want)
	}
	assert.NotContains(t, printed, "\x1b[", "no colour off a terminal")

	logged, err := os.ReadFile(logPath)
	require.NoError(t, err)
	for _, want := range []string{
		"msg=run.start ", "msg=permission.completed ", "approved=true",
		"msg=tool.execution_complete ", "tool=edit_file", "status=ok", "msg=run.end ",
	} {
		assert.Contains(t, string(logged), want)
	}
}

// TestScriptedNeedsTheBuiltInProject: with no model configured, the
// command refuses a project of the user's, and leaves it alone.
func TestScriptedNeedsTheBuiltInProject(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644))
	var out, errOut bytes.Buffer
	_, err := run(t.Context(), []string{"-dir", dir}, strings.NewReader(""), &out, &errOut, env())
	require.Error(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}

// TestCompatibleServer points the command at an OpenAI-compatible server
// on loopback whose model edits a file of the user's project. With no
// terminal to ask, the edit is refused unless -yes approves it.
func TestCompatibleServer(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		want    string
		refused bool
	}{
		{name: "no terminal", want: "draft\n", refused: true},
		{name: "-yes", flags: []string{"-yes"}, want: "final\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &fakeAPI{}
			srv := httptest.NewServer(api)
			defer srv.Close()
			dir := t.TempDir()
			notes := filepath.Join(dir, "notes.txt")
			require.NoError(t, os.WriteFile(notes, []byte("draft\n"), 0o644))

			var out, errOut bytes.Buffer
			args := append([]string{"-dir", dir, "-model", "test-model"}, tt.flags...)
			res, err := run(t.Context(), append(args, "Mark the notes final."), strings.NewReader(""), &out, &errOut,
				env("OPENAI_BASE_URL", srv.URL+"/v1", "OPENAI_API_KEY", "sk-test"))
			require.NoError(t, err, "stderr: %s", errOut.String())
			looptest.AssertValid(t, res.Messages)
			r := looptest.Results(res.Messages)["call_1"]
			require.NotNil(t, r)
			if tt.refused {
				require.True(t, r.IsError())
				assert.Equal(t, toolloop.KindDenied, r.Error.Kind)
				assert.Contains(t, out.String(), "no terminal to ask")
			} else {
				assert.False(t, r.IsError(), r.Text())
			}
			got, err := os.ReadFile(notes)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))

			reqs := api.requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, "test-model", reqs[0].Model)
			var tools []string
			for _, tl := range reqs[0].Tools {
				tools = append(tools, tl.Function.Name)
			}
			assert.Subset(t, tools, []string{"go_outline", "read_file", "edit_file", "exec_shell"})
		})
	}
}

// chatRequest is what the test reads of a Chat Completions request.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// fakeAPI is a Chat Completions server whose model asks for one edit and
// then, given its result, answers.
type fakeAPI struct {
	mu   sync.Mutex
	reqs []chatRequest
}

func (f *fakeAPI) requests() []chatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	delta := `{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"edit_file",` +
		`"arguments":"{\"path\":\"notes.txt\",\"edits\":[{\"old_string\":\"draft\",\"new_string\":\"final\"}]}"}}]}`
	finish := "tool_calls"
	if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
		delta, finish = `{"role":"assistant","content":"Done."}`, "stop"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"test-model\",\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta)
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"test-model\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\n", finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}
