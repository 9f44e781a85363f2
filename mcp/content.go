package mcp

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// toResult turns a server's answer into a ToolResult:
//
//   - text, image and audio blocks become blocks of the same type;
//   - a resource link becomes a resource block with its URI and MIME type;
//   - an embedded resource becomes a resource block with its text or bytes;
//   - structured content becomes a JSON block, in place of the text block
//     that carries the same JSON (as the protocol asks servers to send), or
//     after the other blocks when there is no such text block;
//   - isError makes the result an error of kind execution_failed whose
//     message is the server's text.
//
// Meta.MIMEType is set when the result is a single non-text block.
func toResult(res *sdk.CallToolResult) *toolloop.ToolResult {
	content := make([]toolloop.Content, 0, len(res.Content)+1)
	for _, c := range res.Content {
		if tc, ok := convertContent(c); ok {
			content = append(content, tc)
		}
	}
	if res.StructuredContent != nil {
		content = mergeStructured(content, res.StructuredContent)
	}
	r := &toolloop.ToolResult{Status: toolloop.StatusOK, Content: content}
	markCut(r)
	if len(content) == 1 && content[0].Type != toolloop.ContentText {
		r.Meta.MIMEType = content[0].MIMEType
		if content[0].Type == toolloop.ContentJSON {
			r.Meta.MIMEType = "application/json"
		}
	}
	if res.IsError {
		r.Status = toolloop.StatusError
		msg := r.Text()
		if msg == "" {
			msg = "the MCP tool reported an error without a message"
		}
		r.Error = &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: msg}
	}
	return r
}

// cutMarker and blocksCutMarker find the notes the stream's clipper leaves
// where it cut a result on its way in (see clip.go).
var (
	cutMarker       = regexp.MustCompile(`\[\.\.\. \d+ of (\d+) bytes cut from the middle of this output \.\.\.\]`)
	blocksCutMarker = regexp.MustCompile(`^\[\.\.\. \d+ of \d+ content blocks cut to fit the output budget:`)
)

// markCut records in r's metadata that the clipper cut it: Truncated, and
// in Bytes the size of the text the server sent (a cut block's marker
// gives its whole size).
func markCut(r *toolloop.ToolResult) {
	size := 0
	for _, c := range r.Content {
		n := len(c.Text) + len(c.JSON)
		if c.Type == toolloop.ContentText {
			if blocksCutMarker.MatchString(c.Text) {
				r.Meta.Truncated = true
			}
			if m := cutMarker.FindStringSubmatch(c.Text); m != nil {
				n, _ = strconv.Atoi(m[1])
				r.Meta.Truncated = true
			}
		}
		size += n
	}
	if r.Meta.Truncated {
		r.Meta.Bytes = size
	}
}

// convertContent converts one block. Blocks that cannot appear in a tool
// result (sampling's tool use and tool result blocks) are dropped.
func convertContent(c sdk.Content) (toolloop.Content, bool) {
	switch c := c.(type) {
	case *sdk.TextContent:
		return toolloop.TextContent(c.Text), true
	case *sdk.ImageContent:
		return toolloop.Content{Type: toolloop.ContentImage, MIMEType: c.MIMEType, Data: c.Data}, true
	case *sdk.AudioContent:
		return toolloop.Content{Type: toolloop.ContentAudio, MIMEType: c.MIMEType, Data: c.Data}, true
	case *sdk.ResourceLink:
		return toolloop.Content{Type: toolloop.ContentResource, URI: c.URI, MIMEType: c.MIMEType}, true
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return toolloop.Content{}, false
		}
		return toolloop.Content{Type: toolloop.ContentResource, URI: c.Resource.URI, MIMEType: c.Resource.MIMEType,
			Text: c.Resource.Text, Data: c.Resource.Blob}, true
	}
	return toolloop.Content{}, false
}

// mergeStructured adds a server's structured content as a JSON block,
// replacing the text block that holds the same value.
func mergeStructured(content []toolloop.Content, structured any) []toolloop.Content {
	raw, err := json.Marshal(structured)
	if err != nil {
		return content
	}
	for i, c := range content {
		if c.Type == toolloop.ContentText && sameJSON(c.Text, raw) {
			content[i] = toolloop.JSONContent(raw)
			return content
		}
	}
	return append(content, toolloop.JSONContent(raw))
}

// sameJSON reports whether text is JSON for the same value as canonical,
// which json.Marshal produced (so its object keys are sorted).
func sameJSON(text string, canonical []byte) bool {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return false
	}
	b, err := json.Marshal(v)
	return err == nil && bytes.Equal(b, canonical)
}
