package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// script1 reads a file, writes one and answers.
const script1 = `[
 {"role":"user","content":[{"type":"text","text":"go"}]},
 {"role":"assistant","content":[{"type":"text","text":"Reading first."}],"tool_calls":[
   {"id":"c1","name":"read_file","arguments":{"path":"a.txt"}},
   {"id":"c2","name":"write_file","arguments":{"path":"b.txt","content":"new\n"}}]},
 {"role":"assistant","content":[{"type":"text","text":"All done here."}]}
]`

func TestUsageAndHelp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no args", nil, exitUsage, "", "Exit codes:"},
		{"help", []string{"help"}, exitOK, "Exit codes:", ""},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{"flag help", []string{"run", "-h"}, exitOK, "", "Usage: toolloop run"},
		{"bad flag", []string{"tools", "-nope"}, exitUsage, "", "flag provided but not defined"},
		{"unknown provider", []string{"run", "-provider", "foo", "hi"}, exitUsage, "", `unknown provider "foo"`},
		{"no model", []string{"run", "hi"}, exitUsage, "", "set OPENAI_API_KEY"},
		{"missing key", []string{"run", "-provider", "anthropic", "hi"}, exitUsage, "", "needs ANTHROPIC_API_KEY"},
		{"compatible needs url", []string{"run", "-provider", "openai-compatible", "hi"}, exitUsage, "", "-base-url"},
		{"script missing", []string{"run", "-script", "nope.json", "hi"}, exitUsage, "", "reading the script"},
		{"resume without log", []string{"resume"}, exitUsage, "", "which log?"},
		{"sessions help", []string{"sessions", "-h"}, exitOK, "", "Usage: toolloop sessions"},
		{"run -session help", []string{"run", "-h"}, exitOK, "", "-session NAME"},
		{"test without -o", []string{"test", "x.jsonl"}, exitUsage, "", "-o FILE is required"},
		{"call without name", []string{"call"}, exitUsage, "", "which tool?"},
		{"tools extra arg", []string{"tools", "x"}, exitUsage, "", "unexpected argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t, "")
			assert.Equal(t, tc.code, te.run(t, tc.args...))
			assert.Contains(t, te.out.String(), tc.stdout)
			assert.Contains(t, te.errOut.String(), tc.stderr)
		})
	}
}

func TestParseFlagsInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  []string
		o    string
	}{
		{[]string{"log", "-o", "x.json"}, []string{"log"}, "x.json"},
		{[]string{"-o", "x.json", "log", "more"}, []string{"log", "more"}, "x.json"},
		{[]string{"-o", "x.json", "--", "-log"}, []string{"-log"}, "x.json"},
		{nil, nil, ""},
	} {
		te := newTestEnv(t, "")
		fs := newFlagSet(te.env, "t", "")
		o := fs.String("o", "", "")
		pos, err := parseFlags(fs, tc.args)
		require.NoError(t, err)
		assert.Equal(t, tc.pos, pos)
		assert.Equal(t, tc.o, *o)
	}
}

func TestPickModel(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	for _, tc := range []struct {
		name string
		m    modelFlags
		vars map[string]string
		want string // prefix of the name; "" for an error
	}{
		{"openai from env", modelFlags{}, map[string]string{"OPENAI_API_KEY": key}, "openai gpt"},
		{"anthropic from env", modelFlags{}, map[string]string{"ANTHROPIC_API_KEY": key}, "anthropic claude"},
		{"gemini from google key", modelFlags{}, map[string]string{"GOOGLE_API_KEY": key}, "gemini gemini"},
		{"model flag", modelFlags{provider: "openai", model: "o4"}, map[string]string{"OPENAI_API_KEY": key}, "openai o4"},
		{"compatible", modelFlags{baseURL: "http://127.0.0.1:1/v1", model: "llama"}, nil, "openai-compatible llama at"},
		{"compatible hides a password", modelFlags{baseURL: "http://me:hunter2-secret@127.0.0.1:1/v1", model: "llama"}, nil, "openai-compatible llama at http://me:xxxxx@"},
		{"compatible without model", modelFlags{baseURL: "http://127.0.0.1:1/v1"}, nil, ""},
		{"gemini without key", modelFlags{provider: "gemini"}, nil, ""},
		{"nothing", modelFlags{}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, name, err := pickModel(tc.m, func(k string) string { return tc.vars[k] })
			if tc.want == "" {
				var ue *usageError
				require.ErrorAs(t, err, &ue)
				assert.NotContains(t, err.Error(), key)
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, m)
			assert.True(t, strings.HasPrefix(name, tc.want), name)
			assert.NotContains(t, name, key, "a key is never shown")
			assert.NotContains(t, name, "hunter2-secret")
		})
	}
}

