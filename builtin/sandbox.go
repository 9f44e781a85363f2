package builtin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Sandbox configures the operating-system sandbox that exec_shell runs
// commands in. Its zero value confines commands wherever the platform
// can: writes only to the workspace, a private home directory and a
// private temporary directory; no reading of the users' home directories;
// no network; no new privileges. Where the platform cannot confine, commands
// run unconfined and the tool says so, unless Required is set.
//
// The sandbox is what keeps the workspace promise: [CommandPolicy] only
// states what the user means to allow, and a command line can always be
// written to get around a pattern list.
type Sandbox struct {
	// Disabled runs commands unconfined even where the platform can
	// confine them, for a program that is already inside a container or
	// VM. The environment is still scrubbed.
	Disabled bool
	// Required makes every exec_shell call fail, with an error of kind
	// denied, when the platform cannot give all of the confinement these
	// options ask for (see [Source.Confinement]), instead of running the
	// command with less. It cannot be combined with Disabled.
	Required bool
	// AllowNetwork lets commands use the network. By default they get a
	// private network namespace with nothing in it: no DNS, no
	// connections to the internet or to this machine's services. Even
	// with it, on Linux with Landlock ABI 6 or later, commands cannot
	// reach abstract Unix sockets made outside their sandbox (D-Bus, X11)
	// nor signal processes outside it.
	AllowNetwork bool
	// Writable lists more files and folders, outside the workspace, that
	// commands may create, change and delete things in (and read). Each
	// is an absolute path, or a path starting with ~/ for the home
	// directory of the user running the program; it must exist when
	// [Workspace] is called.
	Writable []string
	// Readable lists more files and folders that commands may read and
	// run programs from, in the same form as Writable. Use it for tools
	// installed in a home directory (~/.cargo, ~/go/pkg/mod, ~/.pyenv),
	// or for "/home" to let commands read every home directory.
	Readable []string
	// Unreadable lists more files and folders whose contents commands may
	// not read, in the same form as Writable: /home, /root and the home
	// directory of the user running the program are always on the list.
	// Readable and Writable entries win over it.
	Unreadable []string
}

// Confinement says how exec_shell confines commands on this machine with
// the workspace's options, as found when [Workspace] was called. A
// [toolloop.Guard] or the program can use it to refuse unconfined runs.
type Confinement struct {
	// Mechanism names what confines commands: "landlock" (Linux, with
	// namespaces for the network) or "seatbelt" (macOS); empty when
	// commands run unconfined.
	Mechanism string
	// Writes reports that the kernel refuses writes outside the
	// workspace, the private home and temporary directories, the null
	// devices and [Sandbox.Writable].
	Writes bool
	// Reads reports that the kernel refuses to read the contents of the
	// home directories and [Sandbox.Unreadable], bar Readable and
	// Writable paths and the workspace.
	Reads bool
	// NetworkOff reports that the kernel cuts commands off the network
	// completely. It is false when [Sandbox.AllowNetwork] is set, and
	// where only part of the network can be refused (see Summary).
	NetworkOff bool
	// Isolated reports that commands share nothing else with the program
	// and the rest of the machine: each command has IPC and PID
	// namespaces of its own, so it sees none of the host's System V IPC
	// objects and can signal no other process, and every process it
	// starts dies with it, detached (setsid) or not; and the kernel
	// keyrings and extended attributes are closed to it (see the package
	// documentation for what holds where). [Sandbox.Required] does not
	// depend on it: a guard that needs it can check it.
	Isolated bool
	// Summary describes the confinement in a few sentences, as the
	// exec_shell tool's description gives it to the model.
	Summary string
}

// complete reports whether c gives everything o asks for.
func (c Confinement) complete(o *Sandbox) bool {
	return c.Writes && c.Reads && (c.NetworkOff || o.AllowNetwork)
}

// Confinement reports how exec_shell confines commands. It is the zero
// Confinement when the source does not offer exec_shell.
func (s *Source) Confinement() Confinement {
	if s.ws.sandbox == nil {
		return Confinement{}
	}
	return s.ws.sandbox.conf
}

// errNotConfined is the reason a Required sandbox refuses to run.
var errNotConfined = errors.New("commands cannot be confined on this machine")

// sandbox is exec_shell's per-workspace state: the private directories,
// the platform's confinement, and the environment commands get.
type sandbox struct {
	opts    Sandbox
	root    string // private directory holding home and tmp; removed on close
	home    string
	tmp     string
	conf    Confinement
	plat    *platform      // nil when commands run unconfined
	limits  ResourceLimits // in force, defaults applied; 0 is none
	baseEnv []string

	mu      sync.RWMutex // held for reading while a command starts
	closed  bool
	running sync.Map // *exec.Cmd → struct{}: the commands started and not yet waited for
}

// sandboxPaths are the resolved paths the platform sandbox is built from.
type sandboxPaths struct {
	workspace  string   // the workspace, symbolic links resolved
	writable   []string // workspace, home, tmp, Sandbox.Writable
	readable   []string // Sandbox.Readable
	unreadable []string // home directories and Sandbox.Unreadable
}

