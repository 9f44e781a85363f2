package sqlite_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolloop/toolloop/session"
)

// turn makes the records of one turn from seq on: a model response of
// about 1 KB, four tool completions of 2, 4, 6 and 8 KB, and the turn's
// end, of JSON as a run writes them.
func turn(seq int64) []session.Record {
	text := func(n int) string { return string(bytes.Repeat([]byte("lorem ipsum "), n/12)) }
	out := []session.Record{{Seq: seq, Data: fmt.Appendf(nil,
		`{"type":"model_response","turn":%d,"text":%q,"calls":[{"id":"c1","name":"read_file"},{"id":"c2","name":"grep"},{"id":"c3","name":"list"},{"id":"c4","name":"shell"}]}`,
		seq, text(900))}}
	for i, kb := range []int{2, 4, 6, 8} {
		out = append(out, session.Record{Seq: seq + int64(i) + 1, Data: fmt.Appendf(nil,
			`{"type":"call_completed","call":"c%d","result":%q}`, i+1, text(kb<<10))})
	}
	out = append(out, session.Record{Seq: seq + 5, Data: fmt.Appendf(nil,
		`{"type":"turn_ended","turn":%d,"usage":{"input_tokens":5210,"output_tokens":312}}`, seq)})
	return out
}

func batchBytes(rs []session.Record) (n int64) {
	for _, r := range rs {
		n += int64(len(r.Data))
	}
	return n
}

// BenchmarkAppendTurn appends one turn's batch of six records (about
// 21 KB), durably, per operation.
func BenchmarkAppendTurn(b *testing.B) {
	st := openT(b, filepath.Join(b.TempDir(), "s.db"))
	l := leased(b, st, "s", "t")
	proto := turn(1)
	b.SetBytes(batchBytes(proto))
	b.ReportAllocs()
	seq := int64(1)
	for b.Loop() {
		recs := make([]session.Record, len(proto))
		for i, r := range proto {
			recs[i] = session.Record{Seq: seq + int64(i), Data: r.Data}
		}
		if err := st.Append(b.Context(), l, session.Batch{Records: recs, Spend: session.Spend{InputTokens: 5210, OutputTokens: 312}, Status: session.StatusRunning}); err != nil {
			b.Fatal(err)
		}
		seq += int64(len(recs))
	}
}

// BenchmarkLoad1000 reads every record of a 1,000-turn session (6,000
// records, about 21 MB) with Records.
func BenchmarkLoad1000(b *testing.B) {
	st := openT(b, filepath.Join(b.TempDir(), "s.db"))
	l := leased(b, st, "s", "t")
	var size int64
	for i := range 1000 {
		recs := turn(int64(i*6 + 1))
		size += batchBytes(recs)
		if err := st.Append(b.Context(), l, session.Batch{Records: recs}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range st.Records(b.Context(), "s", 1) {
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
