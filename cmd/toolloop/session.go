package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"regexp"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/mcp"
	"github.com/toolloop/toolloop/sanitize"
)

// toolFlags choose the tools: the workspace and an optional MCP config.
type toolFlags struct {
	dir string
	mcp string
}

func (f *toolFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "C", "", "the workspace directory the tools are confined to; empty: the current directory")
	fs.StringVar(&f.mcp, "mcp", "", `an "mcpServers" JSON file whose servers' tools are added`)
}

// stateDir is the folder in the workspace where toolloop keeps its run
// logs. The workspace tools hide it: the model does not see it, and
// cannot read, change or forge what is in it with them (exec_shell is not
// fenced by name; see builtin.Options.Hidden).
const stateDir = ".toolloop"

// tools is a registry of the workspace tools and the MCP servers' tools,
// with what must be closed after.
type tools struct {
	reg     *toolloop.ToolRegistry
	ws      *builtin.Source
	servers *mcp.Servers
}

// openTools builds the registry. A malformed MCP config is a usage error;
// a server that fails to start is reported on stderr and left out.
func openTools(ctx context.Context, e *env, f toolFlags) (*tools, error) {
	dir := orDefault(f.dir, e.dir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, usagef("the workspace %q is not a directory", dir)
	}
	var cfg *mcp.Config
	if f.mcp != "" {
		var err error
		if cfg, err = mcp.LoadConfig(f.mcp); err != nil {
			return nil, usagef("the MCP config %s: %v", f.mcp, err)
		}
	}
	ws, err := builtin.Workspace(dir, &builtin.Options{Hidden: []string{stateDir}})
	if err != nil {
		return nil, fmt.Errorf("the workspace tools: %w", err)
	}
	t := &tools{reg: &toolloop.ToolRegistry{}, ws: ws}
	if err := t.reg.AddSource(ctx, ws); err != nil {
		t.close()
		return nil, err
	}
	if cfg != nil {
		logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if t.servers, err = mcp.NewServers(cfg, &mcp.Options{Logger: logger}); err != nil {
			t.close()
			return nil, usagef("the MCP config %s: %v", f.mcp, err)
		}
		if err := t.servers.Register(ctx, t.reg); err != nil {
			fmt.Fprintf(e.stderr, "toolloop: some MCP servers are left out: %v\n", err)
		}
	}
	return t, nil
}

func (t *tools) close() {
	if t.servers != nil {
		t.servers.Close()
	}
	t.ws.Close()
}

// policy is the command's guard before the terminal: the builtin's
// command policy (its denylist for exec_shell), then an ask for every
// destructive or judgment-required tool, whatever its source.
func policy() toolloop.Guard {
	return toolloop.Guards(
		&builtin.CommandPolicy{},
		&toolloop.RuleGuard{Rules: []toolloop.Rule{
			{Name: "destructive", Destructive: true, Decision: toolloop.Ask,
				Reason: "the tool may change files or run commands"},
			{Name: "judgment", JudgmentRequired: true, Decision: toolloop.Ask,
				Reason: "the tool's calls need a person's judgment"},
		}},
	)
}

// redactor redacts the default secret shapes and the values of the API
// keys in the environment, wherever they would reach the screen, the log
// or the model.
func redactor(getenv func(string) string) *sanitize.Redactor {
	rules := sanitize.DefaultRules()
	for _, v := range keyVars {
		k := getenv(v)
		if len(k) < 8 {
			continue // too short to tell from ordinary text; not a real key
		}
		rules = append(rules, sanitize.Rule{Kind: "api_key", Pattern: regexp.MustCompile(regexp.QuoteMeta(k)), Keywords: []string{k[:8]}})
	}
	return &sanitize.Redactor{Rules: rules}
}

// newTerminal returns the terminal's questioner for the tools in t.
func newTerminal(e *env, in *lineReader, reg *toolloop.ToolRegistry, yes bool) *terminal {
	return &terminal{in: in, out: e.stderr, getenv: e.getenv, editorIn: e.stdin, editorOut: e.stderr,
		reg: reg, yes: yes}
}

// loopFor returns the loop of run, resume and call. With a terminal, asks
// go to it; without one, -yes approves them, and otherwise the run pauses
// for toolloop resume.
func loopFor(model toolloop.Model, t *tools, term *terminal, red *sanitize.Redactor, onEvent func(toolloop.Event)) *toolloop.AgentLoop {
	l := &toolloop.AgentLoop{
		Model:   model,
		Tools:   t.reg,
		Guard:   policy(),
		Hooks:   toolloop.Hooks{PostToolUse: []toolloop.PostToolUseHook{red.PostToolUse}},
		OnEvent: onEvent,
	}
	if term != nil {
		l.Approver = term
	} else {
		l.PauseForApproval = true
	}
	return l
}

// errNoLog: a log to read is missing.
var errNoLog = errors.New("no such log")
