// Command coder is a small coding agent: it reads, searches, edits and
// tests a Go project with the workspace tools and one tool of its own,
// asking before it changes anything, and streams what it does.
//
//	go run ./examples/coder                        # offline: fixes a bug in a scratch copy of a small project
//	go run ./examples/coder -dir /tmp/stats        # the same in /tmp/stats, kept to look at afterwards
//	OPENAI_API_KEY=... go run ./examples/coder -dir ~/src/myproject "Make the parser accept tabs."
//	OPENAI_BASE_URL=http://localhost:11434/v1 go run ./examples/coder -model qwen3
//
// # The model
//
// With OPENAI_API_KEY or OPENAI_BASE_URL set, it talks to OpenAI or to any
// OpenAI-compatible server (Ollama, vLLM, llama.cpp's server, a gateway),
// with -model naming the model ($OPENAI_MODEL by default). With neither,
// a scripted model (looptest.Script) stands in, offline: it only knows the
// built-in project, so it refuses -dir on a project of yours.
//
// # The project
//
// -dir names the project. A missing or empty directory gets a copy of the
// built-in project (a Go package whose Mean divides by the wrong count);
// with no -dir the copy is made in a scratch directory, removed at the end.
//
// # Tools and what asks
//
// The model gets the builtin workspace tools confined to the project
// (files through an os.Root, exec_shell in the operating system's sandbox,
// with a Go build cache of its own under the user's cache directory) and
// go_outline, a typed tool (toolloop.NewTool) listing a Go file's functions.
// Reads and searches run. go test, go vet, go build, gofmt -l, ls, cat and
// grep run without asking; commands on the builtin denylist are refused;
// every other command, every change to a file, and every web_fetch asks.
//
// An ask goes to the terminal: the call is printed, and y or yes approves
// it. When standard input is not a terminal, asks are approved on a fresh
// copy of the built-in project (nothing of yours can change) and refused
// on any other project, saying why; -yes approves every ask, terminal or
// not. Ctrl-C cancels the run: every call still gets its result.
//
// # Output
//
// The run streams (AgentLoop.RunStream) to sink.NewPrinter: the model's
// text as it comes, one line per tool call; -v prints every event. Each
// event also goes to log/slog through sink.NewSlog, on standard error or to
// the file -log names, from the level -log-level names (error by default;
// info logs every call and turn, debug every event).
package main
