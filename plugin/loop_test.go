package plugin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// TestPipeline runs plugin tools through an AgentLoop: they are
// validated, guarded, hooked and truncated like any tool, and their
// progress arrives as the loop's events with the plugin as provenance.
func TestPipeline(t *testing.T) {
	src := newSample(t, Config{})
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))

	calls := []toolloop.ToolCall{
		looptest.Call("ok", "echo", `{"text":"hi"}`),
		looptest.Call("badargs", "echo", `{"text":5}`),
		looptest.Call("unknown", "echo", `{"text":"hi","extra":1}`),
		looptest.Call("denied", "echo", `{"text":"secret"}`),
		looptest.Call("panic", "boom", `{}`),
		looptest.Call("kind", "fail", `{"kind":"denied","message":"not here"}`),
		looptest.Call("big", "big", `{"bytes":5000}`),
		looptest.Call("slow", "slow", `{"steps":3,"delay_ms":1}`),
		looptest.Call("hook", "add", `{"a":1,"b":2}`),
	}
	var ran atomic.Int32 // calls the pre-hook let through
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{
		Model: looptest.NewModel(t, looptest.Turn{Reply: looptest.Calls(calls...)}, looptest.Turn{Reply: looptest.Text("done")}),
		Tools: &reg,
		Guard: toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			if c.Source == toolloop.SourcePlugin && strings.Contains(string(c.Arguments), "secret") {
				return toolloop.Verdict{Decision: toolloop.Deny, Reason: "no secrets to plugins"}
			}
			return toolloop.Verdict{Decision: toolloop.Allow}
		}),
		Hooks: toolloop.Hooks{
			PreToolUse: []toolloop.PreToolUseHook{func(context.Context, *toolloop.Call) (toolloop.PreToolUse, error) {
				ran.Add(1)
				return toolloop.PreToolUse{}, nil
			}},
			PostToolUse: []toolloop.PostToolUseHook{func(_ context.Context, c *toolloop.Call, res *toolloop.ToolResult) (*toolloop.ToolResult, error) {
				if c.Name == "add" {
					return toolloop.TextResult("sum=" + res.Text()), nil
				}
				return nil, nil
			}},
		},
		OnEvent: rec.Record, Limits: toolloop.Limits{MaxResultBytes: 1000},
	}
	out, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	looptest.AssertValid(t, out.Messages)
	results := looptest.Results(out.Messages)

	tests := []struct {
		id       string
		wantKind toolloop.ErrorKind
		check    func(t *testing.T, r *toolloop.ToolResult)
	}{
		{id: "ok", check: func(t *testing.T, r *toolloop.ToolResult) { assert.Equal(t, "plugin: hi", r.Text()) }},
		{id: "badargs", wantKind: toolloop.KindInvalidArgs},
		{id: "unknown", wantKind: toolloop.KindInvalidArgs},
		{id: "denied", wantKind: toolloop.KindDenied},
		{id: "panic", wantKind: toolloop.KindPanic, check: func(t *testing.T, r *toolloop.ToolResult) {
			done := rec.ForCall("panic")
			require.NotEmpty(t, done)
			stack := done[len(done)-1].Stack
			assert.Contains(t, stack, "main.main", "the plugin's stack reaches the completion event")
			assert.NotContains(t, r.Text(), "main.main", "but not the model")
		}},
		{id: "kind", wantKind: toolloop.KindDenied},
		{id: "big", check: func(t *testing.T, r *toolloop.ToolResult) {
			assert.True(t, r.Meta.Truncated)
			assert.Equal(t, 5000, r.Meta.Bytes)
			assert.LessOrEqual(t, len(r.Text()), 1000)
			assert.True(t, strings.HasSuffix(r.Text(), " END"), "the tail is kept")
		}},
		{id: "slow", check: func(t *testing.T, r *toolloop.ToolResult) { assert.Equal(t, "3 steps done", r.Text()) }},
		{id: "hook", check: func(t *testing.T, r *toolloop.ToolResult) { assert.Equal(t, "sum=3", r.Text()) }},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r := results[tt.id]
			require.NotNil(t, r)
			assert.Equal(t, toolloop.SourcePlugin, r.Meta.Source)
			assert.Equal(t, "sample", r.Meta.SourceName)
			if tt.wantKind == "" {
				require.Nil(t, r.Error, "%+v", r.Error)
			} else {
				require.NotNil(t, r.Error)
				assert.Equal(t, tt.wantKind, r.Error.Kind, r.Error.Message)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
	// The invalid and denied calls never reached the pre-hook (nor the
	// plugin); the six others did.
	assert.EqualValues(t, 6, ran.Load())

	// Progress and partial output from inside the plugin, in order, with
	// the plugin as provenance, between the call's start and completion.
	// Reports made while one is on its way are coalesced: the partial
	// output arrives whole but perhaps in fewer pieces, and progress
	// perhaps without its intermediate steps.
	var types []toolloop.EventType
	var partial []string
	for _, e := range rec.ForCall("slow") {
		types = append(types, e.Type)
		if e.Type == toolloop.EventProgress || e.Type == toolloop.EventPartialResult {
			assert.Equal(t, toolloop.SourcePlugin, e.Source)
			assert.Equal(t, "sample", e.SourceName)
		}
		if e.Type == toolloop.EventPartialResult {
			partial = append(partial, e.Text)
		}
	}
	assert.Equal(t, "line 1\nline 2\nline 3\n", strings.Join(partial, ""))
	prog := rec.Of(toolloop.EventProgress)
	require.NotEmpty(t, prog)
	assert.LessOrEqual(t, len(prog), 3)
	for i := 1; i < len(prog); i++ {
		assert.Less(t, prog[i-1].Progress.Done, prog[i].Progress.Done, "progress arrives in order")
	}
	assert.Equal(t, toolloop.Progress{Message: "step 3", Done: 3, Total: 3}, *prog[len(prog)-1].Progress)
	require.NotEmpty(t, types)
	assert.Equal(t, toolloop.EventStart, types[0])
	assert.Equal(t, toolloop.EventComplete, types[len(types)-1])
}

func TestTimeoutThroughLoop(t *testing.T) {
	src := newSample(t, Config{})
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	marker := filepath.Join(t.TempDir(), "m")
	args, err := json.Marshal(map[string]string{"marker": marker})
	require.NoError(t, err)

	loop := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("h", "hang", string(args)))},
			looptest.Turn{Reply: looptest.Text("done")}),
		Tools: &reg, Limits: toolloop.Limits{ToolTimeout: 200 * time.Millisecond},
	}
	out, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	r := looptest.Results(out.Messages)["h"]
	require.NotNil(t, r.Error)
	assert.Equal(t, toolloop.KindTimeout, r.Error.Kind)
	require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, 10*time.Second, 10*time.Millisecond)
}

