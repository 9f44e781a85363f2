package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolloop/toolloop"
)

// The names of the tools, for [Options.Tools].
const (
	ReadFile      = "read_file"
	WriteFile     = "write_file"
	EditFile      = "edit_file"
	ApplyPatch    = "apply_patch"
	ListDirectory = "list_directory"
	GrepSearch    = "grep_search"
	FileSearch    = "file_search"
	ExecShell     = "exec_shell"
	WebFetch      = "web_fetch"
)

// toolNames lists every tool in the order a source offers them.
var toolNames = []string{ReadFile, WriteFile, EditFile, ApplyPatch, ListDirectory, GrepSearch, FileSearch, ExecShell, WebFetch}

// ToolNames returns the names of the tools a source offers by default.
// A source with [Options.Checkpoints] set offers [Rewind] too.
func ToolNames() []string { return slices.Clone(toolNames) }

// changesFiles lists the tools whose calls checkpoints record.
var changesFiles = map[string]bool{WriteFile: true, EditFile: true, ApplyPatch: true, ExecShell: true}

// ReadOnlyToolNames returns the names of the tools that change nothing in
// the workspace and run no commands: the reads and searches, and
// web_fetch.
func ReadOnlyToolNames() []string {
	return []string{ReadFile, ListDirectory, GrepSearch, FileSearch, WebFetch}
}

// Defaults for the zero fields of [Options], [ShellOptions] and
// [FetchOptions].
const (
	DefaultSourceName      = "workspace"
	DefaultMaxFileBytes    = 16 << 20
	DefaultMaxOutputBytes  = 48 << 10
	DefaultShellTimeout    = 2 * time.Minute
	DefaultMaxShellTimeout = 10 * time.Minute
	DefaultFetchTimeout    = 30 * time.Second
	DefaultMaxFetchBytes   = 5 << 20
)

// Options configures a workspace [Source]. The zero value, like a nil
// *Options, gives every tool with the default limits.
type Options struct {
	// Name is the source's name in the registry and in results; empty
	// means "workspace".
	Name string
	// Tools lists the tools to offer, by name (see [ToolNames] and
	// [Rewind]); nil offers them all, rewind only with Checkpoints set. An
	// unknown name fails [Workspace], as does rewind without Checkpoints.
	Tools []string
	// MaxFileBytes is the largest file that read_file, edit_file,
	// apply_patch and grep_search handle and that write_file writes; 0
	// means 16 MiB. grep_search skips larger files.
	MaxFileBytes int64
	// MaxOutputBytes is the most text a file tool puts in one result; 0
	// means 48 KiB, which fits the loop's default 64 KiB result budget.
	// Tools that stop early say so and say how to get the rest.
	MaxOutputBytes int
	// Shell configures exec_shell.
	Shell ShellOptions
	// Fetch configures web_fetch.
	Fetch FetchOptions
	// Checkpoints, when set, records the workspace's state around every
	// call that can change files, so that it can be rewound (see
	// [CheckpointOptions] and [Source.Checkpoints]); nil leaves them off.
	Checkpoints *CheckpointOptions
	// Hidden lists names of files and folders that the file tools keep
	// out of the model's reach wherever they are in the workspace, for a
	// program's own state there (the toolloop command hides its .toolloop
	// folder of run logs and paused runs, which a model should neither
	// read nor forge). list_directory, file_search and grep_search leave
	// them out without a word; read_file, write_file, edit_file,
	// apply_patch and a search's starting path refuse a path that is in
	// one or is one, named directly or reached through a symbolic link,
	// with a result of kind denied; checkpoints neither record nor rewind
	// them. A name is matched whole, ignoring case (a file system that
	// ignores case would open .TOOLLOOP for .toolloop). An empty name, "."
	// or "..", or one holding a path separator, fails [Workspace].
	//
	// exec_shell is not fenced by Hidden: a shell command can reach a
	// path under endless spellings, and the sandbox lets commands read and
	// write the whole workspace. Leave exec_shell out of [Options.Tools]
	// where that matters.
	Hidden []string
}

