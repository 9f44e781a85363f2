package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolloop/toolloop"
	"golang.org/x/sync/errgroup"
)

// Limits of grep_search.
const (
	defaultGrepResults = 100
	maxGrepResults     = 1000
	maxHitBytes        = 300
)

type grepSearchIn struct {
	Pattern         string `json:"pattern" jsonschema:"minLength=1" jsonschema_description:"RE2 regular expression (Go syntax; no lookaround or backreferences), matched against each line."`
	Path            string `json:"path,omitempty" jsonschema_description:"File or directory to search, relative to the workspace root. Default: the whole workspace."`
	Glob            string `json:"glob,omitempty" jsonschema_description:"Only search files whose path matches this glob, such as *.go or src/**/*.{ts,tsx}. A glob without / matches file names at any depth; one with / matches paths relative to the searched directory."`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema_description:"Ignore case when matching."`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"minimum=1,maximum=1000" jsonschema_description:"Most matching lines to return. Default 100."`
}

func (w *workspace) grepSearchTool() toolloop.Tool {
	desc := fmt.Sprintf(`Search the contents of files in the workspace for a regular expression, like grep -rn. Use it to find definitions, uses and error messages.

The pattern is an RE2 regular expression (Go syntax: no lookaround, no backreferences) matched against single lines; set case_insensitive to ignore case. Searches the whole workspace, or the file or folder given as path, optionally only files matching glob. Leaves out .git, node_modules, files that .gitignore ignores, binary files, files over %d bytes and symbolic links. Prints one matching line per result as "path:line: text", in path order, with long lines cut to about %d bytes around the match. A path with a control character or another unprintable character in it is shown Go-quoted (such as "a\nb.txt"), a form the other tools take too; in the text, control characters other than tab are shown as escapes (\r, \x1b, \u0085), while backslashes in the file are left as they are. Returns at most max_results lines (default %d, at most %d); when there are more it says so: narrow the pattern, the path or the glob rather than raising the limit.`,
		w.opts.MaxFileBytes, maxHitBytes, defaultGrepResults, maxGrepResults)
	return newTool(toolDef{name: GrepSearch, description: desc, annotations: titled(readOnly, "Search file contents")}, w.grepSearch)
}

// grepJob is a file to search: name in dir (or f, already open); seq
// orders the results.
type grepJob struct {
	seq  int
	rel  string
	dir  *dirRef
	name string
	f    *os.File
}

// dirRef is a directory handle shared by the jobs of the files in it, so
// that the workers, not the walker, open the files: opening is most of
// the work of a search, and so runs in parallel.
type dirRef struct {
	root *os.Root
	from *os.Root // the walker's handle it was opened from
	refs atomic.Int64
}

func (d *dirRef) release() {
	if d != nil && d.refs.Add(-1) == 0 {
		_ = d.root.Close()
	}
}

type grepHit struct {
	line int
	text string
}

type grepResult struct {
	seq     int
	rel     string
	hits    []grepHit
	skipped bool
}

