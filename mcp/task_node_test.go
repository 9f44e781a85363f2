package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// tsTasks is what tasks_client.mjs saw.
type tsTasks struct {
	Capability struct {
		List     map[string]any `json:"list"`
		Cancel   map[string]any `json:"cancel"`
		Requests struct {
			Tools struct {
				Call map[string]any `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	} `json:"capability"`
	Execution map[string]*string `json:"execution"`
	Stream    struct {
		Types    []string `json:"types"`
		Statuses []string `json:"statuses"`
		Messages []string `json:"messages"`
		TaskID   string   `json:"taskId"`
		Result   tsCall   `json:"result"`
		Error    string   `json:"error"`
	} `json:"stream"`
	Fail struct {
		Status        string `json:"status"`
		StatusMessage string `json:"statusMessage"`
		Result        tsCall `json:"result"`
	} `json:"fail"`
	Cancel struct {
		ID      string `json:"id"`
		Running struct {
			Status        string `json:"status"`
			StatusMessage string `json:"statusMessage"`
		} `json:"running"`
		Canceled string `json:"canceled"`
		After    string `json:"after"`
		Counts   struct {
			Canceled int `json:"canceled"`
		} `json:"counts"`
		Again tsCall `json:"again"`
	} `json:"cancel"`
	List []struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	} `json:"list"`
	Forbidden, UnknownTask, Plain tsCall
}

func runTSTasks(t *testing.T, node string, args ...string) tsTasks {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	script := filepath.Join("testdata", "npm", "tasks_client.mjs")
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), taskFixtureEnv+"=stdio", "GORACE=atexit_sleep_ms=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "tasks_client.mjs failed; stderr:\n%s", stderr.String())
	var run tsTasks
	require.NoError(t, json.Unmarshal(out, &run), "output: %s\nstderr:\n%s", out, stderr.String())
	return run
}

// TestServeTasksTypeScript drives mcp.Serve's tasks with the official
// TypeScript SDK's client (its experimental tasks API: callToolStream,
// getTask, getTaskResult, cancelTask, listTasks), over stdio and
// streamable HTTP.
func TestServeTasksTypeScript(t *testing.T) {
	node := nodeForConformance(t)
	check := func(t *testing.T, run tsTasks) {
		assert.NotNil(t, run.Capability.Requests.Tools.Call, "capabilities.tasks.requests.tools.call")
		assert.NotNil(t, run.Capability.Cancel)
		assert.NotNil(t, run.Capability.List)
		require.NotNil(t, run.Execution["job"])
		assert.Equal(t, "optional", *run.Execution["job"])
		assert.Nil(t, run.Execution["echo"], "a tool without Background has no execution")

		// The client made the call a task of its own accord.
		s := run.Stream
		require.Empty(t, s.Error)
		require.NotEmpty(t, s.Types)
		assert.Equal(t, "taskCreated", s.Types[0])
		assert.Equal(t, "result", s.Types[len(s.Types)-1])
		assert.Equal(t, "completed", s.Statuses[len(s.Statuses)-1])
		assert.Equal(t, "done after 4 steps", s.Result.text())
		assert.NotEmpty(t, s.Messages, "the job's output is the task's statusMessage")
		for _, m := range s.Messages {
			assert.True(t, strings.HasPrefix(m, "line "), m)
		}

		assert.Equal(t, "failed", run.Fail.Status)
		assert.Equal(t, "the job failed", run.Fail.StatusMessage)
		assert.True(t, run.Fail.Result.IsError)
		assert.Equal(t, "execution_failed", run.Fail.Result.Meta["toolloop/kind"])

		c := run.Cancel
		assert.Equal(t, "working", c.Running.Status)
		assert.Equal(t, "line 1", c.Running.StatusMessage)
		assert.Equal(t, "cancelled", c.Canceled)
		assert.Equal(t, "cancelled", c.After)
		assert.Equal(t, 1, c.Counts.Canceled, "the tool saw its cancellation before tasks/cancel was answered")
		require.NotNil(t, c.Again.Code, "a second cancel is refused")
		assert.Equal(t, -32602, *c.Again.Code)

		ids := map[string]string{}
		for _, x := range run.List {
			ids[x.TaskID] = x.Status
		}
		assert.Len(t, ids, 3)
		assert.Equal(t, "completed", ids[s.TaskID])
		assert.Equal(t, "cancelled", ids[c.ID])

		assert.True(t, run.Forbidden.Thrown)
		assert.Contains(t, run.Forbidden.Message, "does not run as a task")
		assert.True(t, run.UnknownTask.Thrown)
		assert.Equal(t, "echo: hi", run.Plain.text())
	}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		check(t, runTSTasks(t, node, "--stdio", os.Args[0]))
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		f := newTaskFixture()
		srv, err := mcp.NewServer(f.loop, nil)
		require.NoError(t, err)
		defer func() { require.NoError(t, srv.Close()) }()
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		check(t, runTSTasks(t, node, "--url", hs.URL))
		assert.Equal(t, int64(1), f.canceled.Load())
	})
}

// tsTaskServer runs tasks_server.mjs over kind ("stdio" or "http") and
// returns a source for it.
func tsTaskServer(t *testing.T, node, kind string) *mcp.Source {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "npm", "tasks_server.mjs"))
	require.NoError(t, err)
	var cfg mcp.ServerConfig
	switch kind {
	case "stdio":
		cfg = mcp.ServerConfig{Command: node, Args: []string{script, "--stdio"}}
	case "http":
		cmd := exec.Command(node, script, "--http")
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			_ = stdin.Close() // the server exits when its stdin closes
			_ = cmd.Wait()
		})
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		cfg = mcp.ServerConfig{URL: strings.TrimSpace(line)}
	}
	src, err := mcp.New("ts", cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	return src
}

// tsStats asks the TypeScript server what it saw.
func tsStats(t *testing.T, src *mcp.Source) (created, cancelSeen int) {
	t.Helper()
	res, err := taskTool(t, src, "stats").Run(context.Background(), &toolloop.Call{Name: "ts__stats", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	var s struct{ Created, CancelSeen int }
	require.NoError(t, json.Unmarshal([]byte(res.Text()), &s), res.Text())
	return s.Created, s.CancelSeen
}

// TestTasksTypeScriptServer runs toolloop's client against a server on
// the official TypeScript SDK's tasks (tasks_server.mjs), over stdio and
// streamable HTTP: a task tool run as a background job, its status
// messages as the job's output, its result, its failure, and its
// cancellation, which the server's task must see.
func TestTasksTypeScriptServer(t *testing.T) {
	node := nodeForConformance(t)
	for _, kind := range []string{"stdio", "http"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			src := tsTaskServer(t, node, kind)
			countdown := taskTool(t, src, "countdown")
			assert.True(t, countdown.Spec().Background, "a tool with taskSupport optional may run in the background")
			assert.False(t, taskTool(t, src, "echo").Spec().Background)

			t.Run("result", func(t *testing.T) {
				rec := &recorder{}
				res, err := runJob(context.Background(), countdown, rec, `{"steps":3}`)
				require.NoError(t, err)
				assert.Equal(t, "done after 3 steps", res.Text())
				assert.NotEmpty(t, res.Meta.Extra["mcp_task"])
				assert.Contains(t, rec.output(), "step ")
				rec.mu.Lock()
				assert.NotEmpty(t, rec.progress, "status messages are reported as progress too")
				rec.mu.Unlock()
			})

			t.Run("fail", func(t *testing.T) {
				res, err := runJob(context.Background(), countdown, &recorder{}, `{"steps":1,"fail":true}`)
				require.NoError(t, err)
				require.True(t, res.IsError())
				assert.Equal(t, toolloop.KindExecutionFailed, res.Error.Kind)
				assert.Contains(t, res.Text(), "the countdown failed")
			})

			t.Run("cancel", func(t *testing.T) {
				_, before := tsStats(t, src)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				rec := &recorder{}
				done := make(chan error, 1)
				go func() {
					_, err := runJob(ctx, countdown, rec, `{"steps":1,"wait":true}`)
					done <- err
				}()
				require.Eventually(t, func() bool { return strings.Contains(rec.output(), "step 1") }, 20*time.Second, 10*time.Millisecond)
				cancel()
				select {
				case err := <-done:
					require.ErrorIs(t, err, context.Canceled)
				case <-time.After(20 * time.Second):
					t.Fatal("the canceled job did not return")
				}
				require.Eventually(t, func() bool {
					_, after := tsStats(t, src)
					return after == before+1
				}, 10*time.Second, 50*time.Millisecond, "the server's task saw the cancellation")
			})

			t.Run("plain", func(t *testing.T) {
				res, err := taskTool(t, src, "echo").Run(context.Background(), &toolloop.Call{Name: "ts__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
				require.NoError(t, err)
				assert.Equal(t, "echo: hi", res.Text())
			})

			t.Run("foreground", func(t *testing.T) {
				// An optional task tool called in the foreground: a
				// plain tools/call, which the server answers itself.
				res, err := countdown.Run(context.Background(), &toolloop.Call{Name: "ts__countdown", Arguments: json.RawMessage(`{"steps":1}`)})
				require.NoError(t, err)
				assert.Equal(t, "done after 1 steps", res.Text())
				assert.Nil(t, res.Meta.Extra["mcp_task"])
				// A required one runs as a task, and the call waits.
				req := taskTool(t, src, "countdown_required")
				assert.True(t, req.Spec().Background)
				res, err = req.Run(context.Background(), &toolloop.Call{Name: "ts__countdown_required", Arguments: json.RawMessage(`{"steps":2}`)})
				require.NoError(t, err)
				assert.Equal(t, "done after 2 steps", res.Text())
				assert.NotEmpty(t, res.Meta.Extra["mcp_task"])
			})
		})
	}
}
