package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// binary is the toolloop command, built once for the tests that run it as
// a process (in a pseudo-terminal).
var binary string

// configHome is the tests' TOOLLOOP_CONFIG_DIR, shared by every run of
// the command, so that its seal key is made once, away from the user's.
var configHome string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolloop-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "toolloop")
	configHome = filepath.Join(dir, "config")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building toolloop: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// testEnv is an env for running the command in the test's process.
type testEnv struct {
	*env
	out, errOut *bytes.Buffer
	vars        map[string]string
	ints        chan os.Signal
}

func newTestEnv(t *testing.T, stdin string) *testEnv {
	t.Helper()
	te := &testEnv{out: &bytes.Buffer{}, errOut: &bytes.Buffer{}, vars: map[string]string{"TOOLLOOP_CONFIG_DIR": configHome}, ints: make(chan os.Signal, 2)}
	te.env = &env{
		stdin: strings.NewReader(stdin), stdout: te.out, stderr: te.errOut,
		getenv: func(k string) string { return te.vars[k] }, interrupts: te.ints, dir: t.TempDir(),
	}
	return te
}

// run runs the command and returns its exit code.
func (te *testEnv) run(t *testing.T, args ...string) int {
	t.Helper()
	return run(context.Background(), te.env, args)
}

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
