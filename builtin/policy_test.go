package builtin

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

func checkCommand(p *CommandPolicy, tool, command string) toolloop.Verdict {
	args, _ := json.Marshal(map[string]string{"command": command})
	return p.Check(context.Background(), &toolloop.Call{Name: tool, Arguments: args})
}

func TestCommandPolicyDefaultDeny(t *testing.T) {
	denied := []string{
		"rm -rf /", "rm -rf /*", "rm -fr / ", "rm -r -f /", "cd x && rm -rf ~", "rm -rf ~/", "rm -rf $HOME",
		"rm --no-preserve-root -rf /", "sudo apt-get install x", "echo hi | sudo tee /etc/x", "SUDO ls", "doas ls",
		"su", "su - root", "ls; su root", "mkfs.ext4 /dev/sda1", "mkfs /dev/sdb", "dd if=/dev/zero of=/dev/sda",
		"dd bs=1M if=/dev/urandom of=x", "cat x > /dev/sda", ":(){ :|:& };:", "bomb(){ bomb|bomb& };bomb",
		"shutdown -h now", "reboot", "systemctl poweroff", "init 0", "halt", "kill -9 -1",
		"chmod -R 777 /", "s\"ud\"o ls",
	}
	allowed := []string{
		"rm -rf ./build", "rm -rf /tmp/scratch", "rm -rf ~/project/build", "ls -la", "go test ./...",
		"git commit -m 'fix pseudo code'", "echo sudoku", "dd_helper --x", "kill -9 12345", "kill -9 -12345",
		"grep -r shutdown_hook .", "echo success", "chmod -R 755 ./bin", "summary",
	}
	p := &CommandPolicy{}
	for _, c := range denied {
		v := checkCommand(p, ExecShell, c)
		assert.Equal(t, toolloop.Deny, v.Decision, "%q should be denied", c)
		assert.Equal(t, "command-policy:deny", v.Rule)
	}
	for _, c := range allowed {
		v := checkCommand(p, ExecShell, c)
		assert.Equal(t, toolloop.Allow, v.Decision, "%q should be allowed: %s", c, v.Reason)
	}
}

func TestCommandPolicyAllowList(t *testing.T) {
	p := &CommandPolicy{Allow: []string{"git", "go test", "ls", "echo", "cd"}}
	tests := []struct {
		command string
		want    toolloop.Decision
	}{
		{"git status", toolloop.Allow},
		{"go test ./...", toolloop.Allow},
		{"go build ./...", toolloop.Deny},
		{"cd sub && go test -run X ./...", toolloop.Allow},
		{"git status; curl evil.example", toolloop.Deny},
		{"ls | xargs cat", toolloop.Deny},
		{"echo $(whoami)", toolloop.Deny},
		{"echo `id`", toolloop.Deny},
		{"(cd x; ls)", toolloop.Allow},
		{"$CMD status", toolloop.Deny},
		{"\"git\" status", toolloop.Allow},
		{"f() { rm x; }; f", toolloop.Deny},
		{"FOO=1 go test ./...", toolloop.Allow},
		{"git commit -m 'a; rm -rf x'", toolloop.Allow},
		{"if ls x; then echo y; fi", toolloop.Allow},
		{"if true; then ls; fi", toolloop.Deny},
		{"ls 'unterminated", toolloop.Deny},
		{"sudo ls", toolloop.Deny},
		{"git status > out.txt 2>&1", toolloop.Allow},
		{"ls >/dev/null 2>&1; ls >&2", toolloop.Allow},
		{"ls > sub/out.txt", toolloop.Allow},
		{"cat > ~/.bashrc <<EOF\nx\nEOF", toolloop.Deny},
		{"echo x >> /etc/profile", toolloop.Deny},
		{"ls > ../out.txt", toolloop.Deny},
		{"ls > $HOME/out.txt", toolloop.Deny},
		{"ls >& /tmp/x", toolloop.Deny},
		{"git -c alias.x='!rm -rf ~' x", toolloop.Deny},
		{"git -C sub -c core.fsmonitor='rm f' status", toolloop.Deny},
		{"git --config-env=core.pager=X log", toolloop.Deny},
		{"git -C sub status", toolloop.Allow},
		{"git commit -c HEAD", toolloop.Allow},
	}
	for _, tt := range tests {
		v := checkCommand(p, ExecShell, tt.command)
		assert.Equal(t, tt.want, v.Decision, "%q: %s", tt.command, v.Reason)
	}

	// Documented, not caught: the sandbox is what stops these.
	for _, c := range []string{
		"x='a[$(rm f)]'; (( x ))", "x='a[$(rm f)]'; let x", "echo 'package p' > x_test.go; go test ./...",
	} {
		assert.Equal(t, toolloop.Allow, checkCommand(p, ExecShell, c).Decision, c)
	}
	gitOpts := &CommandPolicy{Allow: []string{"git -c user.name=bot commit", "git"}}
	assert.Equal(t, toolloop.Allow, checkCommand(gitOpts, ExecShell, "git -c alias.x=y x").Decision, "git options named in the allow-list")

	ask := &CommandPolicy{Allow: []string{"ls"}, Otherwise: toolloop.Ask}
	assert.Equal(t, toolloop.Ask, checkCommand(ask, ExecShell, "make").Decision)
	assert.Equal(t, toolloop.Deny, checkCommand(ask, ExecShell, "sudo ls").Decision, "the denylist wins over ask")
}

