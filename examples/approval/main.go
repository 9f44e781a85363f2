// Command approval runs an agent that pauses for a human's approval,
// saves its state to a file, and resumes from it in a later invocation,
// perhaps in another process on another day.
//
//	go run ./examples/approval            # runs until the delete needs approval, saves state.json
//	go run ./examples/approval -approve   # resumes: the delete runs
//	go run ./examples/approval -deny      # resumes: the delete is refused
//
// The agent tidies a notes folder in a scratch directory (-dir, by default
// toolloop-approval in the system's temporary directory). Its model is
// scripted, so the example runs offline. A guard asks before any
// destructive tool; with PauseForApproval set and no Approver, the run
// stops there, and Resume carries on with the human's decision: the
// listing that already ran is not run again, and the delete runs once, or
// not at all.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sink"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

// stateFile is where the paused run is saved, inside the scratch
// directory.
const stateFile = "state.json"

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("approval", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("dir", filepath.Join(os.TempDir(), "toolloop-approval"), "scratch `directory` for the notes and the saved state")
	approve := fs.Bool("approve", false, "resume the paused run, approving the pending calls")
	deny := fs.Bool("deny", false, "resume the paused run, denying the pending calls")
	reason := fs.String("reason", "", "reason to give with the decision")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *approve && *deny {
		return errors.New("-approve and -deny exclude each other")
	}
	loop, err := newLoop(*dir)
	if err != nil {
		return err
	}
	// The run as it happens: the model's text, one line per call, the
	// calls that wait for approval, the pause and the resumption.
	loop.OnEvent = sink.NewPrinter(out, nil)
	if *approve || *deny {
		return resume(ctx, loop, *dir, *approve, *reason, out)
	}
	return start(ctx, loop, *dir, out)
}

// start begins a new run in a fresh scratch directory.
func start(ctx context.Context, loop *toolloop.AgentLoop, dir string, out io.Writer) error {
	notes := filepath.Join(dir, "notes")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(notes, 0o700); err != nil {
		return err
	}
	for name, text := range map[string]string{"old.txt": "meeting notes from 2019\n", "todo.txt": "buy milk\n"} {
		if err := os.WriteFile(filepath.Join(notes, name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("Tidy up my notes: delete old.txt.")})
	if !errors.Is(err, toolloop.ErrPaused) {
		return err
	}
	st := res.Paused
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, stateFile)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(out, "saved the paused run to %s\nresume with -approve or -deny\n", path)
	return nil
}

// resume loads the saved state and continues the run with the decision.
func resume(ctx context.Context, loop *toolloop.AgentLoop, dir string, approved bool, reason string, out io.Writer) error {
	path := filepath.Join(dir, stateFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no paused run to resume: run without -approve or -deny first")
	}
	if err != nil {
		return err
	}
	var st toolloop.PauseState
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("reading %s: %w", stateFile, err)
	}
	if reason == "" {
		reason = map[bool]string{true: "approved at the terminal", false: "the user said no"}[approved]
	}
	decisions := make(map[string]toolloop.Approval, len(st.Pending))
	for _, p := range st.Pending {
		decisions[p.CallID] = toolloop.Approval{Approved: approved, Reason: reason}
	}
	// Resume consumes the state: remove it first, so that a second resume
	// cannot run the approved calls twice.
	if err := os.Remove(path); err != nil {
		return err
	}
	if _, err := loop.Resume(ctx, &st, decisions); err != nil {
		return err
	}
	left, err := os.ReadDir(filepath.Join(dir, "notes"))
	if err != nil {
		return err
	}
	names := make([]string, len(left))
	for i, e := range left {
		names[i] = e.Name()
	}
	fmt.Fprintf(out, "notes left: %s\n", strings.Join(names, ", "))
	return nil
}

type noteArgs struct {
	Name string `json:"name" jsonschema:"description=File name of the note"`
}

// newLoop returns the agent: two tools over the notes folder, a guard that
// asks before anything destructive, and a scripted model.
func newLoop(dir string) (*toolloop.AgentLoop, error) {
	notes := filepath.Join(dir, "notes")
	list := toolloop.NewTool("list_notes", "Lists the notes.", func(context.Context, struct{}) (any, error) {
		entries, err := os.ReadDir(notes)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return strings.Join(names, ", "), nil
	})
	list.Annotations.ReadOnly = true
	del := toolloop.NewTool("delete_note", "Deletes a note.", func(_ context.Context, in noteArgs) (any, error) {
		root, err := os.OpenRoot(notes)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		if err := root.Remove(in.Name); err != nil {
			return nil, err
		}
		return "deleted " + in.Name, nil
	})
	del.Annotations.Destructive = true
	reg := new(toolloop.ToolRegistry)
	if err := reg.Register(list, del); err != nil {
		return nil, err
	}
	return &toolloop.AgentLoop{
		Model: toolloop.ModelFunc(scripted),
		Tools: reg,
		Guard: &toolloop.RuleGuard{Rules: []toolloop.Rule{
			{Name: "confirm-destructive", Destructive: true, Decision: toolloop.Ask, Reason: "it deletes a file"},
		}},
		PauseForApproval: true,
	}, nil
}

// scripted is the model. It keeps no state, as a real model keeps none
// between calls: it reads what to do from the transcript, so it answers
// the same in the process that resumes.
func scripted(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	i := slices.IndexFunc(req.Messages, func(m toolloop.Message) bool { return m.Role == toolloop.RoleAssistant })
	if i < 0 {
		return &toolloop.Response{Message: toolloop.Message{
			Content: []toolloop.Content{toolloop.TextContent("I'll look at the notes and delete old.txt.")},
			ToolCalls: []toolloop.ToolCall{
				{ID: "call_1", Name: "list_notes", Arguments: json.RawMessage(`{}`)},
				{ID: "call_2", Name: "delete_note", Arguments: json.RawMessage(`{"name":"old.txt"}`)},
			},
		}}, nil
	}
	text := "I left old.txt alone."
	for _, m := range req.Messages {
		if r := m.Result; r != nil && r.Name == "delete_note" {
			if !r.IsError() {
				text = "Deleted old.txt; todo.txt is still there."
			} else if r.Error.Kind == toolloop.KindDenied {
				text = "You declined, so I left old.txt alone."
			}
		}
	}
	return &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent(text)}}}, nil
}
