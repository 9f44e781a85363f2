package builtin

import (
	"context"
	"fmt"

	"github.com/toolloop/toolloop"
)

type writeFileIn struct {
	Path    string `json:"path" jsonschema_description:"File path, relative to the workspace root. Missing parent folders are created."`
	Content string `json:"content" jsonschema_description:"The complete new content of the file."`
}

func (w *workspace) writeFileTool() toolloop.Tool {
	desc := fmt.Sprintf(`Create a file, or replace a file's whole content, in the workspace. Creates missing parent folders.

The write is atomic: the content goes to a temporary file that is then renamed over the target, so the file is never left half written. An existing file keeps its permissions. To change part of an existing file, prefer edit_file or apply_patch, which do not need the whole content. Content is limited to %d bytes. Directories and symbolic links cannot be overwritten. Paths are relative to the workspace root and cannot leave it.`,
		w.opts.MaxFileBytes)
	return newTool(toolDef{name: WriteFile, description: desc, annotations: titled(idempotent(writes), "Write file"), exclusive: true}, w.writeFile)
}

func idempotent(a toolloop.Annotations) toolloop.Annotations {
	a.Idempotent = true
	return a
}

func (w *workspace) writeFile(_ context.Context, _ *toolloop.Call, in *writeFileIn) (*toolloop.ToolResult, error) {
	rel, err := w.rel(in.Path, false)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, invalid("the path names the workspace root, which is a directory")
	}
	if int64(len(in.Content)) > w.opts.MaxFileBytes {
		return nil, invalid("the content is %d bytes, more than the %d-byte limit", len(in.Content), w.opts.MaxFileBytes)
	}
	c, err := w.target(rel)
	if err != nil {
		return nil, err
	}
	c.data = []byte(in.Content)
	if err := w.commit([]*fileChange{c}); err != nil {
		return nil, err
	}
	verb := "created"
	if c.existed {
		verb = "overwrote"
	}
	r := toolloop.TextResult(fmt.Sprintf("%s %s: %d bytes, %s", verb, shown(rel), len(in.Content), plural(countLines(in.Content), "line", "lines")))
	r.Meta.Extra = map[string]any{"path": display(rel), "bytes": len(in.Content), "created": !c.existed}
	return r, nil
}
