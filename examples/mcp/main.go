// Command mcp runs an agent whose tools come from two sources at once: the
// builtin workspace tools (read_file, list_directory) and the tools of an
// MCP server reached over stdio, offline: a scripted model stands in for a
// real one.
//
// The MCP server is this same program started with the argument "serve"
// (see server.go), configured in the "mcpServers" JSON shape that desktop
// and editor agents use. Its tools reach the model as notes__search_notes
// and notes__count_words; the run shows their provenance, the server's
// progress notifications, an isError result, and the server's stderr
// going to the logger rather than to our output.
//
//	go run ./examples/mcp
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/mcp"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		if err := serve(); err != nil {
			log.Fatal(err)
		}
		return
	}
	dir, err := os.MkdirTemp("", "toolloop-mcp")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	readme := "# Release notes\n\nWe ship on Fridays.\nSee the team notes for the checklist.\n"
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := run(context.Background(), dir); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string) error {
	// The MCP side, configured as a desktop agent would be.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cfgJSON, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"notes": map[string]any{"command": self, "args": []string{"serve"}, "denyTools": []string{"delete_*"}},
	}})
	if err != nil {
		return err
	}
	cfg, err := mcp.ParseConfig(cfgJSON)
	if err != nil {
		return err
	}
	// The servers' stderr and lifecycle go to this logger, never to stdout.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	servers, err := mcp.NewServers(cfg, &mcp.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer servers.Close()

	// The builtin side: two read-only workspace tools.
	ws, err := builtin.Workspace(dir, &builtin.Options{Tools: []string{"read_file", "list_directory"}})
	if err != nil {
		return err
	}
	defer ws.Close()

	var reg toolloop.ToolRegistry
	if err := reg.AddSource(ctx, ws); err != nil {
		return err
	}
	if err := servers.Register(ctx, &reg); err != nil {
		return err
	}
	fmt.Println("tools the model sees:")
	for _, s := range reg.Specs(ctx) {
		fmt.Printf("  %s\n", s.Name)
	}
	fmt.Println()

	loop := &toolloop.AgentLoop{Model: scriptedModel(), Tools: &reg, OnEvent: show}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("When do we ship, and what is on the release checklist?")})
	if err != nil {
		return err
	}
	fmt.Printf("\n%d turns, %d tool calls\n", res.Turns, len(res.Executions))
	return nil
}

// show prints the run as it happens, with each call's provenance.
func show(e toolloop.Event) {
	switch e.Type {
	case toolloop.EventModelResponse:
		m := e.Response.Message
		for _, c := range m.ToolCalls {
			fmt.Printf("model -> %s %s\n", c.Name, c.Arguments)
		}
		if t := m.Text(); t != "" {
			fmt.Printf("model: %s\n", t)
		}
	case toolloop.EventProgress:
		fmt.Printf("   .. [%s:%s] %s: %s (%g/%g)\n", e.Source, e.SourceName, e.Tool, e.Progress.Message, e.Progress.Done, e.Progress.Total)
	case toolloop.EventComplete:
		r := e.Result
		status := string(r.Status)
		if r.Error != nil {
			status += " (" + string(r.Error.Kind) + ")"
		}
		fmt.Printf("   <- [%s:%s] %s %s:\n%s\n", r.Meta.Source, r.Meta.SourceName, r.Name, status, indent(describe(r)))
	}
}

// describe renders a result's content for the terminal.
func describe(r *toolloop.ToolResult) string {
	var parts []string
	for _, c := range r.Content {
		switch c.Type {
		case toolloop.ContentText:
			parts = append(parts, c.Text)
		case toolloop.ContentJSON:
			parts = append(parts, "json: "+string(c.JSON))
		default:
			parts = append(parts, fmt.Sprintf("[%s %s]", c.Type, c.MIMEType))
		}
	}
	return strings.Join(parts, "\n")
}

// scriptedModel answers each turn with the next canned response, the way
// looptest's scripted model does in tests.
func scriptedModel() toolloop.Model {
	turns := []*toolloop.Response{
		calls(
			call("c1", "list_directory", map[string]any{"path": "."}),
			call("c2", "notes__search_notes", map[string]any{"query": "deploy freeze"}),
		),
		calls(
			call("c3", "read_file", map[string]any{"path": "README.md"}),
			call("c4", "notes__search_notes", map[string]any{"query": "release"}),
		),
		calls(call("c5", "notes__count_words", map[string]any{
			"text": "Before a release: run the tests,\nupdate CHANGELOG.md,\ntag the commit,\nannounce it.",
		})),
		{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent(
			"We ship on Fridays. The checklist (13 words): run the tests, update CHANGELOG.md, tag the commit, announce it.")}}},
	}
	n := 0
	return toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		if n == len(turns) {
			return nil, fmt.Errorf("the script has only %d turns", len(turns))
		}
		n++
		return turns[n-1], nil
	})
}

func calls(cs ...toolloop.ToolCall) *toolloop.Response {
	return &toolloop.Response{Message: toolloop.Message{ToolCalls: cs}}
}

func call(id, name string, args any) toolloop.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return toolloop.ToolCall{ID: id, Name: name, Arguments: b}
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}
