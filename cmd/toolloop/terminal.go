package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/toolloop/toolloop"
)

// lineReader reads lines from the terminal on demand: a goroutine reads
// one line only when asked, so that nothing is read ahead of an editor
// the user is sent to, and a wait for a line can be abandoned (Ctrl-C).
type lineReader struct {
	r    *bufio.Reader
	once sync.Once
	req  chan struct{}
	res  chan lineResult
	// mu guards pending: a line was asked for and not yet taken; and
	// err, the error that ended the input, returned to every later read.
	mu      sync.Mutex
	pending bool
	err     error
}

type lineResult struct {
	line string
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReader(r), req: make(chan struct{}), res: make(chan lineResult, 1)}
}

// start runs the reading goroutine. It ends at the end of the input; a
// process whose input stays open ends with it blocked in a read.
func (l *lineReader) start() {
	go func() {
		for range l.req {
			s, err := l.r.ReadString('\n')
			if err != nil && s != "" {
				err = nil // a last line without a newline
			}
			l.res <- lineResult{strings.TrimRight(s, "\r\n"), err}
			if err != nil {
				return
			}
		}
	}()
}

// busy reports that a line was asked for and not yet taken: the reading
// goroutine waits for it.
func (l *lineReader) busy() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending
}

// close ends the reading goroutine if it waits for a request.
func (l *lineReader) close() {
	l.once.Do(func() {})
	close(l.req)
}

