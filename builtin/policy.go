package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

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
// Pattern lists are not isolation. They catch honest mistakes, not a
// model or a prompt injection set on getting around them: a command can
// be spelled in endless ways (variables, eval, scripts written to disk,
// interpreters such as python -c), and an allowed program may run others
// (find -exec, git hooks, make). Real isolation needs an OS sandbox around
// the process that runs the shell: a container or VM, a separate user,
// seccomp or landlock, no network.
type CommandPolicy struct {
	// Allow, if not empty, lists the commands that may run, as word
	// prefixes: "git" allows every git command, "go test" allows go test
	// with any arguments but not go build. Every simple command of a
	// command line must match one, and its command name must be a plain
	// word (not a variable or a substitution).
	Allow []string
	// Deny lists patterns that refuse a command line wherever they match:
	// in the command line as written, or in any of its simple commands
	// with quoting removed. nil means [DefaultDeny]; an empty non-nil slice
	// denies nothing.
	Deny []*regexp.Regexp
	// Otherwise is the decision for a command the allow-list does not
	// cover; empty means deny. Set it to toolloop.Ask to have an approver
	// or a human decide.
	Otherwise toolloop.Decision
	// Tools are the tools the policy applies to, all taking their command
	// line in a "command" argument; nil means exec_shell. Other calls are
	// allowed.
	Tools []string
}

// DefaultDeny returns the default denylist: commands that wipe the root or
// home folder, gain privileges, format or overwrite disks, fork-bomb, power
// off or reboot the machine, or kill every process. The patterns are case
// insensitive. The list is a tripwire, not a sandbox (see
// [CommandPolicy]).
func DefaultDeny() []*regexp.Regexp {
	pats := []string{
		// rm of /, /*, ~, ~/, $HOME, with any flags.
		`\brm\s+(?:-\S+\s+)*(?:--\s+)?(?:/|/\*|~/?|~/\*|\$HOME/?|\$\{HOME\}/?)(?:\s|$|[;&|)])`,
		`--no-preserve-root`,
		`\b(?:sudo|doas|pkexec)\b`,
		`^\s*su(?:\s|$)`, // checked against each simple command too
		`\bmkfs(?:\.\w+)?\b`,
		`\bmkswap\b`,
		`\bfdisk\b|\bparted\b|\bwipefs\b`,
		`\bdd\s+(?:\S+\s+)*if=`,
		`>\s*/dev/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)`,
		`\bof=/dev/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)`,
		`:\(\)\s*\{`,                          // the classic fork bomb
		`(\w+)\(\)\s*\{\s*\w+\s*\|\s*\w+\s*&`, // its renamed forms
		`\b(?:shutdown|reboot|poweroff|halt)\b`,
		`\binit\s+[06]\b`,
		`\bsystemctl\s+(?:poweroff|reboot|halt|kexec|suspend|hibernate)\b`,
		`\bkill\s+(?:-\S+\s+)*-1\b`,
		`\bchmod\s+(?:-\S+\s+)*(?:-R|--recursive)\s+\S+\s+/(?:\s|$)`,
		`\bchown\s+(?:-\S+\s+)*(?:-R|--recursive)\s+\S+\s+/(?:\s|$)`,
	}
	res := make([]*regexp.Regexp, len(pats))
	for i, p := range pats {
		res[i] = regexp.MustCompile(`(?i)` + p)
	}
	return res
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

func (p *CommandPolicy) check(command string) toolloop.Verdict {
	denyList := p.Deny
	if denyList == nil {
		denyList = defaultDeny
	}
	calls, perr := simpleCommands(command)
	texts := []string{command}
	for _, c := range calls {
		texts = append(texts, strings.Join(c, " "))
	}
	for _, re := range denyList {
		for _, t := range texts {
			if re.MatchString(t) {
				return deny("command-policy:deny", fmt.Sprintf("the command is on the denylist of dangerous commands (it matches %s), so it was not run", re.String()))
			}
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
	}
	return toolloop.Verdict{Decision: toolloop.Allow, Rule: "command-policy:allow"}
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

// simpleCommands parses a command line and returns the words of each
// simple command in it, quotes removed. A word that is not plain text (a
// variable, a substitution, a glob) is returned as "" in the command name
// position and as written elsewhere.
func simpleCommands(command string) ([][]string, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, err
	}
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
	return calls, nil
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
