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
//   - apply_patch: a unified diff over one or more files, all or none.
//   - list_directory: a directory's entries, to a depth.
//   - grep_search: RE2 search over file contents.
//   - file_search: ** glob search over file paths.
//   - exec_shell: a shell command in the workspace, with a timeout that
//     kills its whole process group. Its output streams as partial results
//     ([toolloop.Call.ReportPartial]) at most every 100 ms and 8 KiB at a
//     time, and the result keeps a bounded head and tail of it, so memory
//     stays bounded however much a command prints.
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
// relative to it. Hard links inside the workspace that point at files
// elsewhere cannot be told apart from ordinary files: do not create them.
//
// exec_shell is different: a shell command can do anything the process's
// user can do, anywhere. Its working directory is the workspace, and
// [CommandPolicy] is a guard that refuses commands matching a denylist or
// missing from an allow-list, but pattern lists are not isolation: they stop
// honest mistakes, not a determined model or a prompt injection. Real
// isolation needs an OS sandbox around the whole process (a container, a
// VM, a separate user, seccomp or landlock). The same holds for web_fetch,
// whose address checks stop requests to this machine and its private
// networks but not the exfiltration of data to a public server.
package builtin
