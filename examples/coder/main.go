package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/builtin"
	"github.com/toolloop/toolloop/providers/openai"
	"github.com/toolloop/toolloop/sink"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "coder:", err)
		os.Exit(1)
	}
}

// run is the whole command, its environment passed in for tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (*toolloop.RunResult, error) {
	fl := flag.NewFlagSet("coder", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "", "the project `directory`; a missing or empty one gets the built-in project (default: a scratch copy of it)")
	modelName := fl.String("model", getenv("OPENAI_MODEL"), "the model (default $OPENAI_MODEL, else "+openai.DefaultModel+")")
	yes := fl.Bool("yes", false, "approve every change and unlisted command without asking")
	verbose := fl.Bool("v", false, "print every event")
	logPath := fl.String("log", "", "write the log to this `file` (default: stderr)")
	level := slog.LevelError
	fl.TextVar(&level, "log-level", level, "the log's level: debug, info, warn or error")
	if err := fl.Parse(args); err != nil {
		return nil, err
	}
	task := cmp.Or(strings.Join(fl.Args(), " "), "go test fails in this project. Find the bug, fix it, and check that the tests pass.")

	if *dir == "" {
		tmp, err := os.MkdirTemp("", "coder-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	}
	fresh, err := prepare(*dir)
	if err != nil {
		return nil, err
	}
	model := script()
	if key, url := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL"); key != "" || url != "" {
		m, err := openai.New(openai.Config{Model: *modelName, APIKey: key, BaseURL: url})
		if err != nil {
			return nil, err
		}
		model = m
	} else if !fresh {
		return nil, errors.New("the scripted model knows only the built-in project: set OPENAI_API_KEY or OPENAI_BASE_URL")
	} else {
		fmt.Fprintln(stderr, "No OPENAI_API_KEY or OPENAI_BASE_URL: a scripted model fixes the built-in project, offline.")
	}

	logOut := stderr
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		logOut = f
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))

	// Sandboxed commands may read the Go toolchain and module cache, and get a
	// build cache of their own: yours, trusted by builds outside, is not theirs.
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, err
	}
	cache = filepath.Join(cache, "toolloop-coder", "go-build")
	out, err := exec.Command("go", "env", "GOROOT", "GOMODCACHE").Output()
	goroot, modcache, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if err := errors.Join(err, os.MkdirAll(cache, 0o700)); err != nil {
		return nil, err
	}
	ws, err := builtin.Workspace(*dir, &builtin.Options{Shell: builtin.ShellOptions{
		Env:     []string{"GOCACHE=" + cache, "GOMODCACHE=" + modcache, "GOPROXY=off"},
		Sandbox: builtin.Sandbox{Readable: []string{goroot, modcache}, Writable: []string{cache}},
	}})
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	var tools toolloop.ToolRegistry
	if err := tools.AddSource(ctx, ws); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(*dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	tools.MustRegister(outline(root))

	// Asks go to the terminal. With none, -yes or a fresh copy of the
	// built-in project approves them, and anything else refuses them.
	f, _ := stdin.(*os.File)
	tty := f != nil && term.IsTerminal(int(f.Fd()))
	auto := *yes || fresh && !tty
	in := bufio.NewReader(stdin)
	loop := &toolloop.AgentLoop{
		Model: model,
		Tools: &tools,
		Guard: toolloop.Guards(
			// Tests and reads run; the denylist refuses some commands; others ask.
			&builtin.CommandPolicy{Allow: []string{"go test", "go vet", "go build", "gofmt -l", "ls", "cat", "grep"}, Otherwise: toolloop.Ask},
			&toolloop.RuleGuard{Rules: []toolloop.Rule{
				{Name: "shell-by-policy", Tools: []string{builtin.ExecShell}},
				{Name: "confirm-changes", Destructive: true, Decision: toolloop.Ask, Reason: "it changes the project"},
				{Name: "confirm-web", Tools: []string{builtin.WebFetch}, Decision: toolloop.Ask, Reason: "it sends a request out"},
			}},
		),
		Approver: toolloop.ApproverFunc(func(ctx context.Context, _ *toolloop.Call, _ string) (toolloop.Approval, error) {
			switch {
			case auto:
				return toolloop.Approval{Approved: true, Reason: "auto-approved: -yes, or a fresh copy and no terminal"}, nil
			case !tty:
				return toolloop.Approval{Reason: "no terminal to ask; -yes approves"}, nil
			}
			fmt.Fprint(stdout, "    allow? [y/N] ")
			answer := make(chan string, 1) // the read is left behind if Ctrl-C ends the run
			go func() { line, _ := in.ReadString('\n'); answer <- strings.ToLower(strings.TrimSpace(line)) }()
			select {
			case <-ctx.Done():
				return toolloop.Approval{}, ctx.Err()
			case a := <-answer:
				return toolloop.Approval{Approved: a == "y" || a == "yes", Reason: "answered at the terminal"}, nil
			}
		}),
		OnEvent: sink.NewSlog(logger, nil),
		Logger:  logger,
	}
	fmt.Fprintf(stdout, "project: %s\n> %s\n", *dir, task)
	stream := loop.RunStream(ctx, []toolloop.Message{
		toolloop.SystemMessage("You are a careful coding agent in a Go project. Use the tools to read, change and test its code. Make the smallest change that fixes the problem, then run go test ./... to check it."),
		toolloop.UserMessage(task),
	})
	show := sink.NewPrinter(stdout, &sink.PrinterOptions{Verbose: *verbose, ArgumentBytes: 300}) // to read an edit before approving it
	for e := range stream.Events() {
		show(e)
	}
	return stream.Result()
}

type function struct {
	Name string `json:"name"`
	Line int    `json:"line"`
	Doc  string `json:"doc,omitempty"`
}

// outline is the agent's own tool. It reads through root, to stay in the project.
func outline(root *os.Root) toolloop.Tool {
	t := toolloop.NewTool("go_outline", "List the functions and methods of a Go file, with their line numbers and the first line of their doc comments.",
		func(_ context.Context, in struct {
			Path string `json:"path" jsonschema:"description=A Go file, relative to the project root"`
		}) (any, error) {
			src, err := root.ReadFile(in.Path)
			if err != nil {
				return nil, err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, in.Path, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			var funcs []function
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok {
					doc, _, _ := strings.Cut(fn.Doc.Text(), "\n")
					funcs = append(funcs, function{fn.Name.Name, fset.Position(fn.Pos()).Line, doc})
				}
			}
			return funcs, nil
		})
	t.Annotations.ReadOnly = true
	return t
}
