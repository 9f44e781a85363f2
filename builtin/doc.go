// Package builtin provides the workspace tools a coding agent needs, confined
// to one directory: reading, writing and editing files, applying patches,
// listing, searching, running shell commands, and fetching web pages.
//
// One call gives a [toolloop.Source] of kind builtin holding all of them:
//
//	ws, err := builtin.Workspace(dir, nil)
//	if err != nil { ... }
//	defer ws.Close()
//	var reg toolloop.ToolRegistry
//	if err := reg.AddSource(ctx, ws); err != nil { ... }
//
// [Options] picks a subset of the tools and sets their limits; its zero
// value (or nil) is the documented default. The tools are:
//
//   - read_file: a UTF-8 text file, or a range of its lines.
//   - write_file: creates or replaces a file, atomically.
//   - edit_file: exact string replacements, all or none.
//   - apply_patch: a patch over one or more files, all or none: either in
//     the "*** Begin Patch" form OpenAI's models are trained to write
//     (the format of Codex's apply_patch tool), or a unified diff.
//   - list_directory: a directory's entries, to a depth.
//   - grep_search: RE2 search over file contents.
//   - file_search: ** glob search over file paths.
//   - exec_shell: a shell command in the workspace, with a timeout that
//     kills everything it started, and resource limits (see
//     [ResourceLimits]). Its output streams as partial results
//     ([toolloop.Call.ReportPartial]) at most every 100 ms and 8 KiB at a
//     time, and the result keeps a bounded head and tail of it, so memory
//     stays bounded however much a command prints. The model can run a
//     command as a background job (its background argument; see
//     [toolloop.ToolSpec.Background]): the call answers at once with a
//     job ID, and the command's end reaches the model when it comes. A
//     background command has no timeout unless the model gives
//     timeout_seconds (at most 24 hours): the job's own time limit
//     (Limits.Jobs.MaxDuration) bounds it. All its output is reported,
//     as it is read, for job_output to show; and when the job is
//     canceled (job_cancel, its time limit, the run's end or pause) the
//     command is killed as a timeout kills it, with everything it
//     started.
//   - web_fetch: an http(s) GET.
//
// Every tool declares [toolloop.Annotations], so a [toolloop.RuleGuard] can
// tell reads from writes: reads and searches are ReadOnly; writes, edits,
// patches and the shell are Destructive and JudgmentRequired; web_fetch and
// the shell are OpenWorld. Tools that change files, and the shell, are
// Exclusive: the loop runs them alone, so a read in the same turn never sees
// half a change.
//
// # Confinement
//
// Every file access of the file tools goes through an [os.Root] opened on
// the workspace directory: paths with "..", absolute paths outside the
// workspace, and symbolic links that lead out (directly or through a chain
// of links, including a link swapped in while a tool runs) are refused with
// a result of kind denied; malformed paths (NUL bytes, over-long names) with
// kind invalid_args. Directory walks never follow symbolic links. An
// absolute path that lies inside the workspace is accepted and treated as
// relative to it. Hard links are the exception: see below.
//
// [Options.Hidden] names files and folders the file tools treat as off
// limits, such as a program's own state folder in the workspace: walks
// leave them out, and paths in them, named directly or through symbolic
// links, are refused with kind denied. exec_shell is not fenced by name.
//
// exec_shell runs commands in an operating-system sandbox (see [Sandbox]),
// on by default wherever the platform has one; the file tools' checks
// cannot apply to a shell, which can be told to do anything in endless
// spellings. [CommandPolicy] is a guard for intent, saying which commands
// the user means to allow; it is not what keeps commands in the
// workspace, and it can be walked around (its documentation lists how).
// The same holds for web_fetch, whose address checks stop requests to
// this machine and its private networks but not the exfiltration of data
// to a public server.
//
// # What confinement does not cover
//
// Hard links. A hard link in the workspace to a file elsewhere is that
// file, under a second name: no tool can tell it from an ordinary file.
// read_file and grep_search read through it. Writes never reach the file
// elsewhere: write_file, edit_file and apply_patch write a new file and
// rename it over the link, and a delete removes the link only. Commands
// in the Linux sandbox cannot make such a link to a file outside the
// places they may write (Landlock refuses it), but an unconfined command,
// or any program outside the agent, can. The tools do not refuse files
// with more than one link, because package managers (uv, pnpm) and local
// git clones make them for good reasons. To rule the leak out, keep the
// sandbox on and make it required ([Sandbox.Required]), and do not start
// an agent on a tree that already has links to files it should not read
// (find . -type f -links +1 lists the candidates).
//
// Processes that outlive a call, where commands get no PID namespace of
// their own: unconfined ([Sandbox.Disabled]), on Linux without Landlock,
// on Linux as a user other than root where user namespaces are disabled,
// and on macOS (see "The shell's sandbox" for where they do). There
// exec_shell kills a command's process group when the command ends,
// times out or is canceled (a background job's too); a process that left it (setsid, a daemon that
// double-forks) keeps running after the call returns, and after the
// program ends (on Linux the shell itself dies with the program, through
// a parent-death signal, but not what it started). In the sandbox it stays confined, but it can go on
// changing the workspace while the agent works, and use CPU and memory.
// To end such processes, run the agent in a container, virtual machine
// or cgroup (systemd-run --user --scope) whose end kills everything in
// it; or, where a container already confines the program and the
// package's sandbox is disabled, give each command a PID namespace of
// its own, whose processes all die with the command's shell:
//
//	Shell: builtin.ShellOptions{
//		Command: []string{"unshare", "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "/bin/sh", "-c"},
//		Sandbox: builtin.Sandbox{Disabled: true},
//	}
//
// Resource limits are per process, bar the process count: a command that
// starts many processes can use the memory and CPU time of each. A
// container or cgroup bounds the whole.
//
// # Names in results
//
// list_directory, file_search and grep_search show a path verbatim,
// unless it holds a control character (newline, carriage return, tab,
// escape, DEL, C1), another character that is not printable, or bytes
// that are not UTF-8, or starts with a double quote or starts or ends
// with a space: then it is shown Go-quoted ("a\nb.txt", see
// [strconv.Quote]), so that a file name can never fake a line of output
// or a terminal escape. Every file tool takes a path in that quoted form
// too, so the model can pass back what it was shown. In grep_search's matched
// lines, control characters other than tab are shown as escapes (\r,
// \x1b, \u2028); backslashes in the file are left as they are, so there a
// backslash sequence may be either.
//
// # Patches
//
// The "*** Begin Patch" form holds Add File, Delete File and Update File
// operations (with an optional Move to), each Update File with hunks that
// may start at an @@ line naming a line to seek to first; several @@
// lines in a row narrow the search. Hunks apply in order, each after the
// one before. A hunk's context and removed lines are matched exactly
// first; failing that, ignoring trailing whitespace; then leading and
// trailing whitespace; then taking Unicode dashes, quotes and spaces as
// their ASCII forms. The result says when a hunk matched loosely. The
// parser takes what models send: markers padded with spaces, a patch
// wrapped in a heredoc or a Markdown code fence, CRLF, empty lines that
// lost their leading space, a hunk of only added lines (appended to the
// file, or placed after its @@ line). Context lines keep the file's own
// text; added lines get the file's line ending; a file without a final
// newline keeps lacking one. Unlike Codex's own tool, apply_patch applies
// all of a patch or none of it, and refuses to add or move a file onto
// one that exists.
//
// # The shell's sandbox
//
// On Linux (5.13 or later, with Landlock enabled), each command starts
// from an OS thread of its own that is given, and then thrown away with:
// a Landlock domain, no_new_privs, no capabilities, a seccomp filter and,
// as root, private network, IPC and PID namespaces; a user other than
// root cannot give a thread those, so the command gets them from
// clone(2), with a user namespace. Either way it runs under a small init
// process (/bin/sh) that waits for it. The command and everything it
// starts inherit all of it; the program itself, on its other threads, is
// never restricted. On macOS, commands run under sandbox-exec with a generated
// Seatbelt profile (this path is not exercised by this package's
// continuous integration, which runs on Linux). Elsewhere, and on Linux
// kernels without Landlock, commands run unconfined: the tool's
// description says so, [Source.Confinement] reports it, and
// [Sandbox.Required] makes every call fail instead.
//
// What a confined command cannot do, on Linux:
//
//   - create, write, truncate, rename, link or delete files outside the
//     workspace, its private $HOME and $TMPDIR, [Sandbox.Writable] and the
//     null devices (writing through a symbolic or hard link, or
//     /proc/self/cwd, included: Landlock checks the file reached);
//   - read the contents of files under /home, /root, the program's own
//     home directory and [Sandbox.Unreadable], bar [Sandbox.Readable];
//   - read or write devices other than /dev/null, /dev/zero, /dev/full,
//     /dev/random and /dev/urandom: not the terminal of the person running
//     the agent (/dev/pts/N, where the line they type waits), nor a
//     disk's raw blocks, which hold every file, nor the host's POSIX
//     shared memory in /dev/shm;
//   - use the network: a new network namespace has no interface but
//     loopback, so no DNS, no TCP, no UDP, and no abstract Unix sockets of
//     the host. When the program runs as root, the loopback interface is
//     up and private to the command; otherwise loopback stays down.
//     Where user namespaces are disabled and the program is not root,
//     Landlock refuses TCP connect and bind only (ABI 4 and later), and
//     Confinement.NetworkOff is false;
//   - reach the host's System V IPC (shared memory, semaphores, message
//     queues): its IPC namespace has none, and what it makes there ends
//     with it;
//   - signal other processes (kill -1 included): its PID namespace holds
//     only its own. Every process it starts, in the background,
//     double-forked or in a session of its own (setsid, nohup, daemons),
//     is killed when the command ends, times out or is canceled, when
//     the [Source] closes, and when the program ends, SIGKILL included
//     (the init process has a parent-death signal, and the kernel kills
//     a PID namespace whose init dies);
//   - use the kernel keyrings (keyctl, add_key and request_key fail with
//     EPERM), where the user's keys, and keys a command could plant for
//     later, live;
//   - set or remove extended attributes (the setxattr and removexattr
//     calls fail with EPERM) anywhere, the workspace included: Landlock
//     does not cover them and a system call filter cannot tell where a
//     path leads, so they are refused everywhere; programs that copy them
//     (cp -a, rsync -X, Python's shutil.copy2) go on without them. io_uring,
//     which could set them past the filter, is refused too. The filter
//     covers the 32-bit system call interface as well;
//   - gain privileges: no setuid, no file capabilities and no
//     capabilities at all (so no mount, reboot, module loading or host
//     name change). Run by a user other than root, it is in a user
//     namespace, where its user ID shows as nobody, and so do the owners
//     of files it did not make there;
//   - signal, trace or read the /proc environ and memory of processes
//     outside its sandbox, such as the agent;
//   - open the agent's terminal: commands run in a new session with no
//     controlling terminal.
//
// The namespaces depend on the machine. Root always gets them (bar a
// container that withholds CAP_SYS_ADMIN). Other users get them where
// user namespaces are allowed, the default on most distributions; where
// they are disabled (sysctl user.max_user_namespaces=0, some container
// runtimes' seccomp profiles), they get none of the three: commands then
// share the host's System V IPC and network (Landlock refuses TCP only,
// see above), can see its processes (though Landlock ABI 6 keeps them
// from signalling them), and processes that leave the command's process
// group outlive the call, as when unconfined. Confinement.Isolated
// reports whether commands get the namespaces and the filter.
//
// Resource limits ([ShellOptions.Limits]) apply on Linux to every
// command, confined or not: each process may allocate 8 GiB (RLIMIT_DATA),
// write files of 4 GiB and use 10 minutes of CPU time, by default, and
// dumps no core. They are set while the command's first process stops at
// its exec (it asks to be traced, and the thread that started it sets them
// and lets it go), so not one instruction of the command runs without
// them; where tracing is refused (Yama's ptrace_scope 2 or 3), a moment
// after. The process count (4096 by default) counts a command's own
// processes and threads in its user namespace; where commands get none,
// it counts all the user's and applies only when set; as root it does
// not apply at all (the kernel exempts root). On macOS and elsewhere there
// are no limits.
//
// What it still can do, and what to do about it:
//
//   - read everything else the user can read: /etc, /tmp, /var, /opt, the
//     names (not the contents) of files in home folders, and the metadata
//     of any file (stat); and /proc, which is the host's, so ps lists the
//     machine's processes and their command lines (not their
//     environments or memory);
//   - change the permission bits, timestamps and file flags (chattr) of
//     files the user owns anywhere, which Landlock does not cover (their
//     contents and names stay untouched);
//   - connect to Unix sockets that exist on the file system, such as
//     /var/run/docker.sock or the systemd and D-Bus sockets: Landlock
//     controls them from ABI 9 only. A program running as root is thereby
//     one socket away from the whole machine: run agents as an ordinary
//     user;
//   - use CPU, memory and disk space up to the limits above, per process.
//
// Programs installed under a home folder (~/.cargo, ~/.pyenv, ~/go) cannot
// be read, so cannot run, unless [Sandbox.Readable] lists them; a build
// cache they write to goes in [Sandbox.Writable]. Never make writable a
// cache that programs outside the sandbox trust: Go, for one, does not
// check its build cache's entries when it reads them, so a command could
// plant compiled code there that your own builds would later link,
// escaping the sandbox. Give the agent a cache of its own. For Go, for
// example:
//
//	Shell: builtin.ShellOptions{
//		Env: []string{"GOMODCACHE=/home/me/go/pkg/mod", "GOCACHE=/home/me/.cache/agent-go-build", "GOPROXY=off"},
//		Sandbox: builtin.Sandbox{
//			Readable: []string{"~/go/pkg/mod"},              // read-only: the module cache is checked against go.sum
//			Writable: []string{"~/.cache/agent-go-build"}, // the agent's own build cache, not yours
//		},
//	}
//
// # The shell's environment
//
// Commands never get the program's environment, where API keys usually
// live: they get PATH, the locale (LANG, LANGUAGE, LC_*), TERM, TZ, USER
// and LOGNAME, HOME and TMPDIR pointing at private folders that last as
// long as the [Source], PAGER=cat and GIT_PAGER=cat, and what
// [ShellOptions.Env] sets and [ShellOptions.PassEnv] names. This holds
// with the sandbox disabled too.
//
// # Checkpoints
//
// With [Options.Checkpoints] set, the workspace's state is recorded, in a
// git repository outside it, before and after every call that can change
// files, shell commands included; [Source.Checkpoints] lists the calls
// and what each changed, gives their diffs, and rewinds the workspace to
// the state before any of them, byte for byte, and the model gets a
// rewind tool. Ignored files and the user's .git are never touched. See
// [CheckpointOptions].
package builtin
