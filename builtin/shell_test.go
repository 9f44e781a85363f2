//go:build unix

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

// partials records the partial output a tool reports.
type partials struct {
	mu   sync.Mutex
	text []string
}

func (p *partials) ReportProgress(*toolloop.Call, toolloop.Progress) {}
func (p *partials) ReportPartial(_ *toolloop.Call, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.text = append(p.text, text)
}

func (p *partials) all() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.text, "")
}

func TestExecShell(t *testing.T) {
	src, dir := newTestWorkspace(t, map[string]string{"f.txt": "content\n"}, &Options{Shell: ShellOptions{Env: []string{"TOOLLOOP_TEST=yes"}}})
	tests := []struct {
		name     string
		command  string
		wantKind toolloop.ErrorKind
		code     int
		contains []string
	}{
		{name: "output", command: "echo hello", contains: []string{"hello\n", "[exit code 0]"}},
		{name: "runs in the workspace", command: "cat f.txt && pwd", contains: []string{"content\n" + dir + "\n"}},
		{name: "stderr merged in order", command: "echo out; echo err >&2; echo out2", contains: []string{"out\nerr\nout2\n"}},
		{name: "non-zero exit", command: "echo failing; exit 3", wantKind: toolloop.KindExecutionFailed, code: 3, contains: []string{"failing\n", "[the command exited with code 3]"}},
		{name: "no output", command: "true", contains: []string{"(no output)"}},
		{name: "environment", command: "echo $TOOLLOOP_TEST $GIT_PAGER", contains: []string{"yes cat\n"}},
		{name: "stdin is empty", command: "cat; echo done", contains: []string{"done\n"}},
		{name: "killed by signal", command: "kill -9 $$", wantKind: toolloop.KindExecutionFailed, code: -1, contains: []string{"signal"}},
		{name: "empty", command: "  ", wantKind: toolloop.KindInvalidArgs, code: -2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, src, ExecShell, execShellIn{Command: tt.command})
			require.Equal(t, tt.wantKind, kindOf(r), r.Text())
			for _, c := range tt.contains {
				assert.Contains(t, r.Text(), c)
			}
			if tt.code == -1 && src.Confinement().Isolated {
				// Under the init process of its PID namespace, which
				// exits as a shell does: 128 + the signal.
				tt.code = 128 + 9
				assert.Contains(t, r.Text(), "SIGKILL")
			}
			if tt.code != -2 {
				assert.Equal(t, tt.code, r.Meta.Extra["exit_code"])
			}
		})
	}
}

// hostPID is a shell command that writes the process ID of the shell
// that runs it, as this program sees it, to file: in a PID namespace,
// $$ is the ID inside, which means another process out here; /proc is
// the host's, where /proc/self is the reader's ID out here.
func hostPID(file string) string {
	if runtime.GOOS == "linux" {
		return "read p _ </proc/self/stat; echo $p > " + file
	}
	return "echo $$ > " + file
}

// alive reports whether a process exists (and is not a zombie we own).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.False(t, alive(pid), "process %d survived", pid)
}

func TestExecShellTimeoutKillsGroup(t *testing.T) {
	src, dir := newTestWorkspace(t, nil, nil)
	start := time.Now()
	r := call(t, src, ExecShell, execShellIn{
		Command:        `sh -c "sh -c '` + strings.ReplaceAll(hostPID("grandchild.pid"), "$", `\$`) + `; exec sleep 60' & wait" & until [ -s grandchild.pid ]; do sleep 0.05; done; echo started; wait`,
		TimeoutSeconds: 1,
	})
	assert.Less(t, time.Since(start), 20*time.Second)
	require.Equal(t, toolloop.KindTimeout, kindOf(r), r.Text())
	assert.Contains(t, r.Text(), "started\n")
	assert.Equal(t, true, r.Meta.Extra["timed_out"])
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "grandchild.pid"))))
	require.NoError(t, err)
	waitDead(t, pid)
}

