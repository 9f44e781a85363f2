package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolloop/toolloop"
	"mvdan.cc/sh/v3/syntax"
)

// CommandPolicy is a [toolloop.Guard] for exec_shell: it refuses commands
// that match a denylist pattern and, if an allow-list is set, commands
// that run anything not on it. Its zero value applies [DefaultDeny] to
// exec_shell and allows everything else.
//
// A command line is parsed as a shell script (with mvdan.cc/sh), and every
// simple command in it is checked, including those in pipelines, lists
// (&&, ||, ;), subshells, command substitutions and function bodies.
//
// The policy states intent: what the user means the agent to run. It is
// not isolation, and it cannot be made isolation, because deciding what a
// shell command line will do by reading it is not possible. It catches
// honest mistakes, not a model or a prompt injection set on getting around
// it. What keeps commands in the workspace is exec_shell's sandbox (see
// [Sandbox]); use the policy on top of it, not instead.
//
// Known ways around the denylist: any other spelling of a command (r\m,
// "r"m, brace expansion, $cmd, $(echo rm), backticks, eval, rm -rf x ~
// with more arguments), a program that runs or deletes for another (xargs
// rm, find -delete, find -exec), an interpreter (python3 -c, perl -e, a
// script written to disk first), and any equivalent command the list does
// not name (telinit 0 for init 0).
//
// Known ways around an allow-list: arithmetic evaluation of a variable
// holding an array subscript with a command substitution, which bash runs
// (x='a[$(rm f)]'; (( x )), and likewise in [[ $x -eq 0 ]], let,
// declare -i and $((x))); an allowed program that runs what it is given
// (go run on a file written with cat, make, npm run, a test suite, git
// hooks and aliases set with git config); and writes through an allowed
// program's own options (git -o, sort -o). With an allow-list, the policy
// also refuses redirections that write outside the working folder
// (cat > ~/.bashrc, echo >> /etc/x, > ../x, > $VAR) and git's -c,
// --config-env and --exec-path options (git -c alias.x='!cmd' x, git -c
// core.fsmonitor=cmd status), unless an allow-list entry names git with
// an option.
type CommandPolicy struct {
	// Allow, if not empty, lists the commands that may run, as word
	// prefixes: "git" allows every git command, "go test" allows go test
	// with any arguments but not go build. Every simple command of a
	// command line must match one, and its command name must be a plain
	// word (not a variable or a substitution).
	Allow []string
	// Deny is the denylist: rules whose patterns refuse a command line
	// wherever they match, in the command line as written or in any of
	// its simple commands with quoting removed. The refusal names the
	// command and says in words why (see [DenyRule]). nil means
	// [DefaultDeny]; an empty non-nil slice denies nothing. A rule with no
	// pattern refuses every command, so that the mistake shows.
	Deny []DenyRule
	// Otherwise is the decision for a command the allow-list does not
	// cover; empty means deny. Set it to toolloop.Ask to have an approver
	// or a human decide.
	Otherwise toolloop.Decision
	// Tools are the tools the policy applies to, all taking their command
	// line in a "command" argument; nil means exec_shell. Other calls are
	// allowed.
	Tools []string
}

// DenyRule is one rule of a [CommandPolicy]'s denylist: a pattern and, in
// words, what it refuses.
type DenyRule struct {
	// Pattern refuses a command line wherever it matches: in the line as
	// written, or in any of its simple commands with quoting removed.
	Pattern *regexp.Regexp
	// Description says what a matching command does that the rule
	// refuses, as a phrase that follows the command: "deletes the root
	// folder or the home folder", so that the refusal the model and the
	// user see reads "`rm -rf /` deletes the root folder or the home
	// folder, which the command policy's denylist does not allow; it was
	// not run". Empty says only that the command is on the denylist. The
	// pattern is never shown: the verdict's Rule is command-policy:deny.
	Description string
}

