package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolloop/toolloop"
)

// Limits of read_file.
const (
	defaultReadLines = 2000
	maxLineBytes     = 2000
)

type readFileIn struct {
	Path   string `json:"path" jsonschema_description:"File path, relative to the workspace root."`
	Offset int    `json:"offset,omitempty" jsonschema:"minimum=1" jsonschema_description:"First line to read, counting from 1. Default 1."`
	Limit  int    `json:"limit,omitempty" jsonschema:"minimum=1" jsonschema_description:"Most lines to read. Default 2000."`
}

func (w *workspace) readFileTool() toolloop.Tool {
	desc := fmt.Sprintf(`Read a UTF-8 text file in the workspace. Use it to look at a file before you edit it.

Returns the file's text exactly, without line numbers. By default it reads up to %d lines; offset and limit read a range of lines (offset counts from 1). Lines longer than %d bytes are cut, and at most %d bytes are returned in all: when the output stops early, a note at the end gives the range shown and the offset to continue from. Files over %d bytes and binary files are refused with an error; use grep_search or exec_shell for those. Paths are relative to the workspace root and cannot leave it.`,
		defaultReadLines, maxLineBytes, w.opts.MaxOutputBytes, w.opts.MaxFileBytes)
	return newTool(toolDef{name: ReadFile, description: desc, annotations: titled(readOnly, "Read file")}, w.readFile)
}

func (w *workspace) readFile(_ context.Context, _ *toolloop.Call, in *readFileIn) (*toolloop.ToolResult, error) {
	rel, err := w.rel(in.Path, false)
	if err != nil {
		return nil, err
	}
	data, fi, err := w.readText(rel)
	var be *binaryError
	if errors.As(err, &be) {
		r := toolloop.ErrorResult(invalid("%s", be.Error()))
		r.Meta.MIMEType = be.mime
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	mime := mimeType(rel, data)
	text := string(data)
	replaced := !utf8.ValidString(text)
	if replaced {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	total := countLines(text)
	first := max(in.Offset, 1)
	limit := in.Limit
	if limit <= 0 {
		limit = defaultReadLines
	}
	if total == 0 {
		r := toolloop.TextResult("")
		r.Content = append(r.Content, toolloop.TextContent("[the file is empty]"))
		return withReadMeta(r, mime, fi.Size(), 0, 0, 0), nil
	}
	if first > total {
		return nil, invalid("offset %d is past the end of %s, which has %s", first, shown(rel), plural(total, "line", "lines"))
	}

	var b strings.Builder
	rest := text
	for range first - 1 {
		_, rest, _ = strings.Cut(rest, "\n")
	}
	last, cut := first-1, 0
	for last < total && last-first+1 < limit {
		line, after, hasNL := strings.Cut(rest, "\n")
		long := len(line) > maxLineBytes
		if long {
			k := runeStart(line, maxLineBytes)
			line = line[:k] + fmt.Sprintf(" [... line cut: %d more bytes]", len(line)-k)
		}
		if hasNL {
			line += "\n"
		}
		if b.Len()+len(line) > w.opts.MaxOutputBytes && last >= first {
			break
		}
		b.WriteString(line)
		rest = after
		last++
		if long {
			cut++
		}
	}
	out := b.String()
	r := toolloop.TextResult(out)
	var notes []string
	if first > 1 || last < total {
		notes = append(notes, fmt.Sprintf("[showing lines %d-%d of %d", first, last, total))
		if last < total {
			notes[0] += fmt.Sprintf("; call read_file with offset=%d to read more]", last+1)
		} else {
			notes[0] += "]"
		}
	}
	if cut > 0 {
		notes = append(notes, fmt.Sprintf("[%s longer than %d bytes were cut]", plural(cut, "line", "lines"), maxLineBytes))
	}
	if replaced {
		notes = append(notes, "[the file is not valid UTF-8; invalid bytes are shown as U+FFFD]")
	}
	if len(notes) > 0 {
		sep := ""
		if !strings.HasSuffix(out, "\n") {
			sep = "\n"
		}
		r.Content = append(r.Content, toolloop.TextContent(sep+strings.Join(notes, "\n")))
	}
	return withReadMeta(r, mime, fi.Size(), total, first, last), nil
}

func withReadMeta(r *toolloop.ToolResult, mime string, size int64, total, first, last int) *toolloop.ToolResult {
	r.Meta.MIMEType = mime
	r.Meta.Extra = map[string]any{"size": size, "total_lines": total, "first_line": first, "last_line": last}
	return r
}

// countLines counts lines the way an editor does: a final line without a
// newline still counts.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// runeStart returns the largest i <= n that starts a rune of s.
func runeStart(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
