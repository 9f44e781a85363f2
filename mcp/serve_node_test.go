package mcp_test

import (
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

// The TypeScript SDK's client drives the conformance run; it is pinned in
// testdata/npm/package.json with the reference servers.
var conformanceScript = filepath.Join("testdata", "npm", "conformance.mjs")

// nodeForConformance returns the node binary, or skips the test (see
// npmPeer) if Node or the TypeScript SDK is missing.
func nodeForConformance(t *testing.T) string {
	t.Helper()
	node, _ := npmPeer(t, filepath.Join("sdk", "package.json"))
	return node
}

// tsCall is a call's result as the TypeScript client returned it, or the
// error it threw.
type tsCall struct {
	Thrown  bool   `json:"thrown"`
	Code    *int   `json:"code"`
	Message string `json:"message"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
	Meta              map[string]any `json:"_meta"`
}

func (c tsCall) text() string {
	var b strings.Builder
	for _, x := range c.Content {
		b.WriteString(x.Text)
	}
	return b.String()
}

type tsRun struct {
	ProtocolVersion string `json:"protocolVersion"`
	Tools           []struct {
		Name        string         `json:"name"`
		Title       string         `json:"title"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
		Annotations *struct {
			Title           string `json:"title"`
			ReadOnlyHint    *bool  `json:"readOnlyHint"`
			DestructiveHint *bool  `json:"destructiveHint"`
			IdempotentHint  *bool  `json:"idempotentHint"`
			OpenWorldHint   *bool  `json:"openWorldHint"`
		} `json:"annotations"`
	} `json:"tools"`
	Echo, Add, Slow, Cancel, Fail, Invalid, Unknown, Approved, Declined tsCall
	Progress                                                            []struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
		Message  string  `json:"message"`
	} `json:"progress"`
	Cancellations struct {
		Canceled int `json:"canceled"`
	} `json:"cancellations"`
	ListChanged struct {
		Notified int  `json:"notified"`
		Listed   bool `json:"listed"`
	} `json:"listChanged"`
	Elicitations []struct {
		Message string         `json:"message"`
		Schema  map[string]any `json:"schema"`
	} `json:"elicitations"`
}

func runConformance(t *testing.T, node string, args ...string) tsRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{conformanceScript}, args...)...)
	cmd.Env = append(os.Environ(), serveStdioEnv+"=stdio")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "conformance.mjs failed; stderr:\n%s", stderr.String())
	var run tsRun
	require.NoError(t, json.Unmarshal(out, &run), "output: %s\nstderr:\n%s", out, stderr.String())
	t.Logf("protocol %s; stderr:\n%s", run.ProtocolVersion, stderr.String())
	return run
}

// TestServeConformanceTypeScript runs the conformance script, with the
// official TypeScript SDK's client, against mcp.Serve over stdio (this
// test binary serving the fixture, see serveStdioEnv) and over streamable
// HTTP.
func TestServeConformanceTypeScript(t *testing.T) {
	node := nodeForConformance(t)
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		checkConformance(t, runConformance(t, node, "--stdio", os.Args[0]), nil)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		f := newServeFixture()
		srv, err := mcp.NewServer(f.loop, nil)
		require.NoError(t, err)
		defer func() { require.NoError(t, srv.Close()) }()
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		checkConformance(t, runConformance(t, node, "--url", hs.URL), f)
	})
}

// checkConformance asserts on a run; f is the fixture when it lives in
// this process.
func checkConformance(t *testing.T, run tsRun, f *serveFixture) {
	assert.Equal(t, "2025-11-25", run.ProtocolVersion)

	// tools/list: names, schemas, annotations.
	byName := map[string]int{}
	for i, tl := range run.Tools {
		byName[tl.Name] = i
		assert.Equal(t, "object", tl.InputSchema["type"], tl.Name)
	}
	for _, name := range []string{"add", "cancellations", "danger", "echo", "fail", "slow"} {
		require.Contains(t, byName, name)
	}
	echo := run.Tools[byName["echo"]]
	assert.Equal(t, "Echoes its text.", echo.Description)
	assert.Equal(t, "Echo", echo.Title)
	require.NotNil(t, echo.Annotations)
	assert.Equal(t, new(true), echo.Annotations.ReadOnlyHint)
	assert.Equal(t, new(true), echo.Annotations.IdempotentHint)
	assert.Equal(t, new(false), echo.Annotations.DestructiveHint)
	danger := run.Tools[byName["danger"]]
	require.NotNil(t, danger.Annotations)
	assert.Equal(t, new(true), danger.Annotations.DestructiveHint)
	assert.Equal(t, new(true), danger.Annotations.OpenWorldHint)
	assert.Nil(t, run.Tools[byName["add"]].Annotations)

	// Calls.
	assert.False(t, run.Echo.Thrown || run.Echo.IsError, run.Echo.Message)
	assert.Equal(t, "echo: hi", run.Echo.text())
	assert.Equal(t, map[string]any{"sum": 42.0}, run.Add.StructuredContent)
	assert.JSONEq(t, `{"sum":42}`, run.Add.text())

	// Progress.
	assert.Equal(t, "done", run.Slow.text())
	// The server sends the three in order before the reply; the
	// TypeScript client drops those it reads in the same chunk as the
	// reply (see slowTool), so what it saw is a prefix of them.
	require.NotEmpty(t, run.Progress, "no progress notification reached the client")
	require.LessOrEqual(t, len(run.Progress), 3)
	for i, p := range run.Progress {
		assert.Equal(t, float64(i+1), p.Progress)
		assert.Equal(t, 3.0, p.Total)
		assert.Equal(t, "step", p.Message)
	}

	// Cancellation: the client gave up, and the tool saw it.
	assert.True(t, run.Cancel.Thrown, "the aborted call resolved: %+v", run.Cancel)
	assert.Equal(t, 1, run.Cancellations.Canceled, "the server's tool did not see the cancellation")

	// Errors: results with isError; an unknown tool is a JSON-RPC error.
	assert.False(t, run.Fail.Thrown)
	assert.True(t, run.Fail.IsError)
	assert.Contains(t, run.Fail.text(), "the disk is on fire")
	assert.Equal(t, string(toolloop.KindExecutionFailed), run.Fail.Meta["toolloop/kind"])
	assert.False(t, run.Invalid.Thrown)
	assert.True(t, run.Invalid.IsError)
	assert.Equal(t, string(toolloop.KindInvalidArgs), run.Invalid.Meta["toolloop/kind"])
	assert.True(t, run.Unknown.Thrown)
	require.NotNil(t, run.Unknown.Code)
	assert.Equal(t, -32602, *run.Unknown.Code)

	// Approvals through elicitation.
	assert.False(t, run.Approved.IsError, run.Approved.text())
	assert.Equal(t, "deleted /tmp/approved", run.Approved.text())
	assert.True(t, run.Declined.IsError)
	assert.Equal(t, string(toolloop.KindDenied), run.Declined.Meta["toolloop/kind"])
	assert.Contains(t, run.Declined.text(), "declined")
	require.Len(t, run.Elicitations, 2)
	assert.Contains(t, run.Elicitations[0].Message, "/tmp/approved")
	assert.Contains(t, run.Elicitations[0].Message, "it deletes files")
	// A tool added at run time is announced and listed.
	assert.Positive(t, run.ListChanged.Notified, "no notifications/tools/list_changed")
	assert.True(t, run.ListChanged.Listed)

	if f != nil {
		assert.Equal(t, []string{"/tmp/approved"}, f.dangerRuns())
		assert.EqualValues(t, 1, f.canceled.Load())
	}
}
