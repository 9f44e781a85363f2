package taskbench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/toolloop/toolloop"
)

// A brain is the scripted model of a task: it decides each turn's calls
// from the transcript, as a model would, and answers at the end. It is
// deterministic: the step it is at comes from the transcript (the last
// assistant message says "Step N"), its choices for a step from the
// task's seed and the step, and after a failing test log it reads the
// failing test's file. So the same transcript gives the same answer,
// whatever context manager edited it.
type brain struct {
	task Task
	// code makes the brain write each step's calls as one program for
	// the code tool (see codeStep).
	code bool
}

// stepOf returns the step the transcript's last assistant message took,
// or 0 if there is none.
func stepOf(msgs []toolloop.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != toolloop.RoleAssistant {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(msgs[i].Text(), "Step %d:", &n); err == nil {
			return n
		}
	}
	return 0
}

// failingTest returns the path of the test file a failing test log among
// the last turn's results names, if any.
func failingTest(msgs []toolloop.Message) (string, bool) {
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == toolloop.RoleTool; i-- {
		r := msgs[i].Result
		if r == nil || (r.Name != "run_tests" && r.Name != "run_code") || r.Meta.Cleared {
			continue
		}
		text := r.Text()
		before, pkg, ok := strings.Cut(text, "FAIL\tgithub.com/acme/app/")
		if !ok {
			continue
		}
		pkg, _, _ = strings.Cut(pkg, "\t")
		// The last file:line of the log's last failure.
		fail := strings.LastIndex(before, "--- FAIL")
		if fail < 0 {
			continue
		}
		at := strings.LastIndex(before[:fail], "\n    ")
		if at < 0 {
			continue
		}
		file, _, _ := strings.Cut(before[at+len("\n    "):], ":")
		return pkg + "/" + file, true
	}
	return "", false
}

// respond is the brain's answer to a request of msgs.
func (b *brain) respond(msgs []toolloop.Message) *toolloop.Response {
	step := stepOf(msgs) + 1
	r := rand.New(rand.NewPCG(b.task.Seed, uint64(step)))
	if step > b.task.Turns {
		var s strings.Builder
		fmt.Fprintf(&s, "Step %d: done. The renewal goroutine now stops before Close releases the lease, and the failing tests pass again:\n", step)
		for range 8 {
			fmt.Fprintf(&s, "- %s: fixed the %s handling in %s.\n", filePath(r.IntN(numFiles)), idents[r.IntN(len(idents))], idents[r.IntN(len(idents))])
		}
		return &toolloop.Response{Message: assistant(s.String()), StopReason: toolloop.StopEnd}
	}
	// 1 to 4 calls: 50%, 30%, 15%, 5%.
	n := 1
	switch p := r.IntN(20); {
	case p >= 19:
		n = 4
	case p >= 16:
		n = 3
	case p >= 10:
		n = 2
	}
	var calls []toolloop.ToolCall
	add := func(name string, args any) {
		raw, _ := json.Marshal(args)
		calls = append(calls, toolloop.ToolCall{ID: fmt.Sprintf("call_%03d_%d", step, len(calls)), Name: name, Arguments: raw})
	}
	what := "look further"
	if file, ok := failingTest(msgs); ok {
		add("read_file", readArgs{Path: file})
		what = "read the failing test"
	}
	for len(calls) < n {
		path := filePath(r.IntN(numFiles))
		switch p := r.IntN(20); {
		case p < 6:
			add("read_file", readArgs{Path: path})
		case p < 11:
			add("grep", grepArgs{Pattern: fmt.Sprintf(`%s\(ctx, %s`, idents[r.IntN(len(idents))], idents[r.IntN(len(idents))])})
		case p < 16:
			old := fmt.Sprintf("\tif %s == nil {\n\t\treturn nil, errors.New(%q)\n\t}\n", idents[r.IntN(len(idents))], "no "+idents[r.IntN(len(idents))])
			add("edit_file", editArgs{Path: path, Old: old + strings.Repeat("\t// unchanged context line\n", r.IntN(6)), New: strings.Replace(old, "nil {", "nil || closed {", 1) + strings.Repeat("\t// a new line of the fix\n", 1+r.IntN(8))})
		case p < 19:
			dir := path[:strings.LastIndex(path, "/")]
			add("run_tests", testArgs{Package: dir, Run: fmt.Sprintf("Test%s", strings.ToUpper(idents[r.IntN(len(idents))][:1]))})
		default:
			add("list_dir", listArgs{Dir: path[:strings.LastIndex(path, "/")]})
		}
	}
	text := fmt.Sprintf("Step %d: I will %s with %d call(s).", step, what, len(calls))
	msg := assistant(text)
	msg.ToolCalls = calls
	resp := &toolloop.Response{Message: msg, StopReason: toolloop.StopToolUse}
	if b.code {
		return codeStep(resp)
	}
	return resp
}

// summarize is the scripted summarizer of the Compactor: a summary of
// about 2 KB, made from how many messages it was asked to summarize.
func summarize(msgs []toolloop.Message) *toolloop.Response {
	r := rand.New(rand.NewPCG(uint64(len(msgs)), 4))
	var s strings.Builder
	s.WriteString("Summary of the work so far: the task is to fix the session renewal race and the failing tests.\n")
	for s.Len() < 2000 {
		fmt.Fprintf(&s, "- Read %s; its %s path returns %s without checking %s.\n", filePath(r.IntN(numFiles)), idents[r.IntN(len(idents))], idents[r.IntN(len(idents))], idents[r.IntN(len(idents))])
	}
	return &toolloop.Response{Message: assistant(s.String()), StopReason: toolloop.StopEnd}
}

// assistant is an assistant message of text.
func assistant(text string) toolloop.Message {
	return toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent(text)}}
}