func (w *workspace) grepSearch(ctx context.Context, _ *toolloop.Call, in *grepSearchIn) (*toolloop.ToolResult, error) {
	rel, err := w.rel(in.Path, true)
	if err != nil {
		return nil, err
	}
	s, err := newSearcher(in.Pattern, in.CaseInsensitive)
	if err != nil {
		return nil, err
	}
	limit := in.MaxResults
	if limit <= 0 {
		limit = defaultGrepResults
	}
	limit = min(limit, maxGrepResults)
	match, err := globFilter(in.Glob, display(rel))
	if err != nil {
		return nil, err
	}
	fi, err := w.root.Stat(rel)
	if err != nil {
		return nil, fsError(display(rel), err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	jobs := make(chan grepJob, 64)
	results := make(chan grepResult, 64)
	wk := w.walker()
	g.Go(func() error {
		defer close(jobs)
		send := func(j grepJob) error {
			select {
			case jobs <- j:
				return nil
			case <-gctx.Done():
				j.dir.release()
				if j.f != nil {
					_ = j.f.Close()
				}
				return errStop
			}
		}
		if !fi.IsDir() {
			f, err := openRead(w.root, rel)
			if err != nil {
				return fsError(display(rel), err)
			}
			_ = send(grepJob{rel: display(rel), f: f})
			return nil
		}
		seq := 0
		var cur *dirRef
		defer func() { cur.release() }()
		return wk.walk(gctx, rel, 0, func(dir *os.Root, child string, d fs.DirEntry, _ int) error {
			if !d.Type().IsRegular() || !match(child) {
				return nil
			}
			if cur == nil || cur.from != dir {
				cur.release()
				cur = nil
				r, err := dir.OpenRoot(".")
				if err != nil {
					return nil
				}
				cur = &dirRef{root: r, from: dir}
				cur.refs.Store(1)
			}
			cur.refs.Add(1)
			seq++
			return send(grepJob{seq: seq - 1, rel: child, dir: cur, name: d.Name()})
		})
	})
	var workers sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		workers.Go(func() {
			buf := make([]byte, 0, 64<<10)
			for j := range jobs {
				var r grepResult
				r, buf = w.grepFile(gctx, s, j, buf, limit+1)
				select {
				case results <- r:
				case <-gctx.Done():
				}
			}
		})
	}
	g.Go(func() error {
		workers.Wait()
		close(results)
		return nil
	})

	// Put the results back in walk order, and stop once there are more
	// matches than will be shown.
	pending := map[int]grepResult{}
	var hits []string
	next, files, skipped, more := 0, 0, 0, false
	for r := range results {
		if more {
			continue
		}
		pending[r.seq] = r
		for !more {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if r.skipped {
				skipped++
			}
			if len(r.hits) > 0 {
				files++
			}
			for _, h := range r.hits {
				if len(hits) == limit {
					more = true
					cancel()
					break
				}
				hits = append(hits, fmt.Sprintf("%s:%d: %s", quoteName(r.rel), h.line, h.text))
			}
		}
	}
	if err := g.Wait(); err != nil && !errors.Is(err, errStop) && !(more && errors.Is(err, context.Canceled)) {
		return nil, err
	}
	if err := ctx.Err(); err != nil && !more {
		return nil, err
	}
	return grepOutput(in, rel, hits, files, skipped, wk.skipped, more), nil
}

func grepOutput(in *grepSearchIn, rel string, hits []string, files, skipped, ignored int, more bool) *toolloop.ToolResult {
	var b strings.Builder
	for _, h := range hits {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	switch {
	case len(hits) == 0:
		fmt.Fprintf(&b, "[no matches for %q in %s", in.Pattern, shown(rel))
		if in.Glob != "" {
			fmt.Fprintf(&b, " (files matching %q)", in.Glob)
		}
		b.WriteString("]")
	case more:
		fmt.Fprintf(&b, "[showing the first %d matching lines; there are more. Narrow the search: a more specific pattern, a path or a glob]", len(hits))
	default:
		fmt.Fprintf(&b, "[%s in %s]", plural(len(hits), "matching line", "matching lines"), plural(files, "file", "files"))
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "\n[%s not searched: binary, or larger than the size limit]", plural(skipped, "file", "files"))
	}
	if ignored > 0 && len(hits) == 0 {
		fmt.Fprintf(&b, "\n[%s left out: .git, node_modules or .gitignore]", plural(ignored, "entry", "entries"))
	}
	r := toolloop.TextResult(b.String())
	r.Meta.Extra = map[string]any{"matches": len(hits), "truncated": more}
	return r
}

// grepFile opens, reads and searches one file, reusing buf.
func (w *workspace) grepFile(ctx context.Context, s *searcher, j grepJob, buf []byte, limit int) (grepResult, []byte) {
	r := grepResult{seq: j.seq, rel: j.rel}
	f := j.f
	if f == nil {
		var err error
		if ctx.Err() == nil {
			f, err = openRead(j.dir.root, j.name)
		}
		j.dir.release()
		if f == nil || err != nil {
			return r, buf // cancelled, gone, or swapped for a link that leads out
		}
	}
	defer f.Close()
	if ctx.Err() != nil {
		return r, buf
	}
	data, ok := readLimited(f, buf, w.opts.MaxFileBytes)
	buf = data[:0]
	if !ok || isBinary(data) {
		r.skipped = true
		return r, buf
	}
	r.hits = s.search(data, limit)
	return r, buf
}

// readLimited reads all of f into buf, growing it up to limit bytes; ok is
// false if f is larger or cannot be read.
func readLimited(f *os.File, buf []byte, limit int64) (data []byte, ok bool) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf, false
			}
			buf = append(buf, 0)[:len(buf)]
		}
		want := cap(buf) - len(buf)
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		// A short read of a regular file is its end (the file may grow
		// meanwhile; what was there is searched). Not asking again saves
		// a system call per file.
		if err == io.EOF || (err == nil && n > 0 && n < want) {
			return buf, int64(len(buf)) <= limit
		}
		if err != nil {
			return buf, false
		}
	}
}

