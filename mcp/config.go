package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"regexp"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config is a set of MCP servers, in the "mcpServers" JSON shape that
// desktop and editor agents use:
//
//	{
//	  "mcpServers": {
//	    "files": {"command": "npx", "args": ["-y", "some-mcp-server", "/tmp"], "env": {"DEBUG": "1"}},
//	    "search": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}}
//	  }
//	}
//
// Keys other than mcpServers, and keys of a server this package does not
// know, are ignored, so a whole agent settings file may be loaded as is.
type Config struct {
	Servers map[string]ServerConfig `json:"mcpServers"`
}

// ServerConfig configures one MCP server: a local server started as a child
// process and spoken to over stdio (Command), a remote server spoken to over
// streamable HTTP (URL), or, from Go, any transport of the SDK (Transport).
// Exactly one of the three must be set.
type ServerConfig struct {
	// Type is "stdio", "http" (streamable HTTP; "streamable-http" and
	// "streamableHttp" are accepted too) or "sse" (the older HTTP+SSE
	// transport). Empty means stdio when Command is set and http when URL is.
	Type string `json:"type,omitempty"`

	// Command, Args, Env and Cwd start a stdio server. The child inherits
	// our environment, with Env added on top. Its stderr goes to
	// [Options.Logger], line by line, never to our own output.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`

	// URL and Headers reach a remote server. Headers are sent with every
	// request.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	// Transport, if set, returns a new transport to the server each time
	// the source (re)connects: a transport connects only once. It is how a
	// test or an in-process server plugs in, for instance with the SDK's
	// NewInMemoryTransports.
	Transport func(ctx context.Context) (sdk.Transport, error) `json:"-"`

	// AllowTools, if not empty, lists the only tools to expose; DenyTools
	// lists tools never to expose, and wins over AllowTools. Entries are the
	// server's own tool names, or path.Match patterns such as "read_*".
	AllowTools []string `json:"allowTools,omitempty"`
	DenyTools  []string `json:"denyTools,omitempty"`

	// Lazy defers connecting until the registry first needs the server's
	// tools (the first Specs or Lookup after AddSource) instead of
	// connecting in AddSource. See [Source] for the details.
	Lazy bool `json:"lazy,omitempty"`
	// Disabled servers are skipped by [NewServers].
	Disabled bool `json:"disabled,omitempty"`
	// Timeout overrides the loop's per-call timeout for this server's tools.
	// In JSON it is "timeout", in milliseconds.
	Timeout time.Duration `json:"-"`
	// Serialize sends the server one call at a time, in the order the
	// calls come; the others wait their turn (their timeouts running), and
	// one whose context ends while it waits gives up its place without
	// reaching the server. For servers whose tools are not safe to call
	// concurrently, such as one that rewrites a file on each call: without
	// it, two calls in one turn may lose one's write.
	Serialize bool `json:"serialize,omitempty"`

	// Client capabilities: each is off when zero, and then not declared
	// to the server. See [Options] for the handlers they need.

	// Roots, if set, are the directories (or file:// URIs) offered to
	// this server as its roots, instead of [Options.Roots].
	Roots []string `json:"roots,omitempty"`
	// Sampling lets the server ask for model completions, answered by
	// [Options.Sampling], which must then be set.
	Sampling bool `json:"sampling,omitempty"`
	// Elicitation lets the server ask the user questions, answered by
	// [Options.Elicit], which must then be set.
	Elicitation bool `json:"elicitation,omitempty"`
	// LogLevel, if set, is the least severity of the log messages the
	// server is asked to send: "debug", "info", "notice", "warning",
	// "error", "critical", "alert" or "emergency". It is sent with
	// logging/setLevel on each connection (with each request, on the
	// protocol of 2026-07-28). Empty leaves the server's own level (some
	// servers send nothing until asked). Log messages go to
	// [Options.OnEvent] and [Options.Logger].
	LogLevel string `json:"logLevel,omitempty"`
	// ResourceTools offers the model two read-only tools for the server's
	// resources, "server__list_resources" and "server__read_resource",
	// when the server has resources. See [Source.ReadResource].
	ResourceTools bool `json:"resourceTools,omitempty"`
	// OAuth, for an HTTP or SSE server, authorizes requests: its token
	// source's token is sent as a bearer token, and a 401 or 403 calls its
	// Authorize once before the request is tried again. Use the SDK's
	// auth.AuthorizationCodeHandler for the full flow, or [TokenAuth] for
	// a token you already have. Tokens never reach logs or errors.
	OAuth auth.OAuthHandler `json:"-"`
}

// serverConfigFields is ServerConfig without its JSON methods.
type serverConfigFields ServerConfig

