package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeHTTPTypeScriptEdges drives Server.Handler with the official
// TypeScript SDK client at its edges: a foreign Origin is refused with
// 403 (the client's connect fails with that status), a loopback one is
// served, and a request without a session gets 400.
func TestServeHTTPTypeScriptEdges(t *testing.T) {
	node, _ := npmPeer(t, filepath.Join("sdk", "package.json"))
	srv := newServe(t, newServeFixture(), nil)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "npm", "http_checks.mjs"), hs.URL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "http_checks.mjs failed; stderr:\n%s", stderr.String())
	type got struct {
		OK      bool   `json:"ok"`
		Status  *int   `json:"status"`
		Message string `json:"message"`
		Tools   int    `json:"tools"`
	}
	var run struct{ ForeignOrigin, LoopbackOrigin, NoSession got }
	require.NoError(t, json.Unmarshal(out, &run), "output: %s", out)

	assert.False(t, run.ForeignOrigin.OK, "a foreign Origin is refused")
	if assert.NotNil(t, run.ForeignOrigin.Status, run.ForeignOrigin.Message) {
		assert.Equal(t, http.StatusForbidden, *run.ForeignOrigin.Status, run.ForeignOrigin.Message)
	}
	assert.True(t, run.LoopbackOrigin.OK, run.LoopbackOrigin.Message)
	assert.Positive(t, run.LoopbackOrigin.Tools)
	assert.False(t, run.NoSession.OK, "a request without a session is refused")
	if assert.NotNil(t, run.NoSession.Status, run.NoSession.Message) {
		assert.Equal(t, http.StatusBadRequest, *run.NoSession.Status, run.NoSession.Message)
	}
}