func TestBuiltinShadowsPlugin(t *testing.T) {
	src := newSample(t, Config{})
	reg := toolloop.ToolRegistry{AllowShadowing: true}
	reg.MustRegister(toolloop.NewTool("echo", "Built-in echo.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (any, error) {
		return "builtin: " + in.Text, nil
	}))
	require.NoError(t, reg.AddSource(context.Background(), src))

	tool, ok := reg.Lookup(context.Background(), "echo")
	require.True(t, ok)
	res, err := tool.Run(context.Background(), &toolloop.Call{ID: "1", Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	require.NoError(t, err)
	assert.Equal(t, "builtin: x", res.Text())
	assert.Equal(t, []toolloop.Shadowing{{Name: "echo", Winner: "local:local", Loser: "plugin:sample"}}, reg.Shadowed())

	// The plugin's other tools resolve to it.
	tool, ok = reg.Lookup(context.Background(), "add")
	require.True(t, ok)
	res, err = tool.Run(context.Background(), &toolloop.Call{ID: "2", Name: "add", Arguments: json.RawMessage(`{"a":1,"b":1}`)})
	require.NoError(t, err)
	assert.Equal(t, "2", res.Text())
}

func TestHandshake(t *testing.T) {
	sample := samplePath(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	tests := []struct {
		name          string
		cfg           Config
		wantHandshake bool
	}{
		{name: "not a plugin", cfg: Config{Command: sh, Args: []string{"-c", "echo hello"}}, wantHandshake: true},
		{name: "exits at once", cfg: Config{Command: sh, Args: []string{"-c", "exit 2"}}, wantHandshake: true},
		{name: "silent", cfg: Config{Command: sh, Args: []string{"-c", "exec sleep 30"}, StartTimeout: 300 * time.Millisecond}, wantHandshake: true},
		{name: "other protocol version", cfg: Config{Command: sample, Env: []string{"SAMPLE_FOREIGN=1"}}, wantHandshake: true},
		{name: "missing binary", cfg: Config{Command: filepath.Join(t.TempDir(), "nope")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := New(tt.cfg)
			defer src.Close()
			var reg toolloop.ToolRegistry
			err := reg.AddSource(context.Background(), src)
			require.Error(t, err)
			assert.Equal(t, tt.wantHandshake, errors.Is(err, ErrHandshake), "%v", err)
			assert.Contains(t, err.Error(), tt.cfg.Command, "the error names the binary")
			assert.Empty(t, reg.Specs(context.Background()))
		})
	}
}

func TestCloseLeavesNoOrphan(t *testing.T) {
	src := newSample(t, Config{})
	pid := src.pid()
	require.NotZero(t, pid)
	require.False(t, processGone(pid))

	require.NoError(t, src.Close())
	assert.True(t, processGone(pid), "the plugin process outlived Close")
	require.NoError(t, src.Close(), "Close is idempotent")

	_, err := src.Tools(context.Background())
	assert.ErrorIs(t, err, ErrClosed)
	res, err := (&remoteTool{src: src, spec: toolloop.ToolSpec{Name: "echo"}}).Run(context.Background(),
		&toolloop.Call{ID: "x", Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	assert.Equal(t, toolloop.KindExecutionFailed, kindOf(res, err))
}

func TestCloseDuringCall(t *testing.T) {
	src := newSample(t, Config{})
	pid := src.pid()
	tools, err := src.Tools(context.Background())
	require.NoError(t, err)
	stuck := find(t, tools, "stuck")
	errc := make(chan error, 1)
	go func() {
		_, err := stuck.Run(context.Background(), &toolloop.Call{ID: "s", Name: "stuck", Arguments: json.RawMessage(`{}`)})
		errc <- err
	}()
	require.Eventually(t, func() bool { return src.tokens.Load() > 0 }, 10*time.Second, time.Millisecond)
	require.NoError(t, src.Close())
	assert.True(t, processGone(pid))
	err = <-errc
	assert.Equal(t, toolloop.KindExecutionFailed, kindOf(nil, err), "%v", err)
}

func TestHostDeathLeavesNoOrphan(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a host process")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	host := exec.Command(exe, "-test.run=^$")
	host.Env = append(os.Environ(), hostEnv+"="+samplePath(t))
	stdout, err := host.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, host.Start())
	pid := readPID(t, bufio.NewScanner(stdout))
	require.False(t, processGone(pid))

	require.NoError(t, host.Process.Kill()) // no Close: the host just dies
	_ = host.Wait()
	require.Eventually(t, func() bool { return processGone(pid) }, 10*time.Second, 10*time.Millisecond,
		"the plugin outlived its host")
}

// TestBackgroundJob runs a plugin tool as a background job: its spec's
// Background crosses the process boundary, the plugin sees the job's
// ID, and its partial output is the job's.
func TestBackgroundJob(t *testing.T) {
	src := newSample(t, Config{})
	var reg toolloop.ToolRegistry
	require.NoError(t, reg.AddSource(context.Background(), src))
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{
		Model: looptest.NewModel(t,
			looptest.Turn{Reply: looptest.Calls(looptest.Call("s", "slow", `{"steps":3,"delay_ms":20,"background":true}`))},
			looptest.Turn{Reply: looptest.Calls(looptest.Call("w", toolloop.JobWaitName, `{"job":"job_1","timeout_seconds":30}`))},
			looptest.Turn{Reply: looptest.Calls(looptest.Call("o", toolloop.JobOutputName, `{"job":"job_1"}`))},
			looptest.Turn{Reply: looptest.Text("done")}),
		Tools: &reg, OnEvent: rec.Record,
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	require.Len(t, res.Jobs, 1)
	assert.Equal(t, toolloop.JobOK, res.Jobs[0].Status)
	assert.Equal(t, "3 steps done as job_1", res.Jobs[0].Result.Text())
	var out string
	for _, m := range res.Messages {
		if m.Result != nil && m.Result.Name == toolloop.JobOutputName {
			out = m.Result.Text()
		}
	}
	assert.Contains(t, out, "line 1\nline 2\nline 3\n")
}
