package plugin

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
)

// hostEnv makes the test binary act as a plugin host that never closes
// its plugin, for TestHostDeathLeavesNoOrphan.
const hostEnv = "TOOLLOOP_PLUGIN_TEST_HOST"

// exampleEnv makes the test binary act as the plugin of ExampleNew.
const exampleEnv = "TOOLLOOP_PLUGIN_EXAMPLE"

// binDir holds the binaries the tests build, once per test binary run.
var binDir string

func TestMain(m *testing.M) {
	if bin := os.Getenv(hostEnv); bin != "" {
		actAsHost(bin)
		return
	}
	if os.Getenv(exampleEnv) == "1" {
		Serve(wordCount())
		return
	}
	dir, err := os.MkdirTemp("", "toolloop-plugin-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// Every Source is closed by the test that made it, and Close waits
	// for the process and for every goroutine the Source started. What
	// go-plugin, yamux and net/rpc start for a connection ends when the
	// connection closes, which goleak's retries wait for; nothing needs
	// to be ignored.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// actAsHost starts the plugin bin, prints its PID and waits to be killed.
func actAsHost(bin string) {
	src := New(Config{Command: bin})
	if _, err := src.Tools(context.Background()); err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("PID", src.pid())
	time.Sleep(time.Hour)
}

// wordCount is the tool of ExampleServe and ExampleNew.
func wordCount() toolloop.Tool {
	type in struct {
		Text string `json:"text"`
	}
	return &reportingTool{toolloop.NewTool("word_count", "Count the words of a text.",
		func(_ context.Context, in in) (any, error) {
			return fmt.Sprintf("%d words", len(strings.Fields(in.Text))), nil
		})}
}

// reportingTool reports progress before it runs the tool it wraps.
type reportingTool struct{ toolloop.Tool }

func (t *reportingTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	call.ReportProgress(toolloop.Progress{Message: "counting"})
	return t.Tool.Run(ctx, call)
}

var builds sync.Map // package path → *buildOnce

type buildOnce struct {
	once sync.Once
	path string
	err  error
}

// build compiles the main package pkg (relative to this package) into
// binDir once, and returns the binary's path.
func build(tb testing.TB, pkg string) string {
	tb.Helper()
	v, _ := builds.LoadOrStore(pkg, &buildOnce{})
	b := v.(*buildOnce)
	b.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = "go"
		}
		b.path = filepath.Join(binDir, filepath.Base(pkg))
		if runtime.GOOS == "windows" {
			b.path += ".exe"
		}
		out, err := exec.Command(goBin, "build", "-o", b.path, pkg).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	require.NoError(tb, b.err)
	return b.path
}

func samplePath(tb testing.TB) string { return build(tb, "./internal/sampleplugin") }

// newSample returns a started Source over the sample plugin, closed when
// the test ends.
func newSample(tb testing.TB, cfg Config) *Source {
	tb.Helper()
	if cfg.Command == "" {
		cfg.Command = samplePath(tb)
	}
	if cfg.Name == "" {
		cfg.Name = "sample"
	}
	src := New(cfg)
	tb.Cleanup(func() { _ = src.Close() })
	_, err := src.Tools(context.Background())
	require.NoError(tb, err)
	return src
}

// pid returns the PID of the running plugin process, or 0.
func (s *Source) pid() int {
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if p == nil || !isClosed(p.ready) || p.err != nil {
		return 0
	}
	return p.pid
}

// readPID reads the "PID n" line a host child prints.
func readPID(tb testing.TB, sc *bufio.Scanner) int {
	tb.Helper()
	for sc.Scan() {
		var pid int
		if _, err := fmt.Sscanf(sc.Text(), "PID %d", &pid); err == nil {
			return pid
		}
		tb.Logf("host: %s", sc.Text())
	}
	tb.Fatalf("the host printed no PID: %v", sc.Err())
	return 0
}
