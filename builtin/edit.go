package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
)

// maxMatchLines is how many match locations an error lists.
const maxMatchLines = 10

type editFileIn struct {
	Path  string `json:"path" jsonschema_description:"File path, relative to the workspace root. The file must exist."`
	Edits []edit `json:"edits" jsonschema:"minItems=1" jsonschema_description:"Replacements to make, applied in order, each to the text the ones before it left."`
}

type edit struct {
	OldString  string `json:"old_string" jsonschema:"minLength=1" jsonschema_description:"Exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is set."`
	NewString  string `json:"new_string" jsonschema_description:"Text to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema_description:"Replace every occurrence of old_string instead of requiring exactly one."`
}

func (w *workspace) editFileTool() toolloop.Tool {
	desc := fmt.Sprintf(`Edit a text file in the workspace by exact string replacement. Read the file first.

Each edit replaces old_string with new_string. old_string must match the file exactly (whitespace, indentation and line endings included) and exactly once, unless replace_all is set; include enough surrounding lines to make it unique. Several edits are applied in order, each to the result of the ones before, and the file is written only if every edit applies: if any fails, the file is left unchanged and the error says which edit failed, how many times its old_string matched and on which lines. The write is atomic. Files over %d bytes and binary files are refused. To create a file use write_file; for changes across many places or files, apply_patch may be easier.`,
		w.opts.MaxFileBytes)
	return newTool(toolDef{name: EditFile, description: desc, annotations: titled(writes, "Edit file"), exclusive: true}, w.editFile)
}

func (w *workspace) editFile(_ context.Context, _ *toolloop.Call, in *editFileIn) (*toolloop.ToolResult, error) {
	rel, err := w.rel(in.Path, false)
	if err != nil {
		return nil, err
	}
	if len(in.Edits) == 0 {
		return nil, invalid("no edits given")
	}
	c, err := w.target(rel)
	if err != nil {
		return nil, err
	}
	if !c.existed {
		return nil, invalid("%s does not exist; use write_file to create it", shown(rel))
	}
	data, _, err := w.readText(rel)
	var be *binaryError
	if errors.As(err, &be) {
		return nil, invalid("%s", be.Error())
	}
	if err != nil {
		return nil, err
	}
	text := string(data)
	replacements := 0
	for i, e := range in.Edits {
		n, next, err := applyEdit(text, e)
		if err != nil {
			where := ""
			if len(in.Edits) > 1 {
				where = fmt.Sprintf("edit %d of %d: ", i+1, len(in.Edits))
				if i > 0 {
					err = errors.Join(err, errors.New("(the edits before it were applied first; old_string must match the text as they left it)"))
				}
			}
			return nil, invalid("%s%s: %v; the file was not changed", where, shown(rel), err)
		}
		text = next
		replacements += n
	}
	if int64(len(text)) > w.opts.MaxFileBytes {
		return nil, invalid("the edited file would be %d bytes, more than the %d-byte limit; the file was not changed", len(text), w.opts.MaxFileBytes)
	}
	c.data = []byte(text)
	if err := w.commit([]*fileChange{c}); err != nil {
		return nil, err
	}
	r := toolloop.TextResult(fmt.Sprintf("edited %s: %s, %s; the file now has %s",
		shown(rel), plural(len(in.Edits), "edit", "edits"), plural(replacements, "replacement", "replacements"),
		plural(countLines(text), "line", "lines")))
	r.Meta.Extra = map[string]any{"path": display(rel), "edits": len(in.Edits), "replacements": replacements}
	return r, nil
}

// applyEdit makes one edit to text and returns how many replacements it
// made, or an error saying why it cannot.
func applyEdit(text string, e edit) (int, string, error) {
	if e.OldString == "" {
		return 0, "", errors.New("old_string is empty")
	}
	if e.OldString == e.NewString {
		return 0, "", errors.New("old_string and new_string are the same, so the edit would change nothing")
	}
	n := strings.Count(text, e.OldString)
	switch {
	case n == 0:
		return 0, "", notFound(text, e.OldString)
	case n > 1 && !e.ReplaceAll:
		return 0, "", fmt.Errorf("old_string matches %d times, at %s; include more surrounding text to make it match exactly once, or set replace_all to replace every match",
			n, matchLines(text, e.OldString))
	case e.ReplaceAll:
		return n, strings.ReplaceAll(text, e.OldString, e.NewString), nil
	}
	return 1, strings.Replace(text, e.OldString, e.NewString, 1), nil
}

// matchLines lists the lines on which old starts in text.
func matchLines(text, old string) string {
	var lines []string
	line, pos := 1, 0
	for len(lines) < maxMatchLines {
		i := strings.Index(text[pos:], old)
		if i < 0 {
			break
		}
		line += strings.Count(text[pos:pos+i], "\n")
		lines = append(lines, fmt.Sprint(line))
		line += strings.Count(old, "\n")
		pos += i + len(old)
	}
	s := "lines " + strings.Join(lines, ", ")
	if len(lines) == 1 {
		s = "line " + lines[0]
	}
	if strings.Count(text, old) > len(lines) {
		s += ", ..."
	}
	return s
}

// notFound explains a missing old_string, pointing at a near match when
// only whitespace or line endings differ.
func notFound(text, old string) error {
	msg := "old_string was not found"
	switch {
	case strings.Contains(text, "\r\n") && !strings.Contains(old, "\r\n") && strings.Contains(text, strings.ReplaceAll(old, "\n", "\r\n")):
		msg += "; the file has CRLF (\\r\\n) line endings, and old_string matches once its line endings are \\r\\n too"
	default:
		if line := fuzzyLine(text, old); line > 0 {
			msg += fmt.Sprintf("; text that differs only in whitespace starts at line %d: read the file again and copy it exactly", line)
		} else {
			msg += "; read the file again and copy the text exactly"
		}
	}
	return errors.New(msg)
}

// fuzzyLine returns the line where old would match if runs of spaces and
// tabs did not matter, or 0.
func fuzzyLine(text, old string) int {
	norm := func(s string) []string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.Join(strings.Fields(l), " ")
		}
		return lines
	}
	want := norm(strings.Trim(old, "\n"))
	have := norm(text)
	if len(want) == 0 || (len(want) == 1 && want[0] == "") {
		return 0
	}
	for i := 0; i+len(want) <= len(have); i++ {
		ok := true
		for j := range want {
			h := have[i+j]
			switch {
			case j == 0 && len(want) > 1:
				ok = strings.HasSuffix(h, want[j])
			case j == len(want)-1 && len(want) > 1:
				ok = strings.HasPrefix(h, want[j])
			case len(want) == 1:
				ok = strings.Contains(h, want[j])
			default:
				ok = h == want[j]
			}
			if !ok {
				break
			}
		}
		if ok {
			return i + 1
		}
	}
	return 0
}