func TestScriptModel(t *testing.T) {
	dir := t.TempDir()
	sm, err := loadScript(writeFile(t, dir, "s.json", script1))
	require.NoError(t, err)
	req := &toolloop.Request{Messages: []toolloop.Message{toolloop.UserMessage("go")}}
	var text strings.Builder
	var last *toolloop.Response
	chunks := 0
	for c, err := range sm.Stream(t.Context(), req) {
		require.NoError(t, err)
		text.WriteString(c.Text)
		if c.Response != nil {
			last = c.Response
		} else {
			chunks++
		}
	}
	assert.Equal(t, "Reading first.", text.String())
	assert.Equal(t, 2, chunks, "the text streams word by word")
	require.NotNil(t, last)
	assert.Len(t, last.Message.ToolCalls, 2)

	// The reply follows the number of assistant messages in the request.
	req.Messages = append(req.Messages, last.Message)
	resp, err := sm.Generate(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, "All done here.", resp.Message.Text())
	req.Messages = append(req.Messages, resp.Message)
	_, err = sm.Generate(t.Context(), req)
	require.ErrorIs(t, err, errScriptEnded)

	for name, content := range map[string]string{"bad.json": "{", "empty.json": `[{"role":"user","content":[{"type":"text","text":"x"}]}]`} {
		_, err := loadScript(writeFile(t, dir, name, content))
		var ue *usageError
		require.ErrorAs(t, err, &ue, name)
	}
}