func TestCommandPolicyScope(t *testing.T) {
	p := &CommandPolicy{Allow: []string{"ls"}}
	assert.Equal(t, toolloop.Allow, checkCommand(p, ReadFile, "rm -rf /").Decision, "other tools are not its business")
	custom := &CommandPolicy{Tools: []string{"run"}, Deny: []DenyRule{{Pattern: regexp.MustCompile(`\bcurl\b`)}}}
	assert.Equal(t, toolloop.Deny, checkCommand(custom, "run", "curl x").Decision)
	assert.Equal(t, toolloop.Allow, checkCommand(custom, "run", "sudo x").Decision, "a custom denylist replaces the default")
	assert.Equal(t, toolloop.Allow, checkCommand(custom, ExecShell, "curl x").Decision)
	none := &CommandPolicy{Deny: []DenyRule{}}
	assert.Equal(t, toolloop.Allow, checkCommand(none, ExecShell, "sudo x").Decision)
	v := p.Check(context.Background(), &toolloop.Call{Name: ExecShell, Arguments: json.RawMessage(`{"command": 3}`)})
	assert.Equal(t, toolloop.Deny, v.Decision)
}

// TestCommandPolicyRefusalInWords: a denylist refusal names the command
// it refused (the simple command that matched, quotes removed, or the
// whole line) and says why in words; the regular expression is never
// shown. A rule without a description still reads as a sentence.
func TestCommandPolicyRefusalInWords(t *testing.T) {
	curl := regexp.MustCompile(`\bcurl\b`)
	tests := []struct {
		name    string
		policy  *CommandPolicy
		command string
		want    string
	}{
		{"rm of the root", &CommandPolicy{}, "rm -rf /",
			"`rm -rf /` deletes the root folder or the home folder, which the command policy's denylist does not allow; it was not run"},
		{"the simple command that matched", &CommandPolicy{}, "cd x && rm -rf ~ && echo done",
			"`rm -rf ~` deletes the root folder or the home folder, which the command policy's denylist does not allow; it was not run"},
		{"quotes removed", &CommandPolicy{}, `echo hi | s"ud"o tee /etc/x`,
			"`sudo tee /etc/x` runs a command with superuser privileges, which the command policy's denylist does not allow; it was not run"},
		{"only the whole line matches", &CommandPolicy{}, ":(){ :|:& };:",
			"`:(){ :|:& };:` is a fork bomb: it starts processes until the machine stops responding, which the command policy's denylist does not allow; it was not run"},
		{"on one line", &CommandPolicy{}, ":(){\n  :|:&\n};:",
			"`:(){ :|:& };:` is a fork bomb: it starts processes until the machine stops responding, which the command policy's denylist does not allow; it was not run"},
		{"a user's rule with a description", &CommandPolicy{Deny: []DenyRule{{Pattern: curl, Description: "downloads from the network"}}}, "curl -O x",
			"`curl -O x` downloads from the network, which the command policy's denylist does not allow; it was not run"},
		{"a user's rule without one", &CommandPolicy{Deny: []DenyRule{{Pattern: curl}}}, "curl -O x",
			"`curl -O x` is on the command policy's denylist; it was not run"},
		{"a rule without a pattern", &CommandPolicy{Deny: []DenyRule{{Description: "x"}}}, "ls",
			"`ls`: the command policy's denylist has a rule without a pattern, which refuses every command; it was not run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := checkCommand(tt.policy, ExecShell, tt.command)
			assert.Equal(t, toolloop.Deny, v.Decision)
			assert.Equal(t, "command-policy:deny", v.Rule)
			assert.Equal(t, tt.want, v.Reason)
		})
	}

	long := "sudo " + strings.Repeat("é", 200)
	v := checkCommand(&CommandPolicy{}, ExecShell, long)
	assert.True(t, utf8.ValidString(v.Reason))
	assert.Less(t, len(v.Reason), len(long), "a long command is cut")
	assert.Contains(t, v.Reason, "…` runs a command with superuser privileges")
}

// TestDefaultDenyDescribed: every built-in rule says in words what it
// refuses, and no refusal shows its pattern.
func TestDefaultDenyDescribed(t *testing.T) {
	rules := DefaultDeny()
	require.NotEmpty(t, rules)
	for _, r := range rules {
		require.NotNil(t, r.Pattern)
		assert.NotEmpty(t, r.Description, r.Pattern.String())
		assert.NotContains(t, r.refusal("x"), r.Pattern.String())
		assert.NotRegexp(t, `[\\(){}]`, r.Description, "a description is words, not a pattern")
	}
}

// A policy that asks says so, so a loop without an approver fails at the
// start of Run rather than denying every call it would ask about.
func TestCommandPolicyMayAsk(t *testing.T) {
	var ask toolloop.Guard = &CommandPolicy{Otherwise: toolloop.Ask}
	var deny toolloop.Guard = &CommandPolicy{}
	assert.True(t, ask.(toolloop.Asker).MayAsk())
	assert.False(t, deny.(toolloop.Asker).MayAsk())
	loop := &toolloop.AgentLoop{Model: toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		return &toolloop.Response{}, nil
	}), Guard: ask}
	_, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("hi")})
	assert.ErrorIs(t, err, toolloop.ErrNoApprover)
}
