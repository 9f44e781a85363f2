package mcp_test

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/mcp"
)

// shell returns a config that runs script with sh, or skips the test.
func shell(t *testing.T, script string) mcp.ServerConfig {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	return mcp.ServerConfig{Command: sh, Args: []string{"-c", script}}
}

func TestStartTimeout(t *testing.T) {
	t.Parallel()
	// A server that says something on stderr, then never answers.
	cfg := shell(t, "echo warming up >&2; exec sleep 3600")
	const limit = 300 * time.Millisecond
	ss, err := mcp.NewServers(&mcp.Config{Servers: map[string]mcp.ServerConfig{"hung": cfg}}, &mcp.Options{ConnectTimeout: limit})
	require.NoError(t, err)
	defer func() { require.NoError(t, ss.Close()) }()

	began := time.Now()
	err = ss.Register(context.Background(), &toolloop.ToolRegistry{})
	took := time.Since(began)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var te *mcp.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "hung", te.Server)
	assert.Equal(t, "finish starting", te.What)
	assert.Equal(t, limit, te.Limit)
	assert.Equal(t, []string{"warming up"}, te.Stderr)
	// The regression bound of how long Register blocks: the limit, then
	// the stopping of the process (stdin closed, then SIGTERM, each with a
	// one-second grace at most). See BenchmarkRegisterHungServer.
	assert.Less(t, took, limit+5*time.Second)
	t.Logf("Register returned after %v with a %v connect timeout", took, limit)
}

func TestStartExitStatus(t *testing.T) {
	t.Parallel()
	var lines string
	for i := range 25 {
		lines += "echo 'line " + string(rune('a'+i)) + "' >&2; "
	}
	src, err := mcp.New("dies", shell(t, lines+"exit 3"), nil) // no logger: the tail is kept all the same
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close()) }()

	_, err = src.Tools(context.Background())
	require.Error(t, err)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.ExitCode())
	var te *mcp.TimeoutError
	assert.False(t, errors.As(err, &te))
	// The last lines of its stderr, not the first.
	assert.Contains(t, err.Error(), "line y")
	assert.Contains(t, err.Error(), "line f")
	assert.NotContains(t, err.Error(), "line e")
}

// TestBannerOnStdout: a server that writes lines that are not JSON-RPC to
// its stdout before its first message (and after) is used all the same;
// the lines are logged.
func TestBannerOnStdout(t *testing.T) {
	t.Parallel()
	sh := shell(t, "")
	cfg := stdioConfig(t)
	cfg.Args = []string{"-c", `echo "Weather server v1.2 starting..."; echo 200; exec "$0"`, cfg.Command}
	cfg.Command = sh.Command
	logs := &logBuffer{}
	src := (&server{cfg: cfg, logs: logs}).source(t, "banner", nil, nil)
	tool, ok := registry(t, src).Lookup(context.Background(), "banner__echo")
	require.True(t, ok)
	res, err := tool.Run(context.Background(), &toolloop.Call{ID: "1", Name: "banner__echo", Arguments: []byte(`{"text":"hi"}`)})
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Text())
	assert.True(t, logs.contains("Weather server v1.2 starting..."), "logs:\n%s", logs)
	assert.True(t, logs.contains("level=WARN"), "logs:\n%s", logs)
}
