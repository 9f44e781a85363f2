package view

import (
	"encoding/json"
	"strconv"
	"strings"
)

// diffFile is the change a call made to one file, as lines of a unified
// diff: each line starts with its kind, '+' added, '-' removed, ' '
// context, '@' a hunk header, 'h' a file header, '…' lines left out.
type diffFile struct {
	Path  string   `json:"path"`
	Note  string   `json:"note,omitempty"`
	Lines []string `json:"lines"`
}

// The bounds of a call's diff on the page.
const (
	diffLines     = 400 // lines of one call's diff
	diffLineBytes = 400 // bytes of one line
	// lcsCells bounds the line diff of one edit: above it, the edit shows
	// as its old lines removed and its new lines added.
	lcsCells = 250_000
)

// fileDiff returns the change a successful call of a builtin file tool
// made, from its arguments (the ones it ran with): write_file's content,
// edit_file's replacements, apply_patch's patch. Other tools, and
// arguments that do not parse, give nil.
func fileDiff(tool string, args json.RawMessage, extra map[string]any) []*diffFile {
	if len(args) == 0 {
		return nil
	}
	var out []*diffFile
	switch tool {
	case "write_file":
		var in struct {
			Path    string  `json:"path"`
			Content *string `json:"content"`
		}
		if json.Unmarshal(args, &in) != nil || in.Path == "" || in.Content == nil {
			return nil
		}
		d := &diffFile{Path: in.Path, Note: "file written; its earlier content is not in the log"}
		if created, _ := extra["created"].(bool); created {
			d.Note = "new file"
		}
		d.Lines = append(d.Lines, "@@ -0,0 +1,"+strconv.Itoa(countLines(*in.Content))+" @@")
		for _, l := range splitLines(*in.Content) {
			d.Lines = append(d.Lines, "+"+l)
		}
		out = append(out, d)
	case "edit_file":
		var in struct {
			Path  string `json:"path"`
			Edits []struct {
				Old        string `json:"old_string"`
				New        string `json:"new_string"`
				ReplaceAll bool   `json:"replace_all"`
			} `json:"edits"`
		}
		if json.Unmarshal(args, &in) != nil || in.Path == "" || len(in.Edits) == 0 {
			return nil
		}
		d := &diffFile{Path: in.Path}
		for i, ed := range in.Edits {
			head := "@@ edit " + strconv.Itoa(i+1)
			if ed.ReplaceAll {
				head += ", every occurrence"
			}
			d.Lines = append(d.Lines, head+" @@")
			d.Lines = append(d.Lines, lineDiff(splitLines(ed.Old), splitLines(ed.New))...)
		}
		out = append(out, d)
	case "apply_patch":
		var in struct {
			Patch string `json:"patch"`
		}
		if json.Unmarshal(args, &in) != nil || in.Patch == "" {
			return nil
		}
		out = patchDiff(in.Patch)
	default:
		return nil
	}
	bound(out)
	return out
}

// patchDiff splits a patch (the "*** Begin Patch" form or a unified diff)
// into files and classifies its lines.
func patchDiff(patch string) []*diffFile {
	var out []*diffFile
	var cur *diffFile
	open := func(path string) {
		cur = &diffFile{Path: path}
		out = append(out, cur)
	}
	for _, l := range splitLines(patch) {
		switch {
		case strings.HasPrefix(l, "*** Add File: "), strings.HasPrefix(l, "*** Update File: "), strings.HasPrefix(l, "*** Delete File: "):
			_, path, _ := strings.Cut(l, ": ")
			open(strings.TrimSpace(path))
			cur.Note = strings.TrimSuffix(strings.TrimPrefix(strings.Fields(l)[1], "*** "), ":") // Add, Update, Delete
			cur.Note = strings.ToLower(cur.Note)
			continue
		case strings.HasPrefix(l, "diff --git "):
			open(strings.TrimPrefix(l, "diff --git "))
			continue
		case strings.HasPrefix(l, "*** Begin Patch"), strings.HasPrefix(l, "*** End Patch"):
			continue
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
			if cur == nil || (strings.HasPrefix(l, "--- ") && len(cur.Lines) > 0 && cur.Lines[len(cur.Lines)-1][0] != 'h') {
				open(strings.TrimPrefix(l, "--- "))
			}
			if strings.HasPrefix(l, "+++ ") && !strings.HasPrefix(l, "+++ /dev/null") {
				cur.Path = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			}
			cur.Lines = append(cur.Lines, "h"+l)
			continue
		}
		if cur == nil {
			open("patch")
		}
		switch {
		case strings.HasPrefix(l, "@@"):
			cur.Lines = append(cur.Lines, "@"+l)
		case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"), strings.HasPrefix(l, " "):
			cur.Lines = append(cur.Lines, l)
		case strings.HasPrefix(l, "*** "), strings.HasPrefix(l, "index "), strings.HasPrefix(l, "\\"):
			cur.Lines = append(cur.Lines, "h"+l)
		default:
			cur.Lines = append(cur.Lines, " "+l)
		}
	}
	return out
}

// lineDiff is a line diff of a and b: their common lines as context, the
// others removed and added, from a longest common subsequence; inputs too
// large for that show all of a removed and all of b added.
func lineDiff(a, b []string) []string {
	// Common prefix and suffix first: most edits change a few lines.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]string, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		out = append(out, " "+l)
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) > lcsCells {
		for _, l := range ma {
			out = append(out, "-"+l)
		}
		for _, l := range mb {
			out = append(out, "+"+l)
		}
	} else {
		out = append(out, lcsDiff(ma, mb)...)
	}
	for _, l := range a[len(a)-suf:] {
		out = append(out, " "+l)
	}
	return out
}

func lcsDiff(a, b []string) []string {
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, " "+a[i])
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, "-"+a[i])
	}
	for ; j < len(b); j++ {
		out = append(out, "+"+b[j])
	}
	return out
}

// bound cuts a call's diff to diffLines lines of at most diffLineBytes
// bytes each, marking what it left out.
func bound(files []*diffFile) {
	left := diffLines
	for _, f := range files {
		if len(f.Lines) > left {
			n := len(f.Lines) - left
			f.Lines = append(f.Lines[:left:left], "…"+strconv.Itoa(n)+" more lines")
		}
		left = max(left-len(f.Lines), 0)
		for i, l := range f.Lines {
			if len(l) > diffLineBytes {
				k := diffLineBytes
				for k > 0 && !utf8Start(l[k]) {
					k--
				}
				f.Lines[i] = l[:k] + " …(" + strconv.Itoa(len(l)-k) + " more bytes)"
			}
		}
	}
}

// splitLines splits s into lines without their endings; a final line
// ending adds no empty line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	return strings.Split(s, "\n")
}

func countLines(s string) int { return len(splitLines(s)) }
