package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCheckpoint20k records the state of a 20,000-file tree (200
// folders of 100 files of about 200 bytes): "first" into an empty store,
// as the first call of a session does, and "again" after one file
// changed, as every later call does. Each "again" iteration changes a
// file (outside the timer) and records the tree.
//
//	go test -run XXX -bench Checkpoint20k -benchmem ./builtin
func BenchmarkCheckpoint20k(b *testing.B) {
	dir := b.TempDir()
	for d := range 200 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			body := fmt.Sprintf("package pkg%03d\n\n// file %d of folder %d, with some text to make it look like source.\nfunc F%d() int { return %d }\n", d, f, d, f, d*f)
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", f)), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	open := func(b *testing.B) (*Source, *Checkpoints) {
		src, err := Workspace(dir, &Options{Tools: []string{WriteFile}, Checkpoints: &CheckpointOptions{Dir: b.TempDir()}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = src.Close() })
		return src, src.Checkpoints()
	}
	cp := Checkpoint{CallID: "bench", Tool: WriteFile}

	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			_, c := open(b)
			b.StartTimer()
			if _, err := c.begin(b.Context(), cp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		_, c := open(b)
		if _, err := c.begin(b.Context(), cp); err != nil {
			b.Fatal(err)
		}
		changed := filepath.Join(dir, "pkg100", "f050.go")
		n := 0
		for b.Loop() {
			b.StopTimer()
			n++
			if err := os.WriteFile(changed, fmt.Appendf(nil, "package pkg100\n// change %d\n", n), 0o644); err != nil {
				b.Fatal(err)
			}
			c.mu.Lock()
			c.records = c.records[:0] // keep memory flat over many iterations
			c.mu.Unlock()
			b.StartTimer()
			if _, err := c.begin(b.Context(), cp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
