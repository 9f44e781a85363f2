// Command mcp runs an agent whose tools come from two sources at once: the
// builtin workspace tools (read_file, list_directory) and the tools of an
// MCP server reached over stdio, offline: a scripted model stands in for a
// real one.
//
// The MCP server is this same program started with the argument "serve"
// (see server.go), configured in the "mcpServers" JSON shape that desktop
// and editor agents use. Its tools reach the model as notes__search_notes
// and notes__count_words; the run shows the server's progress
// notifications and an isError result (a verbose sink.NewPrinter on
// stdout), and the log on stderr (sink.NewSlog) each call's provenance
// and the server's own stderr, which never reaches our output.
//
//	go run ./examples/mcp
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
	"github.com/toolloop/toolloop/sink"
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
	if err := run(context.Background(), dir, os.Stdout, os.Stderr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string, stdout, stderr io.Writer) error {
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
	// The servers' stderr and lifecycle, and the run's events, go to this
	// logger on stderr, never to stdout.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{
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
	fmt.Fprintln(stdout, "tools the model sees:")
	for _, s := range reg.Specs(ctx) {
		fmt.Fprintf(stdout, "  %s\n", s.Name)
	}
	fmt.Fprintln(stdout)

	loop := &toolloop.AgentLoop{
		Model: script(),
		Tools: &reg,
		OnEvent: toolloop.MultiSink(
			// Verbose: each call as it starts and the server's progress
			// notifications as they come, besides the line when it completes.
			sink.NewPrinter(stdout, &sink.PrinterOptions{Verbose: true}),
			// The log says where each call ran: source=mcp source_name=notes
			// for the server's tools, source=builtin for the workspace's.
			sink.NewSlog(logger, nil),
		),
	}
	_, err = loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("When do we ship, and what is on the release checklist?")})
	return err
}

// script is what a model might answer, turn by turn.
func script() toolloop.Model {
	return looptest.Script(
		looptest.Calls(
			looptest.Call("c1", "list_directory", `{"path":"."}`),
			looptest.Call("c2", "notes__search_notes", `{"query":"deploy freeze"}`),
		),
		looptest.Calls(
			looptest.Call("c3", "read_file", `{"path":"README.md"}`),
			looptest.Call("c4", "notes__search_notes", `{"query":"release"}`),
		),
		looptest.Calls(looptest.Call("c5", "notes__count_words",
			`{"text":"Before a release: run the tests,\nupdate CHANGELOG.md,\ntag the commit,\nannounce it."}`)),
		looptest.Text("We ship on Fridays. The checklist (13 words): run the tests, update CHANGELOG.md, tag the commit, announce it."),
	)
}