func TestExecShellKillsBackgroundOnExit(t *testing.T) {
	src, dir := newTestWorkspace(t, nil, nil)
	r := call(t, src, ExecShell, execShellIn{Command: "sh -c '" + hostPID("bg.pid") + "; exec sleep 60' > /dev/null 2>&1 & until [ -s bg.pid ]; do sleep 0.05; done; echo ok"})
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "bg.pid"))))
	require.NoError(t, err)
	waitDead(t, pid)
}

func TestExecShellEscapedChildDoesNotHang(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("no setsid")
	}
	src, dir := newTestWorkspace(t, nil, nil)
	start := time.Now()
	// The escaped process keeps the output pipe open; the tool must still
	// return soon after the shell exits.
	r := call(t, src, ExecShell, execShellIn{Command: "setsid sh -c '" + hostPID("esc.pid") + "; exec sleep 30' & until [ -s esc.pid ]; do sleep 0.05; done; echo ok"})
	assert.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	assert.Contains(t, r.Text(), "ok\n")
	if pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "esc.pid")))); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestExecShellCanceled(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	r := callCtx(ctx, t, src, ExecShell, execShellIn{Command: "echo begun; sleep 60"}, nil)
	assert.Equal(t, toolloop.KindCanceled, kindOf(r), r.Text())
	assert.Contains(t, r.Text(), "begun")
}

func TestExecShellBoundedOutput(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, &Options{Shell: ShellOptions{KeepBytes: 1000}})
	rep := &partials{}
	r := callCtx(context.Background(), t, src, ExecShell, execShellIn{Command: "echo FIRST; seq 1 200000; echo LAST"}, rep)
	require.Equal(t, toolloop.ErrorKind(""), kindOf(r), r.Text())
	text := r.Text()
	assert.Less(t, len(text), 1500)
	assert.True(t, strings.HasPrefix(text, "FIRST\n1\n2\n"), text)
	assert.Contains(t, text, "199999\n200000\nLAST\n[exit code 0]")
	assert.Contains(t, text, "left out of the middle")
	assert.Equal(t, true, r.Meta.Extra["output_truncated"])
	assert.Equal(t, int64(200002), r.Meta.Extra["output_lines"])
	assert.True(t, strings.HasPrefix(rep.all(), "FIRST\n1\n"), "partial output is streamed")
}

func TestExecShellStreamsWhileRunning(t *testing.T) {
	src, _ := newTestWorkspace(t, nil, nil)
	rep := &partials{}
	done := make(chan *toolloop.ToolResult)
	go func() {
		done <- callCtx(context.Background(), t, src, ExecShell, execShellIn{Command: "echo one; sleep 1; echo two"}, rep)
	}()
	require.Eventually(t, func() bool { return rep.all() == "one\n" }, 5*time.Second, 10*time.Millisecond)
	r := <-done
	assert.Equal(t, "one\ntwo\n", rep.all())
	assert.Equal(t, "one\ntwo\n[exit code 0]", r.Text())
}

func TestHeadTail(t *testing.T) {
	tests := []struct {
		name   string
		keep   int
		writes []string
		want   string
	}{
		{name: "fits", keep: 100, writes: []string{"a\n", "b\n"}, want: "a\nb\n"},
		{name: "exactly full", keep: 100, writes: []string{strings.Repeat("x", 100)}, want: strings.Repeat("x", 100)},
		{
			name: "cut at lines", keep: 100,
			writes: []string{"head1\nhead2\n", strings.Repeat("m\n", 500), "tail1\ntail2\n"},
			want:   "head1\nhead2\n" + strings.Repeat("m\n", 14),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHeadTail(tt.keep)
			for _, w := range tt.writes {
				_, _ = h.Write([]byte(w))
			}
			assert.True(t, strings.HasPrefix(h.String(), tt.want), h.String())
		})
	}
	h := newHeadTail(100)
	for range 10000 {
		_, _ = h.Write([]byte("ééééé\n"))
	}
	s := h.String()
	assert.NotContains(t, s, "\uFFFD", "cuts never split a character")
	assert.True(t, strings.HasSuffix(s, "ééééé\n"))
	assert.Contains(t, s, "the command printed 110000 bytes in 10000 lines")
}
