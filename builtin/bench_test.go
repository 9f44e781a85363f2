package builtin

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
)

// discard is a Reporter that drops what it is given, so benchmarks pay
// for streaming partial output without keeping it.
type discard struct{}

func (discard) ReportProgress(*toolloop.Call, toolloop.Progress) {}
func (discard) ReportPartial(*toolloop.Call, string)             {}

// peakHeap samples HeapInuse until stop is closed and returns the peak.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var ms runtime.MemStats
		var peak uint64
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// BenchmarkExecShell1GB runs a command that prints 1 GiB (less 24 bytes,
// to end on a whole line) in 100-byte lines between a first and a last
// line, and reports the peak heap in use
// while it runs (target: under 64 MiB). It checks that the result still
// holds the first and the last line.
//
//	go test -run XXX -bench ExecShell1GB -benchmem ./builtin
func BenchmarkExecShell1GB(b *testing.B) {
	src, _ := newTestWorkspace(b, nil, nil)
	const lines = (1 << 30) / 100 // 1 GiB, in whole 100-byte lines
	const size = lines * 100
	line := strings.Repeat("x", 99)
	command := fmt.Sprintf("echo FIRST; yes %s | head -n %d; echo LAST", line, lines)
	tool := src.Tool(ExecShell)
	args := []byte(fmt.Sprintf(`{"command": %q, "timeout_seconds": 600}`, command))
	runtime.GC()
	stop := make(chan struct{})
	peak := peakHeap(stop)
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		r, err := tool.Run(context.Background(), &toolloop.Call{Name: ExecShell, Arguments: args, Reporter: discard{}})
		if err != nil || r.IsError() {
			b.Fatalf("%v %v", err, r)
		}
		text := r.Text()
		if !strings.HasPrefix(text, "FIRST\n"+line+"\n") || !strings.HasSuffix(text, line+"\nLAST\n[exit code 0]") {
			b.Fatalf("first or last line missing: %q ... %q", text[:min(200, len(text))], text[max(0, len(text)-200):])
		}
		if n := r.Meta.Extra["output_bytes"].(int64); n != int64(size+len("FIRST\nLAST\n")) {
			b.Fatalf("counted %d bytes", n)
		}
	}
	b.StopTimer()
	close(stop)
	p := <-peak
	b.ReportMetric(float64(p)/(1<<20), "peak-heap-MiB")
	if p >= 64<<20 {
		b.Errorf("peak heap %d MiB, want under 64 MiB", p>>20)
	}
}

var (
	grepTreeOnce sync.Once
	grepTreeDir  string
	grepTreeErr  error
)

// grepTree generates 20,000 source-like files in 200 folders, about 1.6 KB
// each, 500 of them with a line the benchmark pattern matches. It is made
// once per process, outside the timed part, and removed by TestMain.
func grepTree(b *testing.B) string {
	grepTreeOnce.Do(func() {
		grepTreeDir, grepTreeErr = os.MkdirTemp("", "toolloop-grep-bench")
		if grepTreeErr != nil {
			return
		}
		var body strings.Builder
		for i := range 40 {
			fmt.Fprintf(&body, "\tvalue%02d := compute(input, %d) // some ordinary code here\n", i, i)
		}
		for i := range 20000 {
			dir := filepath.Join(grepTreeDir, fmt.Sprintf("pkg%02d", i%20), fmt.Sprintf("sub%d", i%10))
			if i < 200 {
				if grepTreeErr = os.MkdirAll(dir, 0o755); grepTreeErr != nil {
					return
				}
			}
			content := "package p\n\n" + body.String()
			if i%40 == 0 {
				content += fmt.Sprintf("func Serve%dHandler(w Writer) {}\n", i)
			}
			if grepTreeErr = os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%05d.go", i)), []byte(content), 0o644); grepTreeErr != nil {
				return
			}
		}
	})
	if grepTreeErr != nil {
		b.Fatal(grepTreeErr)
	}
	return grepTreeDir
}

const grepPattern = `func \w+Handler\(`