// globFilter returns a test of workspace-relative paths against a glob
// relative to base.
func globFilter(glob, base string) (func(rel string) bool, error) {
	if glob == "" {
		return func(string) bool { return true }, nil
	}
	if !doublestar.ValidatePattern(glob) {
		return nil, invalid("the glob %q is not a valid pattern", glob)
	}
	byName := !strings.Contains(glob, "/")
	return func(rel string) bool {
		if byName {
			rel = rel[strings.LastIndexByte(rel, '/')+1:]
		} else if base != "." {
			rel = strings.TrimPrefix(rel, base+"/")
		}
		ok, _ := doublestar.Match(glob, rel)
		return ok
	}, nil
}

// searcher finds matching lines. A regular expression that needs some
// literal text to match is first looked for by that text, which is much
// faster than running the expression over every line.
type searcher struct {
	re  *regexp.Regexp
	lit []byte
}

func newSearcher(pattern string, fold bool) (*searcher, error) {
	flags := "(?m)"
	if fold {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, invalid("the pattern is not a valid RE2 regular expression: %v", err)
	}
	return &searcher{re: re, lit: requiredLiteral(flags + pattern)}, nil
}

// search returns up to limit matching lines of data.
func (s *searcher) search(data []byte, limit int) []grepHit {
	var hits []grepHit
	line, counted := 1, 0 // line is the number of the line starting at counted
	pos := 0
	for pos < len(data) && len(hits) < limit {
		var start int
		if s.lit != nil {
			i := bytes.Index(data[pos:], s.lit)
			if i < 0 {
				break
			}
			start = pos + i
		} else {
			loc := s.re.FindIndex(data[pos:])
			if loc == nil {
				break
			}
			start = pos + loc[0]
		}
		ls := bytes.LastIndexByte(data[:start], '\n') + 1
		le := bytes.IndexByte(data[start:], '\n')
		if le < 0 {
			le = len(data)
		} else {
			le += start
		}
		// The literal only makes the line a candidate, and a match found in
		// the whole text may run past the end of its line: either way the
		// line must match on its own.
		if text := data[ls:le]; s.re.Match(text) {
			line += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
			hits = append(hits, grepHit{line: line, text: s.excerpt(text)})
		}
		pos = le + 1
	}
	return hits
}

// excerpt returns the line as shown: CR removed, valid UTF-8, control
// characters escaped, and cut to about maxHitBytes around the match.
func (s *searcher) excerpt(line []byte) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) <= maxHitBytes {
		return escapeControls(strings.ToValidUTF8(string(line), "\uFFFD"))
	}
	str := string(line)
	from := 0
	if loc := s.re.FindIndex(line); loc != nil {
		from = runeStart(str, max(loc[0]-maxHitBytes/3, 0))
	}
	to := runeStart(str, min(from+maxHitBytes, len(str)))
	out := str[from:to]
	if from > 0 {
		out = "..." + out
	}
	if to < len(str) {
		out += fmt.Sprintf("... [line cut: %d bytes]", len(str))
	}
	return escapeControls(strings.ToValidUTF8(out, "\uFFFD"))
}

// escapeControls returns a line of text with the characters that could
// fake or hide output written as escapes: a carriage return as \r, the
// other C0 controls but tab, and DEL, as \xNN, and C1 controls and the
// Unicode line and paragraph separators as \uNNNN. Everything else,
// backslashes included, is left as it is: code is full of them.
func escapeControls(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		c := s[i]
		clean = (c >= 0x20 || c == '\t') && c != 0x7f && c != 0xc2 && c != 0xe2
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t' || (r >= 0x20 && r < 0x7f) || (r > 0x9f && r != 0x2028 && r != 0x2029):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
