package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// taskServer serves the task fixture over kind ("http" or "stdio") and
// returns a source for it.
func taskServer(t *testing.T, kind string) *mcp.Source {
	t.Helper()
	var cfg mcp.ServerConfig
	switch kind {
	case "http":
		f := newTaskFixture()
		srv, err := mcp.NewServer(f.loop, nil)
		require.NoError(t, err)
		ts := httptest.NewServer(srv.Handler())
		t.Cleanup(func() {
			ts.CloseClientConnections()
			ts.Close()
			require.NoError(t, srv.Close())
		})
		cfg = mcp.ServerConfig{URL: ts.URL}
	case "stdio":
		exe, err := os.Executable()
		require.NoError(t, err)
		cfg = mcp.ServerConfig{Command: exe, Env: map[string]string{taskFixtureEnv: "stdio", "GORACE": "atexit_sleep_ms=0"}}
	}
	src, err := mcp.New("tasks", cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	return src
}

// jobCounts asks the fixture how many jobs started and saw their
// cancellation.
func jobCounts(t *testing.T, src *mcp.Source) (started, canceled int64) {
	t.Helper()
	res, err := taskTool(t, src, "canceled").Run(context.Background(), &toolloop.Call{Name: "tasks__canceled", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	var n struct{ Started, Canceled int64 }
	require.NoError(t, json.Unmarshal([]byte(res.Text()), &n), res.Text())
	return n.Started, n.Canceled
}

// TestTasksGo runs the Go client against the Go server (mcp.Serve) with
// MCP tasks, over streamable HTTP and stdio.
func TestTasksGo(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			src := taskServer(t, kind)
			job := taskTool(t, src, "job")

			t.Run("listing", func(t *testing.T) {
				assert.True(t, job.Spec().Background, "a tool served with Background is listed with taskSupport optional")
				assert.False(t, taskTool(t, src, "echo").Spec().Background)
			})

			t.Run("result", func(t *testing.T) {
				rec := &recorder{}
				res, err := runJob(context.Background(), job, rec, `{"steps":4}`)
				require.NoError(t, err)
				assert.Equal(t, toolloop.StatusOK, res.Status, res.Text())
				assert.Equal(t, "done after 4 steps", res.Text())
				assert.NotEmpty(t, res.Meta.Extra["mcp_task"], "the call ran as a task")
				assert.Contains(t, rec.output(), "line ", "the task's status messages are the job's output")
			})

			t.Run("fail", func(t *testing.T) {
				res, err := runJob(context.Background(), job, &recorder{}, `{"steps":1,"fail":true}`)
				require.NoError(t, err)
				require.True(t, res.IsError())
				assert.Equal(t, toolloop.KindExecutionFailed, res.Error.Kind)
				assert.Contains(t, res.Text(), "the job failed")
			})

			t.Run("foreground", func(t *testing.T) {
				call := &toolloop.Call{Name: job.Spec().Name, Arguments: json.RawMessage(`{"steps":1}`)}
				res, err := job.Run(context.Background(), call)
				require.NoError(t, err)
				assert.Equal(t, "done after 1 steps", res.Text())
				assert.Nil(t, res.Meta.Extra["mcp_task"], "a call in the foreground of an optional tool is a plain call")
			})

			t.Run("cancel", func(t *testing.T) {
				_, before := jobCounts(t, src)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				rec := &recorder{}
				done := make(chan error, 1)
				go func() {
					_, err := runJob(ctx, job, rec, `{"steps":1,"wait":true}`)
					done <- err
				}()
				require.Eventually(t, func() bool { return strings.Contains(rec.output(), "line 1") }, 20*time.Second, 10*time.Millisecond)
				cancel()
				select {
				case err := <-done:
					require.ErrorIs(t, err, context.Canceled)
				case <-time.After(20 * time.Second):
					t.Fatal("the canceled job did not return")
				}
				// tasks/cancel is answered once the call returned.
				_, after := jobCounts(t, src)
				assert.Equal(t, before+1, after, "the server's tool saw its cancellation")
			})
		})
	}
}

// TestTaskServerDies checks that a task whose server dies fails at once
// with a ConnectionLostError.
func TestTaskServerDies(t *testing.T) {
	t.Parallel()
	src := taskServer(t, "stdio")
	job := taskTool(t, src, "job")
	rec := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := runJob(context.Background(), job, rec, `{"steps":1,"wait":true}`)
		done <- err
	}()
	require.Eventually(t, func() bool { return strings.Contains(rec.output(), "line 1") }, 20*time.Second, 10*time.Millisecond)
	_, _ = taskTool(t, src, "die").Run(context.Background(), &toolloop.Call{Name: "tasks__die", Arguments: json.RawMessage(`{}`)})
	select {
	case err := <-done:
		var lost *mcp.ConnectionLostError
		require.True(t, errors.As(err, &lost), "%v", err)
		var te *toolloop.ToolError
		require.True(t, errors.As(err, &te))
		assert.Equal(t, toolloop.KindExecutionFailed, te.Kind)
	case <-time.After(20 * time.Second):
		t.Fatal("the task of a dead server did not fail")
	}
}
