package mcp

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// toResult turns a server's answer into a ToolResult:
//
//   - text, image and audio blocks become blocks of the same type;
//   - a resource link becomes a resource block with its URI and MIME type;
//   - an embedded resource becomes a resource block with its text or bytes;
//   - structured content is sent once: not at all when the text carries
//     the same information, as a JSON block after the others when the
//     text says something else, alone when there is no other content (see
//     [mergeStructured]);
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
		content = mergeStructured(content, res.Content, res.StructuredContent)
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

// mergeStructured adds a server's structured content to the converted
// content blocks, so that the model gets it once:
//
//   - when there is no content at all, the structured content is sent, as
//     a JSON block;
//   - when a text block (or the text blocks together) carries the same
//     information, only the text is sent (see [carries]);
//   - otherwise the text is a summary that says something else, and both
//     are sent: the text, then the JSON.
//
// blocks are the server's own blocks, for servers whose structured content
// repeats them (as server-filesystem's read_media_file does).
func mergeStructured(content []toolloop.Content, blocks []sdk.Content, structured any) []toolloop.Content {
	raw, err := json.Marshal(structured)
	if err != nil || string(raw) == "null" {
		return content
	}
	if len(content) == 0 {
		return append(content, toolloop.JSONContent(raw))
	}
	if carries(content, blocks, structured, raw) {
		return content
	}
	return append(content, toolloop.JSONContent(raw))
}

// carries reports whether the content carries what the structured value
// (raw, its JSON) says, so that sending both would send it twice. It does
// when, for the text of one text block or of all of them joined by
// newlines:
//
//   - the text is JSON for the same value (the protocol's own advice to
//     servers; server-everything, server-memory's read_graph,
//     server-sequential-thinking);
//   - the value is an object whose string members, joined in the text's
//     order (without a separator, or with newlines), are the text, its
//     other members being only booleans (server-filesystem's
//     {"content": text}; server-memory's {"success": true, "message": text});
//   - the value is an object of one member whose value the text is JSON
//     for (server-memory's {"entities": [...]} beside the array's JSON);
//   - or the value, or its one member, is the server's content blocks
//     themselves (server-filesystem's read_media_file).
//
// A structured copy that the output budget cut (its string bears the cut
// marker) still matches a text that begins with its head and ends with its
// tail, and one that the budget left empty ({"_truncated": ...}) matches
// any text: it is a duplicate too large to send again.
func carries(content []toolloop.Content, blocks []sdk.Content, structured any, raw []byte) bool {
	var texts []string
	for _, c := range content {
		if c.Type == toolloop.ContentText {
			texts = append(texts, c.Text)
		}
	}
	if len(texts) > 1 {
		texts = append(texts, strings.Join(texts, "\n"))
	}
	obj, isObj := structured.(map[string]any)
	if isObj && len(texts) > 0 && len(obj) == 1 && obj["_truncated"] != nil {
		return true
	}
	var only any // the value of an object's one member
	if isObj && len(obj) == 1 {
		for _, v := range obj {
			only = v
		}
	}
	for _, t := range texts {
		if sameJSON(t, raw) || isObj && stringMembers(t, obj) {
			return true
		}
		if only != nil {
			if b, err := json.Marshal(only); err == nil && sameJSON(t, b) {
				return true
			}
		}
	}
	if len(blocks) > 0 {
		b, err := json.Marshal(blocks)
		if err == nil && (sameJSON(string(b), raw) || only != nil && sameValue(b, only)) {
			return true
		}
	}
	return false
}

// stringMembers reports whether the string members of obj, joined in the
// order they appear in text, are text, obj's other members being booleans.
func stringMembers(text string, obj map[string]any) bool {
	var strs []string
	for _, v := range obj {
		switch v := v.(type) {
		case string:
			strs = append(strs, v)
		case bool:
		default:
			return false
		}
	}
	switch len(strs) {
	case 0:
		return false
	case 1:
		return sameText(text, strs[0])
	}
	for _, sep := range []string{"", "\n"} {
		if joins(text, strs, sep) {
			return true
		}
	}
	return false
}

// joins reports whether text is the strings joined by sep, in some order.
func joins(text string, strs []string, sep string) bool {
	rest := slices.Clone(strs)
	for len(rest) > 0 {
		found := false
		for i, s := range rest {
			if !strings.HasPrefix(text, s) {
				continue
			}
			after := text[len(s):]
			if len(rest) > 1 {
				if !strings.HasPrefix(after, sep) {
					continue
				}
				after = after[len(sep):]
			}
			text, rest, found = after, slices.Delete(rest, i, i+1), true
			break
		}
		if !found {
			return false
		}
	}
	return text == ""
}

// sameText reports whether s is text, or a copy of it that the output
// budget cut in the middle: its head and tail around the cut marker are
// text's own, and the marker gives text's whole size (or the size text's
// own marker gives, when text was cut too).
func sameText(text, s string) bool {
	if s == text {
		return true
	}
	loc := cutMarker.FindStringSubmatchIndex(s)
	if loc == nil {
		return false
	}
	head := strings.TrimSuffix(s[:loc[0]], "\n")
	tail := strings.TrimPrefix(s[loc[1]:], "\n")
	whole := s[loc[2]:loc[3]]
	size := strconv.Itoa(len(text))
	if m := cutMarker.FindStringSubmatch(text); m != nil {
		size = m[1]
	}
	return whole == size && strings.HasPrefix(text, head) && strings.HasSuffix(text, tail)
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

// sameValue reports whether the JSON b encodes the decoded value v.
func sameValue(b []byte, v any) bool {
	c, err := json.Marshal(v)
	return err == nil && sameJSON(string(b), c)
}
