package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/session"
)

// benchDir opens a Dir in the benchmark's temporary folder, or in
// $TOOLLOOP_BENCH_DIR if it is set (as package eventlog's benchmarks do:
// set it to a folder on the disk the sessions will live on if TMPDIR is
// on tmpfs).
func benchDir(b *testing.B) *session.Dir {
	parent := os.Getenv("TOOLLOOP_BENCH_DIR")
	if parent == "" {
		parent = b.TempDir()
	} else {
		var err error
		parent, err = os.MkdirTemp(parent, "bench")
		require.NoError(b, err)
		b.Cleanup(func() { os.RemoveAll(parent) })
	}
	d, err := session.OpenDir(filepath.Join(parent, "sessions"))
	require.NoError(b, err)
	b.Cleanup(func() { d.Close() })
	return d
}

// turn returns the records of one turn from seq on: a model response of
// about 1 KB, four tool completions of 2, 4, 6 and 8 KB, and the turn's
// end; and their size.
func turn(seq int64) ([]session.Record, int64) {
	text := func(n int) string { return strings.Repeat("lorem ipsum dolor sit amet, \\\"quoted\\\" ", n/30+1)[:n] }
	data := []string{
		fmt.Sprintf(`{"type":"model.response","message":{"role":"assistant","content":%q,"tool_calls":[{"id":"c1","name":"read"},{"id":"c2","name":"grep"},{"id":"c3","name":"run"},{"id":"c4","name":"edit"}]},"usage":{"input_tokens":1200,"output_tokens":80}}`, text(800)),
	}
	for i, kb := range []int{2, 4, 6, 8} {
		data = append(data, fmt.Sprintf(`{"type":"tool.execution_end","call_id":"c%d","result":{"output":%q}}`, i+1, text(kb<<10)))
	}
	data = append(data, `{"type":"turn.end","turn":1,"duration_ms":1234}`)
	out := make([]session.Record, len(data))
	var size int64
	for i, d := range data {
		out[i] = session.Record{Seq: seq + int64(i), Data: []byte(d)}
		size += int64(len(d))
	}
	return out, size
}

// BenchmarkDirAppendTurn measures the Append of one turn's batch, synced.
func BenchmarkDirAppendTurn(b *testing.B) {
	d := benchDir(b)
	ctx := context.Background()
	require.NoError(b, d.Create(ctx, session.Info{ID: "s"}))
	l, err := d.Acquire(ctx, "s", "bench", ttl)
	require.NoError(b, err)
	seq := int64(1)
	recs, size := turn(1)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for i := range recs {
			recs[i].Seq = seq + int64(i)
		}
		if err := d.Append(ctx, l, session.Batch{Records: recs, Spend: session.Spend{InputTokens: 1200, OutputTokens: 80}}); err != nil {
			b.Fatal(err)
		}
		seq += int64(len(recs))
	}
}

// BenchmarkDirLoad1000 measures reading all the records of a session of
// 1,000 turns (6,000 records, 25 MB).
func BenchmarkDirLoad1000(b *testing.B) {
	d := benchDir(b)
	ctx := context.Background()
	require.NoError(b, d.Create(ctx, session.Info{ID: "s"}))
	l, err := d.Acquire(ctx, "s", "bench", ttl)
	require.NoError(b, err)
	var total int64
	for i := range 1000 {
		recs, size := turn(int64(i*6 + 1))
		recs[0].Base = i == 0
		require.NoError(b, d.Append(ctx, l, session.Batch{Records: recs}))
		total += size
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range d.Records(ctx, "s", 1) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 6000 {
			b.Fatalf("read %d records, want 6000", n)
		}
	}
}