// ShellOptions configures exec_shell.
type ShellOptions struct {
	// Command is the shell and its flag that precede the command string;
	// nil means {"bash", "-c"} when bash is on PATH and {"/bin/sh", "-c"}
	// otherwise.
	Command []string
	// Env holds environment variables ("KEY=value") for commands. They
	// come on top of a scrubbed environment, never the process's own:
	// PATH, LANG, LANGUAGE, LC_*, TERM, TZ, USER and LOGNAME from the
	// process; HOME and TMPDIR set to private directories that live as
	// long as the workspace source; PAGER=cat and GIT_PAGER=cat; and the
	// variables PassEnv names. API keys and other secrets in the process's
	// environment are not passed unless named here or in PassEnv.
	Env []string
	// PassEnv names more of the process's environment variables to pass
	// to commands, as patterns of [path.Match] ("GOFLAGS", "GO*"). "*"
	// passes them all, the process's HOME and TMPDIR included.
	PassEnv []string
	// Sandbox configures the operating-system sandbox commands run in;
	// its zero value confines them wherever the platform can.
	Sandbox Sandbox
	// Timeout is a command's timeout when the model gives none; 0 means two
	// minutes.
	Timeout time.Duration
	// MaxTimeout caps the timeout the model may ask for; 0 means ten
	// minutes.
	MaxTimeout time.Duration
	// KeepBytes is how much output a result keeps: the first 40% and the
	// last 60% of it, however much the command prints; 0 means the
	// workspace's MaxOutputBytes.
	KeepBytes int
	// Limits bounds the memory, file sizes, processes and CPU time of
	// commands; its zero value gives the defaults (see [ResourceLimits]).
	Limits ResourceLimits
}

// FetchOptions configures web_fetch.
type FetchOptions struct {
	// Timeout bounds a whole fetch, redirects included; 0 means 30 seconds.
	Timeout time.Duration
	// MaxBytes caps the response body read; 0 means 5 MiB. A longer body
	// is cut, and the result says so.
	MaxBytes int64
	// AllowPrivateNetworks lets web_fetch connect to loopback, private,
	// link-local and other non-public addresses, which it refuses by
	// default. The check is made on the address actually dialed, so it
	// holds across redirects and DNS rebinding.
	AllowPrivateNetworks bool
	// UserAgent is the User-Agent header; empty means "toolloop-web-fetch".
	UserAgent string
}

// Source is a [toolloop.Source] of kind builtin holding the workspace
// tools. It is safe for concurrent use. Close it when done: it holds the
// workspace directory open.
type Source struct {
	name  string
	ws    *workspace
	tools []toolloop.Tool
}

// Workspace returns a source of workspace tools confined to dir, which
// must be an existing directory. opts may be nil.
func Workspace(dir string, opts *Options) (*Source, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	ws, err := openWorkspace(dir, &o)
	if err != nil {
		return nil, err
	}
	names := o.Tools
	if names == nil {
		names = toolNames
		if o.Checkpoints != nil {
			names = append(slices.Clone(toolNames), Rewind)
		}
	}
	if o.Checkpoints != nil {
		if ws.ckpt, err = openCheckpoints(ws, *o.Checkpoints); err != nil {
			_ = ws.close()
			return nil, err
		}
	} else if slices.Contains(names, Rewind) {
		_ = ws.close()
		return nil, errors.New("builtin: the rewind tool needs Options.Checkpoints")
	}
	s := &Source{name: o.Name, ws: ws}
	if s.name == "" {
		s.name = DefaultSourceName
	}
	if slices.Contains(names, ExecShell) {
		if ws.sandbox, err = openSandbox(ws.realDir, &ws.opts.Shell); err != nil {
			_ = ws.close()
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			_ = ws.close()
			return nil, fmt.Errorf("builtin: tool %q listed twice", n)
		}
		seen[n] = true
		t := ws.newTool(n)
		if t == nil {
			_ = ws.close()
			return nil, fmt.Errorf("builtin: unknown tool %q (known: %v)", n, toolNames)
		}
		if ws.ckpt != nil && changesFiles[n] {
			t = &checkpointed{Tool: t, c: ws.ckpt}
		}
		s.tools = append(s.tools, t)
	}
	return s, nil
}

