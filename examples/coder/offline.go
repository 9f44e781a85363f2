package main

import (
	"embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/looptest"
)

// What the command uses when no model is configured: a built-in project
// and a scripted model that fixes it.

//go:embed testdata/stats
var fixture embed.FS

// prepare copies the built-in project, a Go package with a bug, into dir
// if dir is missing or empty, and reports whether it did.
func prepare(dir string) (fresh bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) || len(entries) > 0 {
		return false, err
	}
	sub, err := fs.Sub(fixture, "testdata/stats")
	if err != nil {
		return false, err
	}
	gomod := []byte("module example.com/stats\n\ngo 1.22\n") // embed takes no go.mod
	return true, errors.Join(os.CopyFS(dir, sub), os.WriteFile(filepath.Join(dir, "go.mod"), gomod, 0o644))
}

// script is the offline model: what a good model does with the built-in project.
func script() toolloop.Model {
	say := func(text string, r *toolloop.Response) *toolloop.Response {
		r.Message.Content = []toolloop.Content{toolloop.TextContent(text)}
		return r
	}
	const goTest = `{"command":"go test ./..."}`
	return looptest.Script(
		say("Let me see what stats.go holds and how the tests fail.", looptest.Calls(
			looptest.Call("call_1", "go_outline", `{"path":"stats.go"}`), looptest.Call("call_2", builtin.ExecShell, goTest))),
		say("Mean is wrong for every input but nil. Reading it:", looptest.Calls(
			looptest.Call("call_3", builtin.ReadFile, `{"path":"stats.go","offset":4,"limit":10}`))),
		say("It divides by len(xs)-1 instead of len(xs).", looptest.Calls(looptest.Call("call_4", builtin.EditFile,
			`{"path":"stats.go","edits":[{"old_string":"sum / float64(len(xs)-1)","new_string":"sum / float64(len(xs))"}]}`))),
		looptest.Calls(looptest.Call("call_5", builtin.ExecShell, goTest)),
		looptest.Text("Fixed: Mean in stats.go divided the sum by len(xs)-1 instead of len(xs). go test ./... passes now."),
	)
}
