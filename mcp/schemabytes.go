package mcp

import (
	"context"
	"encoding/json"
	"iter"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A listed tool's schemas reach the model as the server wrote them, keys
// in the server's order: the SDK decodes them into maps, whose encoding
// sorts the keys, so the schemas are taken from the raw answer to
// tools/list instead (see capture), where the transport lets the package
// read it (stdio, streamable HTTP, SSE). Over a Transport of your own
// they are the SDK's maps, keys sorted. Either way the same tools give
// the same bytes every time they are listed.

// toolPages lists the server's tools, page by page, as
// [sdk.ClientSession.Tools] does, with each tool's schemas as the server
// wrote them where the raw answer could be read.
func toolPages(ctx context.Context, cs *sdk.ClientSession) iter.Seq2[*sdk.Tool, error] {
	return func(yield func(*sdk.Tool, error) bool) {
		params := &sdk.ListToolsParams{}
		for {
			cp := &capture{}
			res, err := cs.ListTools(withCapture(ctx, cp), params)
			if err != nil {
				yield(nil, err)
				return
			}
			keepSchemas(res.Tools, cp.raw())
			for _, t := range res.Tools {
				if !yield(t, nil) {
					return
				}
			}
			if res.NextCursor == "" {
				return
			}
			params = &sdk.ListToolsParams{Cursor: res.NextCursor}
		}
	}
}

// keepSchemas replaces the decoded schemas of tools with the raw ones of
// the same tools in raw, the tools/list result they were decoded from.
func keepSchemas(tools []*sdk.Tool, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var page struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(raw, &page) != nil || len(page.Tools) != len(tools) {
		return
	}
	for i, t := range tools {
		if t == nil || page.Tools[i].Name != t.Name {
			return // not the answer the tools were decoded from
		}
	}
	for i, t := range tools {
		r := page.Tools[i]
		if t.InputSchema != nil && len(r.InputSchema) > 0 {
			t.InputSchema = r.InputSchema
		}
		if t.OutputSchema != nil && len(r.OutputSchema) > 0 {
			t.OutputSchema = r.OutputSchema
		}
	}
}
