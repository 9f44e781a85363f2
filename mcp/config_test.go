package mcp_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/mcp"
)

func TestParseConfig(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "s3cret")
	t.Setenv("MCP_TEST_EMPTY", "")
	tests := []struct {
		name    string
		json    string
		want    map[string]mcp.ServerConfig
		wantErr string
	}{
		{
			name: "desktop shape",
			json: `{"globalShortcut": "x", "mcpServers": {
				"files": {"command": "npx", "args": ["-y", "files-server", "/tmp"], "env": {"DEBUG": "1"}, "cwd": "/tmp",
				          "allowTools": ["read_*"], "denyTools": ["read_secret"], "timeout": 1500, "autoApprove": []},
				"search": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"}, "lazy": true},
				"old": {"type": "sse", "url": "http://localhost:3000/sse", "disabled": true}
			}}`,
			want: map[string]mcp.ServerConfig{
				"files": {Command: "npx", Args: []string{"-y", "files-server", "/tmp"}, Env: map[string]string{"DEBUG": "1"}, Cwd: "/tmp",
					AllowTools: []string{"read_*"}, DenyTools: []string{"read_secret"}, Timeout: 1500 * time.Millisecond},
				"search": {Type: "http", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}, Lazy: true},
				"old":    {Type: "sse", URL: "http://localhost:3000/sse", Disabled: true},
			},
		},
		{
			name: "env defaults",
			json: `{"mcpServers": {"a": {"command": "${MCP_TEST_UNSET:-srv}", "args": ["${MCP_TEST_EMPTY:-x}", "$HOME", "${MCP_TEST_EMPTY}"]}}}`,
			want: map[string]mcp.ServerConfig{"a": {Command: "srv", Args: []string{"x", "$HOME", ""}}},
		},
		{name: "unset variable", json: `{"mcpServers": {"a": {"command": "srv", "env": {"K": "${MCP_TEST_UNSET}"}}}}`, wantErr: "MCP_TEST_UNSET is not set"},
		{name: "no servers key", json: `{"servers": {}}`, wantErr: `no "mcpServers"`},
		{name: "not json", json: `{`, wantErr: "unexpected end"},
		{name: "neither", json: `{"mcpServers": {"a": {"args": ["x"]}}}`, wantErr: "exactly one"},
		{name: "both", json: `{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}`, wantErr: "exactly one"},
		{name: "unknown type", json: `{"mcpServers": {"a": {"type": "ws", "url": "http://h/"}}}`, wantErr: "unknown type"},
		{name: "stdio without command", json: `{"mcpServers": {"a": {"type": "stdio", "url": "http://h/"}}}`, wantErr: "needs a command"},
		{name: "http without url", json: `{"mcpServers": {"a": {"type": "http", "command": "x"}}}`, wantErr: "needs a url"},
		{name: "bad url", json: `{"mcpServers": {"a": {"url": "ftp://h/x"}}}`, wantErr: "not an http"},
		{name: "headers on stdio", json: `{"mcpServers": {"a": {"command": "x", "headers": {"A": "b"}}}}`, wantErr: "headers apply only"},
		{name: "args on remote", json: `{"mcpServers": {"a": {"url": "http://h/", "args": ["x"]}}}`, wantErr: "only to a stdio"},
		{name: "bad pattern", json: `{"mcpServers": {"a": {"command": "x", "denyTools": ["[a-"]}}}`, wantErr: "tool pattern"},
		{name: "negative timeout", json: `{"mcpServers": {"a": {"command": "x", "timeout": -5}}}`, wantErr: "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := mcp.ParseConfig([]byte(tt.json))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.Servers)
		})
	}
}

func TestServerConfigJSONRoundTrip(t *testing.T) {
	in := mcp.ServerConfig{Command: "srv", Args: []string{"a"}, Timeout: 2 * time.Second, AllowTools: []string{"x"}}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"command":"srv","args":["a"],"allowTools":["x"],"timeout":2000}`, string(b))
	var out mcp.ServerConfig
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, out)
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"mcpServers": {"a": {"command": "srv"}}}`), 0o600))
	c, err := mcp.LoadConfig(file)
	require.NoError(t, err)
	assert.Equal(t, "srv", c.Servers["a"].Command)

	_, err = mcp.LoadConfig(filepath.Join(dir, "missing.json"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	require.NoError(t, os.WriteFile(file, []byte(`{"mcpServers": {"a": {}}}`), 0o600))
	_, err = mcp.LoadConfig(file)
	assert.ErrorContains(t, err, file)
}

func TestNewChecksConfig(t *testing.T) {
	_, err := mcp.New("", mcp.ServerConfig{Command: "x"}, nil)
	assert.Error(t, err)
	_, err = mcp.New("a", mcp.ServerConfig{}, nil)
	assert.ErrorContains(t, err, "exactly one")
	_, err = mcp.NewServers(&mcp.Config{Servers: map[string]mcp.ServerConfig{"a": {URL: "nope"}}}, nil)
	assert.ErrorContains(t, err, `server "a"`)
}
