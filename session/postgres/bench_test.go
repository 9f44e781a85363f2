package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolloop/toolloop/session"
)

// BenchmarkAppendTurn appends one agent turn a call: six records, a
// model response of about 1 KB, four tool completions of 2 to 8 KB and
// the turn's end (21 KB in all), with spend and a status.
func BenchmarkAppendTurn(b *testing.B) {
	dsn := newDatabase(b)
	st, ctx := open(b, dsn), context.Background()
	if err := st.Create(ctx, session.Info{ID: "s", Tenant: "t"}); err != nil {
		b.Fatal(err)
	}
	l, err := st.Acquire(ctx, "s", "w", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	turn := turnRecords(1)
	size := 0
	for _, r := range turn {
		size += len(r.Data)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	seq := int64(1)
	recs := make([]session.Record, len(turn))
	for b.Loop() {
		for i, r := range turn { // the same data, at the next Seqs
			recs[i] = session.Record{Seq: seq + int64(i), Data: r.Data}
		}
		if err := st.Append(ctx, l, session.Batch{Records: recs, Spend: session.Spend{InputTokens: 1000, OutputTokens: 100, Cost: 0.01}, Status: session.StatusRunning}); err != nil {
			b.Fatal(err)
		}
		seq += int64(len(recs))
	}
}

// BenchmarkLoad1000 reads every record of a session of 1,000 turns
// (6,000 records, 21 MB).
func BenchmarkLoad1000(b *testing.B) {
	dsn := newDatabase(b)
	st, ctx := open(b, dsn), context.Background()
	if err := st.Create(ctx, session.Info{ID: "s"}); err != nil {
		b.Fatal(err)
	}
	l, err := st.Acquire(ctx, "s", "w", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for turn := range 1000 {
		recs := turnRecords(int64(turn*6 + 1))
		for _, r := range recs {
			size += len(r.Data)
		}
		if err := st.Append(ctx, l, session.Batch{Records: recs}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range st.Records(ctx, "s", 1) {
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
