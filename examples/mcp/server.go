package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The notes server's data: a tiny knowledge base the agent can search.
var notes = map[string]string{
	"release-checklist": "Before a release: run the tests, update CHANGELOG.md, tag the commit, announce it.",
	"on-call":           "On-call rotates weekly. Page the primary first; escalate to the secondary after 15 minutes.",
	"style":             "Go code: gofmt, small interfaces, errors wrapped with %w only when promised.",
}

type searchIn struct {
	Query string `json:"query" jsonschema:"words to look for"`
}

type countIn struct {
	Text string `json:"text" jsonschema:"the text whose words to count"`
}

// serve runs the notes MCP server on stdin and stdout. Only the protocol
// may go to stdout; anything else goes to stderr, which the agent logs.
func serve() error {
	fmt.Fprintln(os.Stderr, "notes server: ready")
	s := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1.0.0"}, nil)

	sdk.AddTool(s, &sdk.Tool{
		Name:        "search_notes",
		Description: "Searches the team's notes and returns the matching ones.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *sdk.CallToolRequest, in searchIn) (*sdk.CallToolResult, any, error) {
		var hits []string
		for _, name := range slices.Sorted(maps.Keys(notes)) {
			if strings.Contains(strings.ToLower(name+" "+notes[name]), strings.ToLower(in.Query)) {
				hits = append(hits, name+": "+notes[name])
			}
		}
		if len(hits) == 0 {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
				Text: fmt.Sprintf("no note mentions %q; try a shorter query", in.Query)}}}, nil, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(hits, "\n")}}}, nil, nil
	})

	// A slow tool that reports progress, which the agent sees as
	// tool.execution_progress events.
	sdk.AddTool(s, &sdk.Tool{
		Name:        "count_words",
		Description: "Counts the words of a text, slowly, reporting progress.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *sdk.CallToolRequest, in countIn) (*sdk.CallToolResult, struct {
		Words int `json:"words"`
	}, error) {
		var out struct {
			Words int `json:"words"`
		}
		lines := strings.Split(in.Text, "\n")
		for i, line := range lines {
			select {
			case <-ctx.Done():
				return nil, out, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			out.Words += len(strings.Fields(line))
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
					ProgressToken: tok, Progress: float64(i + 1), Total: float64(len(lines)),
					Message: fmt.Sprintf("line %d of %d", i+1, len(lines)),
				})
			}
		}
		return nil, out, nil
	})
	return s.Run(context.Background(), &sdk.StdioTransport{})
}
