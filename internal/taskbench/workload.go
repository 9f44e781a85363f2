package taskbench

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/toolloop/toolloop"
)

// A Task is one scripted session of a coding agent.
type Task struct {
	// Name names the task in benchmark names.
	Name string
	// Turns is how many turns of tool calls the session takes before its
	// final answer.
	Turns int
	// Seed makes the session's choices.
	Seed uint64
}

// Tasks are the benchmark's three sessions.
var Tasks = []Task{
	{Name: "50-turns", Turns: 50, Seed: 50},
	{Name: "150-turns", Turns: 150, Seed: 150},
	{Name: "300-turns", Turns: 300, Seed: 300},
}

// numFiles is how many Go files the scripted repository holds.
const numFiles = 160

// hash64 is a stable hash of s, seeding the text made for it.
func hash64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// filePath is the path of file i of the repository.
func filePath(i int) string {
	return fmt.Sprintf("internal/%s/%s.go", pkgNames[i%len(pkgNames)], fileStems[(i/len(pkgNames))%len(fileStems)])
}

var pkgNames = []string{"loop", "registry", "guard", "schema", "session", "store", "render", "httpx", "config", "jobs", "trace", "budget", "parse", "wire", "cache", "plan"}

var fileStems = []string{"run", "turn", "call", "state", "encode", "decode", "limits", "errors", "options", "table"}

// fileSize is the size of the file at path: 2 to 60 KB, most files
// small and a few large (2 KB × 30^(u²) for u uniform in [0, 1): the
// median is 5.5 KB, the mean 11 KB).
func fileSize(path string) int {
	r := rand.New(rand.NewPCG(hash64(path), 1))
	u := r.Float64()
	return int(2048 * math.Pow(30, u*u))
}

var idents = []string{"req", "resp", "msg", "calls", "state", "buf", "cfg", "limit", "turn", "result", "err", "ctx", "spec", "name", "args", "out", "n", "i", "next", "prev"}

var types = []string{"string", "int", "error", "[]byte", "*Request", "Result", "bool", "map[string]any", "[]Message", "context.Context"}

// fileText is the content of the file at path: pseudo-random Go source,
// deterministic for the path.
func fileText(path string) string {
	size := fileSize(path)
	r := rand.New(rand.NewPCG(hash64(path), 2))
	pkg := path[strings.Index(path, "/")+1 : strings.LastIndex(path, "/")]
	var b strings.Builder
	b.Grow(size + 200)
	fmt.Fprintf(&b, "// Copyright 2026 The toolloop Authors.\n\n// Package %s is part of the scripted repository.\npackage %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"strings\"\n)\n\n", pkg, pkg)
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	for n := 0; b.Len() < size; n++ {
		name := fmt.Sprintf("%s%s%d", strings.ToUpper(pick(idents)[:1]), pick(idents), n)
		fmt.Fprintf(&b, "// %s handles the %s of a %s, returning the %s it made.\nfunc %s(ctx context.Context, %s %s) (%s, error) {\n",
			name, pick(idents), pick(idents), pick(idents), name, pick(idents), pick(types), pick(types))
		for range 2 + r.IntN(8) {
			switch r.IntN(5) {
			case 0:
				fmt.Fprintf(&b, "\tif %s == nil {\n\t\treturn nil, errors.New(\"%s: no %s\")\n\t}\n", pick(idents), pkg, pick(idents))
			case 1:
				fmt.Fprintf(&b, "\t%s := fmt.Sprintf(\"%%s/%%d\", %s, %d)\n", pick(idents), pick(idents), r.IntN(1000))
			case 2:
				fmt.Fprintf(&b, "\tfor _, %s := range %s {\n\t\t%s = append(%s, %s)\n\t}\n", pick(idents), pick(idents), pick(idents), pick(idents), pick(idents))
			case 3:
				fmt.Fprintf(&b, "\tif err := %s(ctx, %s); err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}\n", pick(idents), pick(idents), pick(idents))
			default:
				fmt.Fprintf(&b, "\t%s = strings.TrimSpace(%s) // keep %s\n", pick(idents), pick(idents), pick(idents))
			}
		}
		fmt.Fprintf(&b, "\treturn %s, nil\n}\n\n", pick(idents))
	}
	return b.String()
}

// testOutput is what `go test -v -run run` prints for pkg: mostly
// passes, some failures with their file and line.
func testOutput(pkg, run string) string {
	r := rand.New(rand.NewPCG(hash64(pkg), hash64(run)))
	var b strings.Builder
	failed := 0
	tests := 15 + r.IntN(40)
	for k := range tests {
		name := fmt.Sprintf("Test%s%s%d", strings.ToUpper(idents[k%len(idents)][:1]), idents[(k*7)%len(idents)][1:], k)
		fmt.Fprintf(&b, "=== RUN   %s\n", name)
		if r.IntN(9) == 0 {
			failed++
			file := fileStems[r.IntN(len(fileStems))]
			fmt.Fprintf(&b, "    %s_test.go:%d: %s(%q) = %d, want %d\n    %s_test.go:%d: state after the call:\n\t%s\n--- FAIL: %s (0.%02ds)\n",
				file, 20+r.IntN(400), name, idents[r.IntN(len(idents))], r.IntN(100), r.IntN(100), file, 20+r.IntN(400),
				strings.Repeat("field=value ", 4+r.IntN(10)), name, r.IntN(100))
			continue
		}
		fmt.Fprintf(&b, "--- PASS: %s (0.%02ds)\n", name, r.IntN(100))
	}
	if failed > 0 {
		fmt.Fprintf(&b, "FAIL\nFAIL\tgithub.com/acme/app/%s\t%d.%03ds\nFAIL\n", pkg, r.IntN(5), r.IntN(1000))
	} else {
		fmt.Fprintf(&b, "PASS\nok  \tgithub.com/acme/app/%s\t%d.%03ds\n", pkg, r.IntN(5), r.IntN(1000))
	}
	return b.String()
}