// UnmarshalJSON implements [json.Unmarshaler], reading "timeout" in
// milliseconds.
func (c *ServerConfig) UnmarshalJSON(b []byte) error {
	w := struct {
		*serverConfigFields
		TimeoutMS int64 `json:"timeout,omitempty"`
	}{serverConfigFields: (*serverConfigFields)(c)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	c.Timeout = time.Duration(w.TimeoutMS) * time.Millisecond
	return nil
}

// MarshalJSON implements [json.Marshaler], writing "timeout" in
// milliseconds.
func (c ServerConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		serverConfigFields
		TimeoutMS int64 `json:"timeout,omitempty"`
	}{serverConfigFields(c), c.Timeout.Milliseconds()})
}

// The transport kinds of a ServerConfig, normalized.
const (
	typeStdio = "stdio"
	typeHTTP  = "http"
	typeSSE   = "sse"
	typeGo    = "go"
)

// kind returns the normalized transport kind of c, or an error if c is
// not a usable configuration.
func (c *ServerConfig) kind() (string, error) {
	set := 0
	for _, ok := range []bool{c.Command != "", c.URL != "", c.Transport != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return "", errors.New("set exactly one of command, url and Transport")
	}
	var kind string
	switch c.Type {
	case "":
		switch {
		case c.Command != "":
			kind = typeStdio
		case c.URL != "":
			kind = typeHTTP
		default:
			kind = typeGo
		}
	case "stdio":
		kind = typeStdio
	case "http", "streamable-http", "streamableHttp":
		kind = typeHTTP
	case "sse":
		kind = typeSSE
	default:
		return "", fmt.Errorf("unknown type %q: want stdio, http or sse", c.Type)
	}
	switch {
	case kind == typeStdio && c.Command == "":
		return "", errors.New("type stdio needs a command")
	case (kind == typeHTTP || kind == typeSSE) && c.URL == "":
		return "", fmt.Errorf("type %s needs a url", c.Type)
	case kind != typeStdio && (len(c.Args) > 0 || len(c.Env) > 0 || c.Cwd != ""):
		return "", errors.New("args, env and cwd apply only to a stdio server")
	case kind != typeHTTP && kind != typeSSE && len(c.Headers) > 0:
		return "", errors.New("headers apply only to a remote server")
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("url %q is not an http or https URL", c.URL)
		}
	}
	for _, p := range append(append([]string(nil), c.AllowTools...), c.DenyTools...) {
		if _, err := path.Match(p, ""); err != nil {
			return "", fmt.Errorf("tool pattern %q: %v", p, err)
		}
	}
	if c.Timeout < 0 {
		return "", errors.New("timeout is negative")
	}
	return kind, nil
}

// exposes reports whether the allow and deny lists let a tool through.
func (c *ServerConfig) exposes(tool string) bool {
	if matchAny(c.DenyTools, tool) {
		return false
	}
	return len(c.AllowTools) == 0 || matchAny(c.AllowTools, tool)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// LoadConfig reads a Config from a JSON file (see [ParseConfig]).
func LoadConfig(file string) (*Config, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	c, err := parseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("mcp: %s: %w", file, err)
	}
	return c, nil
}

// ParseConfig parses a Config from JSON and checks every server in it.
//
// As in desktop agents' files, ${NAME} and ${NAME:-default} in command,
// args, env, cwd, url and headers are replaced by the environment variable
// NAME (or the default when NAME is unset or empty), so secrets need not be
// written into the file. A reference to an unset variable without a default
// is an error.
func ParseConfig(data []byte) (*Config, error) {
	c, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return c, nil
}

func parseConfig(data []byte) (*Config, error) {
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	if c.Servers == nil {
		return nil, errors.New(`no "mcpServers" object`)
	}
	for name, sc := range c.Servers {
		if err := sc.expandEnv(); err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		if _, err := sc.kind(); err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		c.Servers[name] = sc
	}
	return &c, nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// expandEnv replaces ${NAME} and ${NAME:-default} in the fields that may
// hold them.
func (c *ServerConfig) expandEnv() error {
	var missing []string
	expand := func(s string) string {
		return envRef.ReplaceAllStringFunc(s, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if v := os.Getenv(m[1]); v != "" {
				return v
			}
			if m[2] != "" {
				return m[2][2:]
			}
			if _, ok := os.LookupEnv(m[1]); !ok {
				missing = append(missing, m[1])
			}
			return ""
		})
	}
	c.Command, c.Cwd, c.URL = expand(c.Command), expand(c.Cwd), expand(c.URL)
	c.Args = mapSlice(c.Args, expand)
	c.Env = mapValues(c.Env, expand)
	c.Headers = mapValues(c.Headers, expand)
	if len(missing) > 0 {
		return fmt.Errorf("environment variable %s is not set", missing[0])
	}
	return nil
}

func mapSlice(s []string, f func(string) string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

func mapValues(m map[string]string, f func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}