// openSandbox makes the private directories and sets up the platform's
// sandbox for a workspace whose resolved directory is workspace.
func openSandbox(workspace string, sh *ShellOptions) (*sandbox, error) {
	o := sh.Sandbox
	if o.Disabled && o.Required {
		return nil, errors.New("builtin: Sandbox.Disabled and Sandbox.Required cannot both be set")
	}
	for _, p := range sh.PassEnv {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return nil, fmt.Errorf("builtin: ShellOptions.PassEnv: bad pattern %q", p)
		}
	}
	for _, kv := range sh.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("builtin: ShellOptions.Env: %q is not KEY=value", kv)
		}
	}
	paths := &sandboxPaths{workspace: workspace}
	var err error
	lists := []struct {
		name string
		in   []string
		out  *[]string
	}{
		{"Writable", o.Writable, &paths.writable},
		{"Readable", o.Readable, &paths.readable},
		{"Unreadable", o.Unreadable, &paths.unreadable},
	}
	for _, l := range lists {
		for _, p := range l.in {
			abs, err := sandboxPath(p, l.name != "Unreadable")
			if err != nil {
				return nil, fmt.Errorf("builtin: Sandbox.%s: %w", l.name, err)
			}
			*l.out = append(*l.out, abs)
		}
	}
	s := &sandbox{opts: o}
	s.root, err = os.MkdirTemp("", "toolloop-shell-")
	if err != nil {
		return nil, fmt.Errorf("builtin: making the shell's private directory: %w", err)
	}
	if s.root, err = filepath.EvalSymlinks(s.root); err != nil {
		_ = os.RemoveAll(s.root)
		return nil, fmt.Errorf("builtin: making the shell's private directory: %w", err)
	}
	s.home, s.tmp = filepath.Join(s.root, "home"), filepath.Join(s.root, "tmp")
	for _, d := range []string{s.home, s.tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			_ = os.RemoveAll(s.root)
			return nil, fmt.Errorf("builtin: making the shell's private directory: %w", err)
		}
	}
	paths.writable = append([]string{workspace, s.home, s.tmp}, paths.writable...)
	paths.unreadable = append(homeDirs(), paths.unreadable...)

	if o.Disabled {
		s.conf = Confinement{Summary: "Commands run unconfined: they can read, change and delete anything the user running the agent can, and use the network."}
	} else {
		s.plat, s.conf, err = newPlatform(paths, &o)
		if err != nil {
			_ = os.RemoveAll(s.root)
			return nil, fmt.Errorf("builtin: setting up the shell's sandbox: %w", err)
		}
	}
	if s.plat != nil {
		s.limits = s.plat.limits(sh.Limits)
	} else {
		s.limits = unconfinedLimits(sh.Limits)
	}
	s.baseEnv = shellEnv(os.Environ(), s.home, s.tmp, sh)
	return s, nil
}

// start starts cmd, confined unless the sandbox is off or unavailable,
// with the resource limits, and returns the function that waits for it.
// Until that returns, closing the sandbox kills the command.
func (s *sandbox) start(cmd *exec.Cmd) (func() error, error) {
	if s.opts.Required && !s.conf.complete(&s.opts) {
		return nil, denied("this workspace requires commands to be confined, and they cannot be: %s (%v)", s.conf.Summary, errNotConfined)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, failed("the workspace is closed")
	}
	var wait func() error
	var err error
	if s.plat == nil {
		wait, err = startUnconfined(cmd, s.limits)
	} else {
		wait, err = s.plat.start(cmd, s.limits)
	}
	if err != nil {
		return nil, err
	}
	s.running.Store(cmd, struct{}{})
	return func() error {
		err := wait()
		s.running.Delete(cmd)
		return err
	}, nil
}

// command returns the argv that runs argv in the sandbox.
func (s *sandbox) command(argv []string) []string {
	if s.plat == nil {
		return argv
	}
	return s.plat.command(argv)
}

func (s *sandbox) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	// Whatever still runs dies now: in a PID namespace, everything the
	// command started; otherwise its process group.
	s.running.Range(func(k, _ any) bool {
		cmd := k.(*exec.Cmd)
		_ = killGroup(cmd)
		_ = cmd.Process.Kill()
		return true
	})
	var err error
	if s.plat != nil {
		err = s.plat.close()
	}
	return errors.Join(err, os.RemoveAll(s.root))
}

// sandboxPath makes an option's path absolute, expanding a leading ~/,
// and resolves its symbolic links when it must exist.
func sandboxPath(p string, mustExist bool) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%q: %w", p, err)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if mustExist || !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		return filepath.Clean(p), nil
	}
	return real, nil
}

// homeDirs returns the folders that hold users' home directories, and the
// home directory of the user running the program, symbolic links
// resolved.
func homeDirs() []string {
	var dirs []string
	cands := []string{"/home", "/root", "/Users"}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		cands = append(cands, h)
	}
	for _, d := range cands {
		if real, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(dirs, real) {
			dirs = append(dirs, real)
		}
	}
	return dirs
}

// passedEnv are the host variables every command gets, besides those the
// options add: what programs need to run and to print text, and nothing
// that usually holds a secret.
var passedEnv = []string{"PATH", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "USER", "LOGNAME"}

// shellEnv builds the environment of commands: a default PATH, HOME and
// TMPDIR set to the private directories, PAGER=cat and GIT_PAGER=cat; then
// the host's variables that passedEnv or the options' PassEnv name; then
// the options' Env. Later entries win (see [exec.Cmd.Env]).
func shellEnv(host []string, home, tmp string, sh *ShellOptions) []string {
	pass := append(slices.Clone(passedEnv), sh.PassEnv...)
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home, "TMPDIR=" + tmp, "PAGER=cat", "GIT_PAGER=cat"}
	for _, kv := range host {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if slices.ContainsFunc(pass, func(p string) bool { m, _ := path.Match(p, k); return m }) {
			env = append(env, kv)
		}
	}
	return append(env, sh.Env...)
}