// DefaultDeny returns the default denylist: commands that wipe the root or
// home folder, gain privileges, format or overwrite disks, fork-bomb, power
// off or reboot the machine, or kill every process, each with a
// description. The patterns are case insensitive. The list is a tripwire,
// not a sandbox (see [CommandPolicy]).
func DefaultDeny() []DenyRule {
	const (
		disk   = "writes straight to a disk device, destroying what is on it"
		bomb   = "is a fork bomb: it starts processes until the machine stops responding"
		power  = "shuts down or restarts the machine"
		device = `(?:sd|nvme|hd|vd|xvd|disk|mmcblk)`
	)
	rules := []struct{ pattern, description string }{
		// rm of /, /*, ~, ~/, $HOME, with any flags.
		{`\brm\s+(?:-\S+\s+)*(?:--\s+)?(?:/|/\*|~/?|~/\*|\$HOME/?|\$\{HOME\}/?)(?:\s|$|[;&|)])`, "deletes the root folder or the home folder"},
		{`--no-preserve-root`, "turns off rm's protection of the root folder"},
		{`\b(?:sudo|doas|pkexec)\b`, "runs a command with superuser privileges"},
		{`^\s*su(?:\s|$)`, "switches to another user, by default the superuser"}, // checked against each simple command too
		{`\bmkfs(?:\.\w+)?\b`, "formats a disk, erasing what is on it"},
		{`\bmkswap\b`, "turns a disk or a file into swap space, erasing what is on it"},
		{`\bfdisk\b|\bparted\b|\bwipefs\b`, "changes a disk's partitions or wipes its signatures"},
		{`\bdd\s+(?:\S+\s+)*if=`, "copies raw data with dd, which can overwrite a disk"},
		{`>\s*/dev/` + device, disk},
		{`\bof=/dev/` + device, disk},
		{`:\(\)\s*\{`, bomb},                          // the classic fork bomb
		{`(\w+)\(\)\s*\{\s*\w+\s*\|\s*\w+\s*&`, bomb}, // its renamed forms
		{`\b(?:shutdown|reboot|poweroff|halt)\b`, power},
		{`\binit\s+[06]\b`, power},
		{`\bsystemctl\s+(?:poweroff|reboot|halt|kexec|suspend|hibernate)\b`, "shuts down, restarts or suspends the machine"},
		{`\bkill\s+(?:-\S+\s+)*-1\b`, "kills every process the user may signal"},
		{`\bchmod\s+(?:-\S+\s+)*(?:-R|--recursive)\s+\S+\s+/(?:\s|$)`, "changes the permissions of every file on the machine"},
		{`\bchown\s+(?:-\S+\s+)*(?:-R|--recursive)\s+\S+\s+/(?:\s|$)`, "changes the owner of every file on the machine"},
	}
	out := make([]DenyRule, len(rules))
	for i, r := range rules {
		out[i] = DenyRule{Pattern: regexp.MustCompile(`(?i)` + r.pattern), Description: r.description}
	}
	return out
}

var defaultDeny = DefaultDeny()

// Check implements [toolloop.Guard].
func (p *CommandPolicy) Check(_ context.Context, call *toolloop.Call) toolloop.Verdict {
	tools := p.Tools
	if tools == nil {
		tools = []string{ExecShell}
	}
	if !slices.Contains(tools, call.Name) {
		return toolloop.Verdict{Decision: toolloop.Allow}
	}
	var args struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return deny("command-policy", "the call's arguments could not be read: "+err.Error())
	}
	return p.check(args.Command)
}

func deny(rule, reason string) toolloop.Verdict {
	return toolloop.Verdict{Decision: toolloop.Deny, Reason: reason, Rule: rule}
}

// MayAsk implements [toolloop.Asker]: a policy whose Otherwise is Ask
// asks, so a loop using it needs an Approver or PauseForApproval, and
// says so at the start of Run.
func (p *CommandPolicy) MayAsk() bool { return p.Otherwise == toolloop.Ask }

func (p *CommandPolicy) check(command string) toolloop.Verdict {
	denyList := p.Deny
	if denyList == nil {
		denyList = defaultDeny
	}
	f, perr := syntax.NewParser().Parse(strings.NewReader(command), "")
	var calls [][]string
	if perr == nil {
		calls = simpleCommands(f)
	}
	for _, r := range denyList {
		if what, ok := r.match(command, calls); ok {
			return deny("command-policy:deny", r.refusal(what))
		}
	}
	if len(p.Allow) == 0 {
		return toolloop.Verdict{Decision: toolloop.Allow, Rule: "command-policy"}
	}
	otherwise := func(reason string) toolloop.Verdict {
		d := p.Otherwise
		if d == "" || d == toolloop.Modify {
			d = toolloop.Deny
		}
		return toolloop.Verdict{Decision: d, Reason: reason, Rule: "command-policy:allow"}
	}
	if perr != nil {
		return otherwise("the command could not be parsed as a shell command line, so it cannot be checked against the allow-list: " + perr.Error())
	}
	for _, c := range calls {
		if !p.allowed(c) {
			name := c[0]
			if name == "" {
				name = "a command whose name is computed at run time"
			}
			return otherwise(fmt.Sprintf("%s is not in the allow-list (%s)", name, strings.Join(p.Allow, ", ")))
		}
		if opt := gitHookOption(c); opt != "" && !p.allowsGitOptions() {
			return otherwise(fmt.Sprintf("git %s can make git run any command, which the allow-list (%s) does not say", opt, strings.Join(p.Allow, ", ")))
		}
	}
	if target := outsideWrite(f); target != "" {
		return otherwise(fmt.Sprintf("the command line writes to %s, outside the working folder, with a redirection; the allow-list (%s) allows running commands, not writing anywhere", target, strings.Join(p.Allow, ", ")))
	}
	return toolloop.Verdict{Decision: toolloop.Allow, Rule: "command-policy:allow"}
}

