package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// The remote names of the resource tools (see ServerConfig.ResourceTools).
const (
	listResourcesTool = "list_resources"
	readResourceTool  = "read_resource"
	// resourceToolMeta is the key of the resource tools' metadata that
	// holds the source's resourceKey.
	resourceToolMeta = "toolloop/resource-tool"
)

// isResourceTool reports whether t is a resource tool this source added.
func (s *Source) isResourceTool(t *sdk.Tool) bool {
	return (t.Name == listResourcesTool || t.Name == readResourceTool) && t.Meta[resourceToolMeta] == s.cl.resourceKey
}

// addResourceTools adds the resource tools to the last page of a tool
// listing, when the source offers them and the server has resources. A
// server tool of the same name wins.
func (s *Source) addResourceTools(cs *sdk.ClientSession, tools []*sdk.Tool) []*sdk.Tool {
	if !s.cfg.ResourceTools {
		return tools
	}
	if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Resources == nil {
		return tools
	}
	no := false
	for _, name := range []string{listResourcesTool, readResourceTool} {
		if slices.ContainsFunc(tools, func(t *sdk.Tool) bool { return t != nil && t.Name == name }) {
			s.logger.Warn("mcp server has a tool named as a resource tool; the server's is used", "tool", name)
			continue
		}
		t := &sdk.Tool{
			Name: name,
			Annotations: &sdk.ToolAnnotations{
				ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no,
			},
		}
		if name == listResourcesTool {
			t.Title = "List the resources of the " + s.name + " MCP server"
			t.Description = "Lists the resources (documents, files, data) of the " + s.name +
				" MCP server, one per line: its URI, name, MIME type and description; then the URI templates of resources it can read on demand. Read one with " +
				ToolName(s.name, readResourceTool) + "."
			t.InputSchema = map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
		} else {
			t.Title = "Read a resource of the " + s.name + " MCP server"
			t.Description = "Reads a resource of the " + s.name + " MCP server by its URI, as listed by " +
				ToolName(s.name, listResourcesTool) + " (or a URI filled in from one of its templates)."
			t.InputSchema = map[string]any{
				"type": "object", "required": []any{"uri"}, "additionalProperties": false,
				"properties": map[string]any{"uri": map[string]any{"type": "string", "minLength": 1, "maxLength": maxURI, "description": "The resource's URI."}},
			}
		}
		t.Meta = sdk.Meta{resourceToolMeta: s.cl.resourceKey}
		tools = append(tools, t)
	}
	return tools
}

// runResourceTool answers a call to a resource tool.
func (s *Source) runResourceTool(ctx context.Context, remote string, call *toolloop.Call) (*toolloop.ToolResult, error) {
	budget := s.textBudget(call.MaxOutputBytes)
	switch remote {
	case readResourceTool:
		var args struct {
			URI string `json:"uri"`
		}
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return nil, toolloop.Errorf(toolloop.KindInvalidArgs, "arguments: %v", err)
		}
		content, err := s.readResource(ctx, args.URI, budget)
		if err != nil {
			return nil, resourceToolError(err)
		}
		return &toolloop.ToolResult{Status: toolloop.StatusOK, Content: content}, nil
	case listResourcesTool:
		var b strings.Builder
		n := 0
		for r, err := range s.Resources(ctx) {
			if err != nil {
				return nil, resourceToolError(err)
			}
			n++
			fmt.Fprintf(&b, "%s\t%s", r.URI, r.Name)
			if r.MIMEType != "" {
				fmt.Fprintf(&b, " (%s)", r.MIMEType)
			}
			if r.Description != "" {
				fmt.Fprintf(&b, ": %s", oneLine(r.Description))
			}
			b.WriteByte('\n')
			if b.Len() > budget {
				break
			}
		}
		if n == 0 {
			b.WriteString("The server lists no resources.\n")
		}
		first := true
		for t, err := range s.ResourceTemplates(ctx) {
			if err != nil || b.Len() > budget {
				break // a server may have resources and no templates
			}
			if first {
				b.WriteString("\nURI templates of resources the server can read:\n")
				first = false
			}
			fmt.Fprintf(&b, "%s\t%s", t.URITemplate, t.Name)
			if t.Description != "" {
				fmt.Fprintf(&b, ": %s", oneLine(t.Description))
			}
			b.WriteByte('\n')
		}
		return toolloop.TextResult(toolloop.TruncateText(b.String(), budget)), nil
	}
	return nil, toolloop.Errorf(toolloop.KindNotFound, "no resource tool %q", remote)
}

// resourceToolError makes err a tool error the model sees.
func resourceToolError(err error) error {
	if te := (*toolloop.ToolError)(nil); errors.As(err, &te) {
		return err
	}
	if errors.Is(err, ErrClosed) {
		return toolloop.Errorf(toolloop.KindExecutionFailed, "%v", err)
	}
	return err
}

// oneLine keeps a description on one line, and short.
func oneLine(s string) string {
	return toolloop.TruncateText(strings.Join(strings.Fields(s), " "), 512)
}