// readLine returns the next line, or ctx's error if ctx ends first (the
// line then goes to the next readLine), or an interrupt from ints.
// One goroutine at a time may read.
func (l *lineReader) readLine(ctx context.Context, ints <-chan os.Signal) (string, error) {
	l.once.Do(l.start)
	l.mu.Lock()
	pending, err := l.pending, l.err
	l.mu.Unlock()
	if err != nil {
		return "", err
	}
	if !pending {
		select {
		case l.req <- struct{}{}:
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
		l.mu.Lock()
		l.pending = true
		l.mu.Unlock()
	}
	select {
	case r := <-l.res:
		l.mu.Lock()
		l.pending, l.err = false, r.err
		l.mu.Unlock()
		return r.line, r.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	case <-ints:
		return "", errInterrupted
	}
}

// terminal asks the person at the terminal about calls, one at a time.
type terminal struct {
	mu     sync.Mutex // one question at a time
	in     *lineReader
	out    io.Writer
	getenv func(string) string
	// editorIO is what an editor runs with.
	editorIn  io.Reader
	editorOut io.Writer
	reg       *toolloop.ToolRegistry
	yes       bool // approve every ask without asking
	// hold, if set, takes the terminal from what reads it while a run
	// works, for a question, until release.
	hold func() (release func())
}

// Approve implements toolloop.Approver: the person at the terminal
// answers y, n, or e to edit the arguments first. Edited arguments go to
// the loop with the approval (toolloop.Approval.Arguments), so the loop
// validates them again, records the change as the person's, and tells
// the model the call ran with them; the log's permission.completed holds
// them.
func (t *terminal) Approve(ctx context.Context, call *toolloop.Call, reason string) (toolloop.Approval, error) {
	a, edited := t.ask(ctx, call, call.Arguments, reason)
	a.Arguments = edited
	return a, nil
}

// ask asks about one call: y runs it, n refuses it, e edits its arguments
// (in $EDITOR, or typed as JSON) and asks again about the edited call.
// It returns the answer and the edited arguments, if any.
func (t *terminal) ask(ctx context.Context, call *toolloop.Call, args json.RawMessage, reason string) (toolloop.Approval, json.RawMessage) {
	return t.askOnly(ctx, call.Name, args, reason, true)
}

func (t *terminal) askOnly(ctx context.Context, name string, args json.RawMessage, reason string, canEdit bool) (toolloop.Approval, json.RawMessage) {
	if t.yes {
		return toolloop.Approval{Approved: true, Reason: "approved by -yes"}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hold != nil {
		defer t.hold()()
	}
	var edited json.RawMessage
	for {
		fmt.Fprintf(t.out, "\n? %s %s\n  %s\n", name, clean(string(args)), clean(orDefault(reason, "the guard asks")))
		if canEdit {
			fmt.Fprint(t.out, "  run it? [y]es, [n]o, [e]dit the arguments: ")
		} else {
			fmt.Fprint(t.out, "  run it? [y]es, [n]o: ")
		}
		line, err := t.in.readLine(ctx, nil)
		if err != nil {
			fmt.Fprintln(t.out)
			why := "no answer: " + err.Error()
			if errors.Is(err, io.EOF) {
				why = "no answer: the terminal's input ended"
			} else if errors.Is(err, errInterrupted) || ctx.Err() != nil {
				why = "no answer: the turn was cancelled"
			}
			return toolloop.Approval{Approved: false, Reason: why}, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			if edited != nil {
				return toolloop.Approval{Approved: true, Reason: "approved at the terminal with edited arguments"}, edited
			}
			return toolloop.Approval{Approved: true, Reason: "approved at the terminal"}, nil
		case "n", "no":
			return toolloop.Approval{Approved: false, Reason: "the user declined the call at the terminal"}, nil
		case "e", "edit":
			if !canEdit {
				continue
			}
			na, err := t.edit(ctx, name, args)
			if err != nil {
				fmt.Fprintf(t.out, "  the arguments were not changed: %v\n", err)
				continue
			}
			args, edited = na, na
		}
	}
}

// edit returns new arguments for a call: edited in $EDITOR (VISUAL, then
// EDITOR) when one is set, otherwise typed as JSON on one line. They must
// be a JSON object that the tool's input schema accepts.
func (t *terminal) edit(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	var raw []byte
	if ed := orDefault(t.getenv("VISUAL"), t.getenv("EDITOR")); ed != "" {
		var pretty bytes.Buffer
		if json.Indent(&pretty, args, "", "  ") != nil {
			pretty.Reset()
			pretty.Write(args)
		}
		dir, err := os.MkdirTemp("", "toolloop-edit-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		f := filepath.Join(dir, name+".json")
		if err := os.WriteFile(f, append(pretty.Bytes(), '\n'), 0o600); err != nil {
			return nil, err
		}
		// The editor command may hold flags ("code -w"): run it through
		// the shell, with the file as an argument it cannot misread.
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", ed+` "$1"`, "editor", f)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = t.editorIn, t.editorOut, t.editorOut
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("the editor failed: %w", err)
		}
		if raw, err = os.ReadFile(f); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprint(t.out, "  new arguments (JSON on one line): ")
		line, err := t.in.readLine(ctx, nil)
		if err != nil {
			return nil, err
		}
		raw = []byte(line)
	}
	return t.checkArgs(ctx, name, raw)
}

// checkArgs checks edited arguments: a JSON object that the tool's schema
// accepts. It returns them compact.
func (t *terminal) checkArgs(ctx context.Context, name string, raw []byte) (json.RawMessage, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("not a JSON object: %s", firstLine(strings.TrimSpace(string(raw))))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	if t.reg != nil {
		if tool, ok := t.reg.Lookup(ctx, name); ok {
			if err := validateArgs(tool.Spec().InputSchema, buf.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	return buf.Bytes(), nil
}

// validateArgs checks args against a tool's input schema.
func validateArgs(schema, args json.RawMessage) error {
	if len(schema) == 0 {
		return nil
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", bytes.NewReader(schema)); err != nil {
		return fmt.Errorf("the tool's schema: %w", err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		return fmt.Errorf("the tool's schema: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("the tool's schema does not accept them: %s", firstLine(err.Error()))
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// clean shows a string from a model or tool without obeying its terminal
// controls, and bounds it.
func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() > 2000 {
			b.WriteString(" …")
			break
		}
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// recorded reports whether the prompt shows e, a call's request for
// approval: unless -yes answers them, every request is asked about at the
// prompt, and the call's own line records the decision, so the printer
// need not say it waits.
func (t *terminal) recorded(e toolloop.Event) bool {
	return e.Type == toolloop.EventPermissionRequested && !t.yes
}

// quietAsked returns show without the requests for approval that the
// terminal's prompt already showed.
func quietAsked(show func(toolloop.Event), t *terminal) func(toolloop.Event) {
	return func(e toolloop.Event) {
		if !t.recorded(e) {
			show(e)
		}
	}
}