// TestRunOneShot runs a script without a terminal: the write pauses the
// run (exit 3), resume -yes finishes it, and a second resume finds nothing
// to do.
func TestRunOneShot(t *testing.T) {
	te := newTestEnv(t, "")
	ws := te.dir
	writeFile(t, ws, "a.txt", "hello\n")
	script := writeFile(t, t.TempDir(), "s.json", script1)
	log := filepath.Join(t.TempDir(), "run.jsonl")

	require.Equal(t, exitPaused, te.run(t, "run", "-script", script, "-log", log, "go"), te.errOut.String())
	assert.Contains(t, te.out.String(), "Reading first.")
	assert.Contains(t, te.out.String(), "✓ read_file path=a.txt → hello")
	assert.Contains(t, te.errOut.String(), "toolloop resume "+log)
	assert.NoFileExists(t, filepath.Join(ws, "b.txt"))
	rp, err := eventlog.ReadFile(log)
	require.NoError(t, err)
	require.NotNil(t, rp.Paused)

	te2 := newTestEnv(t, "")
	te2.dir = ws
	assert.Equal(t, exitUsage, te2.run(t, "resume", "-script", script, log), "no terminal and no -yes")
	assert.Contains(t, te2.errOut.String(), "with -yes")

	te3 := newTestEnv(t, "")
	te3.dir = ws
	require.Equal(t, exitOK, te3.run(t, "resume", "-yes", "-script", script, log), te3.errOut.String())
	assert.Contains(t, te3.out.String(), "All done here.")
	b, err := os.ReadFile(filepath.Join(ws, "b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(b))

	te4 := newTestEnv(t, "")
	te4.dir = ws
	assert.Equal(t, exitUsage, te4.run(t, "resume", "-yes", "-script", script, log))
	assert.Contains(t, te4.errOut.String(), "nothing to resume")

	rp, err = eventlog.ReadFile(log)
	require.NoError(t, err)
	assert.True(t, rp.Ended)
	assert.Nil(t, rp.Paused)
	require.NoError(t, looptest.Validate(rp.Transcript()))
	assert.Len(t, rp.Completed, 2, "each call ran once")
}

// TestRunDefaultLog: with no -log the run goes to .toolloop/runs/RUN.jsonl
// in the workspace, and the prompt can come on stdin.
func TestRunDefaultLog(t *testing.T) {
	te := newTestEnv(t, "go\n")
	writeFile(t, te.dir, "a.txt", "hello\n")
	script := writeFile(t, t.TempDir(), "s.json", script1)
	require.Equal(t, exitOK, te.run(t, "run", "-yes", "-script", script), te.errOut.String())
	logs, err := filepath.Glob(filepath.Join(te.dir, ".toolloop", "runs", "run_*.jsonl"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	st, err := os.Stat(logs[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the log is its owner's only")
	rp, err := eventlog.ReadFile(logs[0])
	require.NoError(t, err)
	msgs := rp.Transcript()
	assert.Equal(t, "go", msgs[1].Text(), "the prompt came from stdin")
}

// TestSecretsStayOut: a key in the environment that a tool's output
// holds reaches neither the screen nor the log.
func TestSecretsStayOut(t *testing.T) {
	const key = "sk-proj-Zq9XvW3u5T7r1P0o2N4m6L8k"
	te := newTestEnv(t, "")
	te.vars["OPENAI_API_KEY"] = key
	writeFile(t, te.dir, "a.txt", "OPENAI_API_KEY="+key+"\n")
	script := writeFile(t, t.TempDir(), "s.json", `[
 {"role":"assistant","tool_calls":[{"id":"c1","name":"read_file","arguments":{"path":"a.txt"}}]},
 {"role":"assistant","content":[{"type":"text","text":"ok"}]}]`)
	log := filepath.Join(t.TempDir(), "run.jsonl")
	require.Equal(t, exitOK, te.run(t, "run", "-provider", "script", "-script", script, "-log", log, "show me"), te.errOut.String())
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.NotContains(t, string(b), key)
	assert.Contains(t, string(b), "REDACTED")
	assert.NotContains(t, te.out.String(), key)
	assert.NotContains(t, te.errOut.String(), key)
}

func TestLogLocked(t *testing.T) {
	log := filepath.Join(t.TempDir(), "run.jsonl")
	unlock, err := lockLog(log)
	require.NoError(t, err)
	_, err = lockLog(log)
	require.ErrorIs(t, err, errLocked)

	te := newTestEnv(t, "")
	script := writeFile(t, t.TempDir(), "s.json", script1)
	assert.Equal(t, exitUsage, te.run(t, "run", "-script", script, "-log", log, "go"))
	assert.Contains(t, te.errOut.String(), "another toolloop process has the log open")
	unlock()
	again, err := lockLog(log)
	require.NoError(t, err)
	again()
}

func TestTools(t *testing.T) {
	te := newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "tools", "-json"), te.errOut.String())
	var got struct {
		Tools []toolJSON `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(te.out.Bytes(), &got))
	byName := map[string]toolJSON{}
	for _, ti := range got.Tools {
		byName[ti.Name] = ti
	}
	require.Contains(t, byName, "read_file")
	rf := byName["read_file"]
	assert.Equal(t, toolloop.SourceKind("builtin"), rf.Source)
	assert.Equal(t, "workspace", rf.SourceName)
	assert.True(t, rf.Annotations.ReadOnly)
	assert.True(t, json.Valid(rf.InputSchema))
	assert.True(t, byName["write_file"].Annotations.Destructive)

	te = newTestEnv(t, "")
	require.Equal(t, exitOK, te.run(t, "tools"))
	assert.Contains(t, te.out.String(), "read_file  [builtin/workspace] read-only")
	assert.Contains(t, te.out.String(), "schema: {")
}

func TestToolsBadInput(t *testing.T) {
	for name, cfg := range map[string]string{
		"not json":       `{"mcpServers": `,
		"no command":     `{"mcpServers": {"x": {"args": ["a"]}}}`,
		"unset variable": `{"mcpServers": {"x": {"command": "${TOOLLOOP_SURELY_UNSET_VAR}"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			te := newTestEnv(t, "")
			p := writeFile(t, t.TempDir(), "mcp.json", cfg)
			assert.Equal(t, exitUsage, te.run(t, "tools", "-mcp", p))
			assert.Contains(t, te.errOut.String(), "the MCP config")
		})
	}
	te := newTestEnv(t, "")
	assert.Equal(t, exitUsage, te.run(t, "tools", "-mcp", filepath.Join(t.TempDir(), "none.json")))

	// A server that does not start is reported and left out; the rest
	// are listed.
	te = newTestEnv(t, "")
	p := writeFile(t, t.TempDir(), "mcp.json", `{"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}}}`)
	assert.Equal(t, exitOK, te.run(t, "tools", "-mcp", p))
	assert.Contains(t, te.errOut.String(), "some MCP servers are left out")
	assert.Contains(t, te.out.String(), "read_file")

	te = newTestEnv(t, "")
	assert.Equal(t, exitUsage, te.run(t, "tools", "-C", filepath.Join(t.TempDir(), "none")))
	assert.Contains(t, te.errOut.String(), "is not a directory")
}

func TestCall(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		te := newTestEnv(t, "")
		writeFile(t, te.dir, "a.txt", "hello\n")
		require.Equal(t, exitOK, te.run(t, "call", "read_file", `{"path":"a.txt"}`), te.errOut.String())
		assert.Equal(t, "hello\n\n", te.out.String())
		assert.Contains(t, te.errOut.String(), "✓ read_file")
	})
	t.Run("json", func(t *testing.T) {
		te := newTestEnv(t, "")
		writeFile(t, te.dir, "a.txt", "hello\n")
		require.Equal(t, exitOK, te.run(t, "call", "-json", "read_file", `{"path":"a.txt"}`))
		var res toolloop.ToolResult
		require.NoError(t, json.Unmarshal(te.out.Bytes(), &res))
		assert.Equal(t, toolloop.StatusOK, res.Status)
		assert.Equal(t, "hello\n", res.Text())
	})
	t.Run("needs approval", func(t *testing.T) {
		te := newTestEnv(t, "")
		assert.Equal(t, exitUsage, te.run(t, "call", "write_file", `{"path":"b.txt","content":"x"}`))
		assert.Contains(t, te.errOut.String(), "needs approval")
		assert.NoFileExists(t, filepath.Join(te.dir, "b.txt"))
	})
	t.Run("yes", func(t *testing.T) {
		te := newTestEnv(t, "")
		require.Equal(t, exitOK, te.run(t, "call", "-yes", "write_file", `{"path":"b.txt","content":"x"}`))
		assert.FileExists(t, filepath.Join(te.dir, "b.txt"))
	})
	t.Run("answered at the terminal", func(t *testing.T) {
		te := newTestEnv(t, "n\n")
		te.tty = true
		assert.Equal(t, exitFailed, te.run(t, "call", "write_file", `{"path":"b.txt","content":"x"}`))
		assert.Contains(t, te.errOut.String(), "run it? [y]es, [n]o, [e]dit")
		assert.Contains(t, te.out.String(), "declined")
		assert.NoFileExists(t, filepath.Join(te.dir, "b.txt"))
	})
	t.Run("guard denies", func(t *testing.T) {
		te := newTestEnv(t, "")
		assert.Equal(t, exitFailed, te.run(t, "call", "-yes", "exec_shell", `{"command":"rm -rf /"}`))
		assert.Contains(t, te.errOut.String(), "denied")
		// In words, not as the rule's regular expression.
		assert.Contains(t, te.out.String(), "`rm -rf /` deletes the root folder or the home folder")
		assert.NotContains(t, te.out.String()+te.errOut.String(), `\s`)
	})
	t.Run("tool fails", func(t *testing.T) {
		te := newTestEnv(t, "")
		assert.Equal(t, exitFailed, te.run(t, "call", "read_file", `{"path":"missing.txt"}`))
	})
	t.Run("schema", func(t *testing.T) {
		te := newTestEnv(t, "")
		assert.Equal(t, exitFailed, te.run(t, "call", "read_file", `{"path":3}`))
		assert.Contains(t, te.errOut.String(), "invalid_args")
	})
	for name, args := range map[string][]string{
		"unknown tool": {"call", "read_fil", "{}"},
		"bad json":     {"call", "read_file", "{x"},
		"not object":   {"call", "read_file", "[1]"},
		"too many":     {"call", "read_file", "{}", "{}"},
	} {
		t.Run(name, func(t *testing.T) {
			te := newTestEnv(t, "")
			assert.Equal(t, exitUsage, te.run(t, args...))
		})
	}
	te := newTestEnv(t, "")
	te.run(t, "call", "read_fil", "{}")
	assert.Contains(t, te.errOut.String(), "did you mean read_file?")
}