// Name implements [toolloop.Source].
func (s *Source) Name() string { return s.name }

// Kind implements [toolloop.Source]: builtin.
func (s *Source) Kind() toolloop.SourceKind { return toolloop.SourceBuiltin }

// Tools implements [toolloop.Source].
func (s *Source) Tools(context.Context) ([]toolloop.Tool, error) { return slices.Clone(s.tools), nil }

// Tool returns the tool of that name, or nil if the source does not offer
// it.
func (s *Source) Tool(name string) toolloop.Tool {
	for _, t := range s.tools {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

// Dir returns the workspace directory as given to [Workspace], made
// absolute.
func (s *Source) Dir() string { return s.ws.dir }

// Checkpoints returns the workspace's checkpoints, or nil when
// [Options.Checkpoints] is not set.
func (s *Source) Checkpoints() *Checkpoints { return s.ws.ckpt }

// Close releases the workspace directory and removes exec_shell's private
// home and temporary directories, and a temporary checkpoint store. Tools
// called afterwards fail. Close is idempotent.
func (s *Source) Close() error { return s.ws.close() }

// workspace is the state the tools share.
type workspace struct {
	dir     string // absolute, as given
	realDir string // dir with symbolic links resolved
	root    *os.Root
	opts    Options
	shell   []string
	sandbox *sandbox // nil unless exec_shell is offered
	fetch   *fetcher
	ckpt    *Checkpoints // nil unless checkpoints are on

	closeOnce sync.Once
	closeErr  error
}

func openWorkspace(dir string, o *Options) (*workspace, error) {
	if dir == "" {
		return nil, errors.New("builtin: empty workspace directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("builtin: workspace %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("builtin: workspace %q: %w", dir, err)
	}
	for _, h := range o.Hidden {
		if h == "" || h == "." || h == ".." || strings.ContainsRune(h, '/') || strings.ContainsRune(h, filepath.Separator) {
			return nil, fmt.Errorf("builtin: hidden name %q is not a file or folder name", h)
		}
	}
	o.Hidden = slices.Clone(o.Hidden)
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("builtin: workspace %q: %w", dir, err)
	}
	learnEscapeError(root)
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	sh := &o.Shell
	if sh.Timeout <= 0 {
		sh.Timeout = DefaultShellTimeout
	}
	if sh.MaxTimeout <= 0 {
		sh.MaxTimeout = DefaultMaxShellTimeout
	}
	sh.Timeout = min(sh.Timeout, sh.MaxTimeout)
	if sh.KeepBytes <= 0 {
		sh.KeepBytes = o.MaxOutputBytes
	}
	shell := slices.Clone(sh.Command)
	if len(shell) == 0 {
		shell = []string{"/bin/sh", "-c"}
		if p, err := exec.LookPath("bash"); err == nil {
			shell = []string{p, "-c"}
		}
	}
	return &workspace{
		dir: abs, realDir: real, root: root, opts: *o, shell: shell,
		fetch: newFetcher(&o.Fetch),
	}, nil
}

func (w *workspace) close() error {
	w.closeOnce.Do(func() {
		w.closeErr = w.root.Close()
		if w.sandbox != nil {
			w.closeErr = errors.Join(w.closeErr, w.sandbox.close())
		}
		w.fetch.close()
		if w.ckpt != nil {
			w.ckpt.close()
		}
	})
	return w.closeErr
}

// newTool builds the named tool, or returns nil for an unknown name.
func (w *workspace) newTool(name string) toolloop.Tool {
	switch name {
	case ReadFile:
		return w.readFileTool()
	case WriteFile:
		return w.writeFileTool()
	case EditFile:
		return w.editFileTool()
	case ApplyPatch:
		return w.applyPatchTool()
	case ListDirectory:
		return w.listDirectoryTool()
	case GrepSearch:
		return w.grepSearchTool()
	case FileSearch:
		return w.fileSearchTool()
	case ExecShell:
		return w.execShellTool()
	case WebFetch:
		return w.webFetchTool()
	case Rewind:
		return w.rewindTool()
	}
	return nil
}