// BenchmarkGrepSearch20k compares grep_search with grep -r over the same
// tree of 20,000 files in the same run: "toolloop" and "grep-r" time each
// alone; "ratio" times them alternately and reports toolloop/grep-r
// (target: at most 1). grep runs with LC_ALL=C, its fastest setting.
//
//	go test -run XXX -bench GrepSearch20k -benchmem ./builtin
func BenchmarkGrepSearch20k(b *testing.B) {
	if _, err := exec.LookPath("grep"); err != nil {
		b.Skip("no grep")
	}
	dir := grepTree(b)
	src, err := Workspace(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	tool := src.Tool(GrepSearch)
	args := []byte(fmt.Sprintf(`{"pattern": %q, "max_results": 1000}`, grepPattern))
	ours := func(b *testing.B) {
		r, err := tool.Run(context.Background(), &toolloop.Call{Name: GrepSearch, Arguments: args})
		if err != nil || r.IsError() || r.Meta.Extra["matches"] != 500 {
			b.Fatalf("%v %+v", err, r)
		}
	}
	theirs := func(b *testing.B) {
		cmd := exec.Command("grep", "-rnE", grepPattern, ".")
		cmd.Dir, cmd.Stdout, cmd.Env = dir, io.Discard, append(os.Environ(), "LC_ALL=C")
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
	ours(b) // warm the page cache
	theirs(b)
	b.Run("toolloop", func(b *testing.B) {
		for b.Loop() {
			ours(b)
		}
	})
	b.Run("grep-r", func(b *testing.B) {
		for b.Loop() {
			theirs(b)
		}
	})
	b.Run("ratio", func(b *testing.B) {
		var o, g time.Duration
		for b.Loop() {
			t0 := time.Now()
			ours(b)
			t1 := time.Now()
			theirs(b)
			o, g = o+t1.Sub(t0), g+time.Since(t1)
		}
		b.ReportMetric(float64(o)/float64(g), "toolloop/grep-r")
		b.ReportMetric(float64(o.Nanoseconds())/float64(b.N), "toolloop-ns/op")
		b.ReportMetric(float64(g.Nanoseconds())/float64(b.N), "grep-r-ns/op")
	})
}

// BenchmarkExecShellSandbox measures what the sandbox adds to starting a
// command: exec_shell running true unconfined, sandboxed (files and
// network), and sandboxed with the network allowed (files only, so no
// network namespace). "overhead" runs an unconfined and a sandboxed call
// alternately and reports the extra time per sandboxed command.
//
//	go test -run XXX -bench ExecShellSandbox -benchmem ./builtin
func BenchmarkExecShellSandbox(b *testing.B) {
	open := func(sb Sandbox) toolloop.Tool {
		src, _ := newTestWorkspace(b, nil, &Options{Shell: ShellOptions{Sandbox: sb}})
		return src.Tool(ExecShell)
	}
	unconfined, sandboxed, filesOnly := open(Sandbox{Disabled: true}), open(Sandbox{}), open(Sandbox{AllowNetwork: true})
	args := []byte(`{"command": "true"}`)
	run := func(b *testing.B, tool toolloop.Tool) {
		r, err := tool.Run(context.Background(), &toolloop.Call{Name: ExecShell, Arguments: args})
		if err != nil || r.IsError() {
			b.Fatalf("%v %v", err, r)
		}
	}
	b.Logf("sandbox: %s", sandboxed.Spec().Description[strings.LastIndex(sandboxed.Spec().Description, "\n")+1:])
	for _, c := range []struct {
		name string
		tool toolloop.Tool
	}{{"unconfined", unconfined}, {"sandboxed", sandboxed}, {"sandboxed-network-allowed", filesOnly}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				run(b, c.tool)
			}
		})
	}
	b.Run("overhead", func(b *testing.B) {
		var u, s, uCPU, sCPU time.Duration
		for b.Loop() {
			c0, t0 := cpuTime(), time.Now()
			run(b, unconfined)
			c1, t1 := cpuTime(), time.Now()
			run(b, sandboxed)
			c2, t2 := cpuTime(), time.Now()
			u, s = u+t1.Sub(t0), s+t2.Sub(t1)
			uCPU, sCPU = uCPU+c1-c0, sCPU+c2-c1
		}
		n := float64(b.N)
		b.ReportMetric(float64((s-u).Microseconds())/n, "extra-µs/command")
		b.ReportMetric(float64(s)/float64(u), "sandboxed/unconfined")
		b.ReportMetric(float64(uCPU.Microseconds())/n, "unconfined-cpu-µs/command")
		b.ReportMetric(float64(sCPU.Microseconds())/n, "sandboxed-cpu-µs/command")
	})
}