// grepOutput is what a search for pattern prints: 5 to 60 lines of
// path:line: text.
func grepOutput(pattern string) string {
	r := rand.New(rand.NewPCG(hash64(pattern), 3))
	var b strings.Builder
	for range 5 + r.IntN(56) {
		path := filePath(r.IntN(numFiles))
		fmt.Fprintf(&b, "%s:%d:\t%s := %s(ctx, %s) // %s\n", path, 1+r.IntN(1500), idents[r.IntN(len(idents))], pattern, idents[r.IntN(len(idents))], strings.Repeat(idents[r.IntN(len(idents))]+" ", 1+r.IntN(6)))
	}
	return b.String()
}

// listOutput is the listing of a directory.
func listOutput(dir string) string {
	var b strings.Builder
	for i := range numFiles {
		if p := filePath(i); strings.HasPrefix(p, dir) {
			fmt.Fprintf(&b, "%s\t%d\n", p, fileSize(p))
		}
	}
	return b.String()
}

type readArgs struct {
	Path string `json:"path" jsonschema:"description=The file's path, relative to the workspace root."`
}

type grepArgs struct {
	Pattern string `json:"pattern" jsonschema:"description=A regular expression (RE2 syntax)."`
	Dir     string `json:"dir,omitempty" jsonschema:"description=The directory to search; the workspace root by default."`
}

type testArgs struct {
	Package string `json:"package" jsonschema:"description=The package's directory, such as internal/loop."`
	Run     string `json:"run,omitempty" jsonschema:"description=Only the tests matching this regular expression."`
}

type editArgs struct {
	Path string `json:"path" jsonschema:"description=The file's path."`
	Old  string `json:"old" jsonschema:"description=The exact text to replace; it must occur once."`
	New  string `json:"new" jsonschema:"description=The text to put in its place."`
}

type listArgs struct {
	Dir string `json:"dir" jsonschema:"description=The directory to list."`
}

// tools returns the session's tools: their results are made up,
// deterministic for their arguments.
func tools() *toolloop.ToolRegistry {
	var reg toolloop.ToolRegistry
	reg.MustRegister(
		toolloop.NewTool("read_file", "Read a file of the workspace. Returns its whole content as text.", func(_ context.Context, in readArgs) (any, error) {
			return fileText(in.Path), nil
		}),
		toolloop.NewTool("grep", "Search the workspace's files for a regular expression. Returns matching lines as path:line: text.", func(_ context.Context, in grepArgs) (any, error) {
			return grepOutput(in.Pattern), nil
		}),
		toolloop.NewTool("run_tests", "Run a package's tests with go test -v and return the log.", func(_ context.Context, in testArgs) (any, error) {
			return testOutput(in.Package, in.Run), nil
		}),
		toolloop.NewTool("edit_file", "Replace one exact occurrence of a text in a file.", func(_ context.Context, in editArgs) (any, error) {
			return fmt.Sprintf("edited %s: replaced %d bytes with %d bytes", in.Path, len(in.Old), len(in.New)), nil
		}),
		toolloop.NewTool("list_dir", "List a directory's Go files with their sizes.", func(_ context.Context, in listArgs) (any, error) {
			return listOutput(in.Dir), nil
		}),
	)
	return &reg
}

// systemPrompt is the session's system prompt, about 3 KB, as coding
// agents' are.
var systemPrompt = func() string {
	var b strings.Builder
	b.WriteString("You are a coding agent working in a Go repository (github.com/acme/app). ")
	b.WriteString("You read files, search, edit and run tests through your tools until the task is done, then answer with a summary of what you changed.\n\n")
	rules := []string{
		"Read a file before you edit it; edit with the smallest exact replacement.",
		"Run the package's tests after every edit and read the failures before editing again.",
		"Prefer grep to reading whole directories.",
		"Call independent tools in the same turn.",
		"Never invent file contents: if you need a file, read it.",
		"Keep the public API unchanged unless the task says otherwise.",
		"Follow the repository's style: gofmt, error messages in lower case, wrapped with %w.",
		"When a test fails, say which and why before you change anything.",
	}
	for i := 0; b.Len() < 3000; i++ {
		fmt.Fprintf(&b, "%d. %s\n", i+1, rules[i%len(rules)])
	}
	return b.String()
}()

// taskPrompt is the user's request.
const taskPrompt = "The session renewal in internal/session races with Close under load, and several packages' tests fail since the last refactor. Find the causes, fix them, and make every package's tests pass."