// match reports whether the rule refuses the command line, and what to
// show of it: the simple command the pattern matched, quotes removed, or
// else the whole line.
func (r DenyRule) match(command string, calls [][]string) (string, bool) {
	if r.Pattern == nil {
		return command, true
	}
	for _, c := range calls {
		if t := strings.Join(c, " "); r.Pattern.MatchString(t) {
			return t, true
		}
	}
	return command, r.Pattern.MatchString(command)
}

// refusal is the reason a deny gives: the command refused and, in words,
// why. The pattern is left out: it means little to a person or a model.
func (r DenyRule) refusal(command string) string {
	what := "`" + shortCommand(command) + "`"
	switch {
	case r.Pattern == nil:
		return what + ": the command policy's denylist has a rule without a pattern, which refuses every command; it was not run"
	case r.Description == "":
		return what + " is on the command policy's denylist; it was not run"
	}
	return what + " " + r.Description + ", which the command policy's denylist does not allow; it was not run"
}

// maxShownCommand bounds how much of a refused command a refusal shows.
const maxShownCommand = 160

// shortCommand returns a command line on one line, its runs of white
// space (newlines included) as one space, cut to maxShownCommand bytes.
func shortCommand(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxShownCommand {
		return s
	}
	cut := maxShownCommand
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// gitHookOption returns the git option in argv, before the subcommand,
// that sets configuration, which can run a command (-c alias.x='!cmd',
// core.fsmonitor, core.sshCommand, ...), or "".
func gitHookOption(argv []string) string {
	if filepath.Base(argv[0]) != "git" {
		return ""
	}
	for i := 1; i < len(argv) && strings.HasPrefix(argv[i], "-"); i++ {
		a := argv[i]
		switch {
		case a == "-c", strings.HasPrefix(a, "--config-env"), strings.HasPrefix(a, "--exec-path"):
			return strings.SplitN(a, "=", 2)[0]
		case a == "-C", a == "--git-dir", a == "--work-tree", a == "--namespace":
			i++ // the option's value
		}
	}
	return ""
}

// allowsGitOptions reports whether an allow-list entry names git with an
// option, so that the user said which options git may get.
func (p *CommandPolicy) allowsGitOptions() bool {
	return slices.ContainsFunc(p.Allow, func(a string) bool {
		w := strings.Fields(a)
		return len(w) > 1 && w[0] == "git" && strings.HasPrefix(w[1], "-")
	})
}

// outsideWrite returns the target of the first redirection in f that
// writes to a file which may lie outside the working folder: an absolute
// path, a path with "..", one starting with ~, or one computed at run
// time. The null device and the standard streams are fine.
func outsideWrite(f *syntax.File) string {
	var target string
	syntax.Walk(f, func(n syntax.Node) bool {
		r, ok := n.(*syntax.Redirect)
		if target != "" || !ok || r.Word == nil {
			return target == ""
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
			syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.DplOut:
		default:
			return true
		}
		w, plain := wordText(r.Word)
		if r.Op == syntax.DplOut && (w == "-" || strings.Trim(w, "0123456789") == "") {
			return true // >&2 duplicates a descriptor
		}
		switch {
		case w == "/dev/null" || w == "/dev/stdout" || w == "/dev/stderr":
		case !plain || w == "" || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~") ||
			slices.Contains(strings.Split(w, "/"), ".."):
			target = w
		}
		return true
	})
	return target
}

// allowed reports whether argv starts with the words of an allowed
// prefix.
func (p *CommandPolicy) allowed(argv []string) bool {
	if argv[0] == "" {
		return false
	}
	for _, a := range p.Allow {
		words := strings.Fields(a)
		if len(words) == 0 || len(words) > len(argv) {
			continue
		}
		if slices.Equal(words, argv[:len(words)]) {
			return true
		}
	}
	return false
}

// simpleCommands returns the words of each simple command in a parsed
// command line, quotes removed. A word that is not plain text (a
// variable, a substitution, a glob) is returned as "" in the command name
// position and as written elsewhere.
func simpleCommands(f *syntax.File) [][]string {
	var calls [][]string
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		argv := make([]string, len(c.Args))
		for i, w := range c.Args {
			s, plain := wordText(w)
			if !plain && i == 0 {
				s = ""
			}
			argv[i] = s
		}
		calls = append(calls, argv)
		return true
	})
	return calls
}

// wordText returns a word with quotes removed, and whether it is plain
// text with nothing to expand.
func wordText(w *syntax.Word) (string, bool) {
	var b strings.Builder
	plain := true
	var add func(parts []syntax.WordPart)
	add = func(parts []syntax.WordPart) {
		for _, part := range parts {
			switch x := part.(type) {
			case *syntax.Lit:
				if strings.ContainsAny(x.Value, "*?[") {
					plain = false
				}
				b.WriteString(x.Value)
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				add(x.Parts)
			default:
				plain = false
				var sb strings.Builder
				_ = syntax.NewPrinter().Print(&sb, part.(syntax.Node))
				b.WriteString(sb.String())
			}
		}
	}
	add(w.Parts)
	return b.String(), plain
}
