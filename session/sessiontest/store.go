// Package sessiontest checks implementations of [session.Store]: one
// conformance suite that every store runs (this repository's Dir,
// SQLite and Postgres stores do), in the manner of testing/fstest.
//
//	func TestConformance(t *testing.T) {
//		sessiontest.TestStore(t, func(t *testing.T) sessiontest.Opener {
//			path := filepath.Join(t.TempDir(), "sessions.db")
//			return func(t *testing.T) session.Store {
//				st, err := sqlite.Open(path)
//				require.NoError(t, err)
//				t.Cleanup(func() { st.Close() })
//				return st
//			}
//		})
//	}
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolloop/toolloop/session"
)

// Opener opens a Store on one backing (a file, a database): each call is
// another handle on the same sessions, as another process would open
// them. It closes what it opens when t ends.
type Opener func(t *testing.T) session.Store

// NewBacking makes a fresh, empty backing for one test and returns its
// Opener.
type NewBacking func(t *testing.T) Opener

// TestStore runs the conformance suite against the stores newBacking
// makes. Each subtest has a backing of its own.
func TestStore(t *testing.T, newBacking NewBacking) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"CreateStat", testCreateStat},
		{"InvalidID", testInvalidID},
		{"Append", testAppend},
		{"AppendAtomic", testAppendAtomic},
		{"Records", testRecords},
		{"List", testList},
		{"Lease", testLease},
		{"LeaseExpiry", testLeaseExpiry},
		{"LeaseAcrossHandles", testLeaseAcrossHandles},
		{"Delete", testDelete},
		{"TenantSpend", testTenantSpend},
		{"ConcurrentAppends", testConcurrentAppends},
		{"ConcurrentAcquire", testConcurrentAcquire},
		{"Canceled", testCanceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newBacking(t))
		})
	}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want one matching %v", what, err, target)
	}
}

// recs makes n records numbered from first, with data that names them.
func recs(first int64, n int, base ...int64) []session.Record {
	out := make([]session.Record, n)
	for i := range out {
		seq := first + int64(i)
		out[i] = session.Record{Seq: seq, Data: fmt.Appendf(nil, `{"type":"test","n":%d,"text":"r\u00e9cord \"%d\"\n"}`, seq, seq)}
		for _, b := range base {
			if b == seq {
				out[i].Base = true
			}
		}
	}
	return out
}

func readAll(t *testing.T, st session.Store, id string, from int64) []session.Record {
	t.Helper()
	var out []session.Record
	for r, err := range st.Records(ctxOf(t), id, from) {
		must(t, err, "Records")
		out = append(out, r)
	}
	return out
}

func sameRecords(t *testing.T, got, want []session.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Seq != want[i].Seq || got[i].Base != want[i].Base || string(got[i].Data) != string(want[i].Data) {
			t.Fatalf("record %d: got {%d %v %s}, want {%d %v %s}", i, got[i].Seq, got[i].Base, got[i].Data,
				want[i].Seq, want[i].Base, want[i].Data)
		}
	}
}

const ttl = 10 * time.Second

func testCreateStat(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	before := time.Now().Add(-time.Minute)
	info := session.Info{ID: "s-1", User: "ana", Tenant: "acme", Title: "A title ü", Labels: map[string]string{"k": "v", "e": ""},
		Parent: "p", ForkedAt: 3, Head: 99, Base: 7, Status: session.StatusEnded, Spent: session.Spend{Cost: 1}}
	must(t, st.Create(ctx, info), "Create")
	got, err := st.Stat(ctx, "s-1")
	must(t, err, "Stat")
	if got.ID != "s-1" || got.User != "ana" || got.Tenant != "acme" || got.Title != "A title ü" || got.Parent != "p" || got.ForkedAt != 3 {
		t.Fatalf("Stat = %+v, want the fields Create was given", got)
	}
	if len(got.Labels) != 2 || got.Labels["k"] != "v" || got.Labels["e"] != "" {
		t.Fatalf("Labels = %v, want map[e: k:v]", got.Labels)
	}
	if got.Head != 0 || got.Base != 0 || got.Status != session.StatusNew || !got.Spent.IsZero() {
		t.Fatalf("a new session: Head %d Base %d Status %q Spent %+v, want 0 0 new and nothing spent", got.Head, got.Base, got.Status, got.Spent)
	}
	if got.Created.Before(before) || got.Updated.Before(got.Created) {
		t.Fatalf("Created %v Updated %v: want now, and Updated not before Created", got.Created, got.Updated)
	}
	wantErr(t, st.Create(ctx, session.Info{ID: "s-1"}), session.ErrExists, "Create of a taken ID")
	_, err = st.Stat(ctx, "nope")
	wantErr(t, err, session.ErrNotFound, "Stat of a missing session")
	_, err = st.Acquire(ctx, "nope", "h", ttl)
	wantErr(t, err, session.ErrNotFound, "Acquire of a missing session")
	for _, err := range st.Records(ctx, "nope", 1) {
		wantErr(t, err, session.ErrNotFound, "Records of a missing session")
	}
	// A session with no labels comes back with none.
	must(t, st.Create(ctx, session.Info{ID: "bare"}), "Create")
	got, err = st.Stat(ctx, "bare")
	must(t, err, "Stat")
	if len(got.Labels) != 0 || got.User != "" || got.Tenant != "" {
		t.Fatalf("bare session: %+v", got)
	}
}

func testInvalidID(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	for _, id := range []string{"", ".hidden", "a/b", "../x", "a b", "x\x00", string(make([]byte, session.MaxIDLength+1))} {
		wantErr(t, st.Create(ctx, session.Info{ID: id}), session.ErrInvalid, fmt.Sprintf("Create(%q)", id))
	}
	must(t, st.Create(ctx, session.Info{ID: "A-z_0.9:x@y"}), "Create of a valid ID")
}

func testAppend(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	must(t, st.Create(ctx, session.Info{ID: "s", Tenant: "t"}), "Create")
	l, err := st.Acquire(ctx, "s", "writer", ttl)
	must(t, err, "Acquire")
	if l.Session != "s" || l.Holder != "writer" || l.Token == 0 || !l.Expires.After(time.Now()) {
		t.Fatalf("Acquire = %+v: want the session, holder, a token and an expiry ahead", l)
	}
	first := recs(1, 3, 1)
	must(t, st.Append(ctx, l, session.Batch{Records: first, Spend: session.Spend{InputTokens: 10, OutputTokens: 2, Cost: 0.5}, Status: session.StatusRunning}), "Append")
	info, err := st.Stat(ctx, "s")
	must(t, err, "Stat")
	if info.Head != 3 || info.Base != 1 || info.Status != session.StatusRunning || info.Spent != (session.Spend{InputTokens: 10, OutputTokens: 2, Cost: 0.5}) {
		t.Fatalf("after one append: %+v", info)
	}
	second := recs(4, 2, 5)
	must(t, st.Append(ctx, l, session.Batch{Records: second, Spend: session.Spend{InputTokens: 1, Cost: 0.25}}), "Append")
	info, err = st.Stat(ctx, "s")
	must(t, err, "Stat")
	if info.Head != 5 || info.Base != 5 || info.Status != session.StatusRunning || info.Spent != (session.Spend{InputTokens: 11, OutputTokens: 2, Cost: 0.75}) {
		t.Fatalf("after two appends (no status in the second): %+v", info)
	}
	// A batch of no records still adds its spend and status.
	must(t, st.Append(ctx, l, session.Batch{Status: session.StatusEnded, Spend: session.Spend{OutputTokens: 1}}), "empty Append")
	info, err = st.Stat(ctx, "s")
	must(t, err, "Stat")
	if info.Head != 5 || info.Status != session.StatusEnded || info.Spent.OutputTokens != 3 {
		t.Fatalf("after an empty append: %+v", info)
	}
	sameRecords(t, readAll(t, st, "s", 1), append(first, second...))

	// Out of order: a gap, a repeat, a batch whose Seqs skip.
	wantErr(t, st.Append(ctx, l, session.Batch{Records: recs(7, 1)}), session.ErrConflict, "Append after a gap")
	wantErr(t, st.Append(ctx, l, session.Batch{Records: recs(5, 1)}), session.ErrConflict, "Append of a repeated Seq")
	bad := recs(6, 2)
	bad[1].Seq = 8
	wantErr(t, st.Append(ctx, l, session.Batch{Records: bad}), session.ErrInvalid, "Append of Seqs with a gap")
	sameRecords(t, readAll(t, st, "s", 1), append(first, second...))
	info, err = st.Stat(ctx, "s")
	must(t, err, "Stat")
	if info.Head != 5 || info.Spent.OutputTokens != 3 {
		t.Fatalf("a refused append changed the session: %+v", info)
	}
}

func testAppendAtomic(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	must(t, st.Create(ctx, session.Info{ID: "s", Tenant: "t"}), "Create")
	l, err := st.Acquire(ctx, "s", "w", ttl)
	must(t, err, "Acquire")
	// A big batch with large records goes in whole.
	big := recs(1, 500)
	for i := range big {
		if i%50 == 0 {
			big[i].Data = fmt.Appendf(nil, `{"type":"big","pad":"%0*d"}`, 256<<10, i)
		}
	}
	must(t, st.Append(ctx, l, session.Batch{Records: big, Spend: session.Spend{InputTokens: 1}}), "Append of 500 records")
	sameRecords(t, readAll(t, st, "s", 1), big)
	// A refused batch (lease released) writes nothing, spends nothing.
	must(t, st.Release(ctx, l), "Release")
	wantErr(t, st.Append(ctx, l, session.Batch{Records: recs(501, 3), Spend: session.Spend{InputTokens: 5}}), session.ErrLeaseLost, "Append after Release")
	info, err := st.Stat(ctx, "s")
	must(t, err, "Stat")
	spent, err := st.TenantSpend(ctx, "t")
	must(t, err, "TenantSpend")
	if info.Head != 500 || info.Spent.InputTokens != 1 || spent.InputTokens != 1 {
		t.Fatalf("a refused append changed something: Head %d Spent %+v tenant %+v", info.Head, info.Spent, spent)
	}
}

func testRecords(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	must(t, st.Create(ctx, session.Info{ID: "s"}), "Create")
	l, err := st.Acquire(ctx, "s", "w", ttl)
	must(t, err, "Acquire")
	all := recs(1, 20, 4, 9)
	for i := 0; i < 20; i += 5 {
		must(t, st.Append(ctx, l, session.Batch{Records: all[i : i+5]}), "Append")
	}
	sameRecords(t, readAll(t, st, "s", 0), all)
	sameRecords(t, readAll(t, st, "s", 9), all[8:])
	sameRecords(t, readAll(t, st, "s", 20), all[19:])
	sameRecords(t, readAll(t, st, "s", 21), nil)
	info, err := st.Stat(ctx, "s")
	must(t, err, "Stat")
	if info.Base != 9 || info.Head != 20 {
		t.Fatalf("Base %d Head %d, want 9 20", info.Base, info.Head)
	}
	// Stopping early is allowed, and the store stays usable.
	n := 0
	for _, err := range st.Records(ctx, "s", 1) {
		must(t, err, "Records")
		if n++; n == 3 {
			break
		}
	}
	must(t, st.Append(ctx, l, session.Batch{Records: recs(21, 1)}), "Append after an early break")
	// A session with no records yields none.
	must(t, st.Create(ctx, session.Info{ID: "empty"}), "Create")
	sameRecords(t, readAll(t, st, "empty", 1), nil)
}

func testList(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	mk := func(id, user, tenant string) {
		must(t, st.Create(ctx, session.Info{ID: id, User: user, Tenant: tenant}), "Create")
	}
	mk("a", "ana", "acme")
	mk("b", "bo", "acme")
	mk("c", "ana", "other")
	mk("d", "", "")
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	// Updating b makes it the most recent.
	l, err := st.Acquire(ctx, "b", "w", ttl)
	must(t, err, "Acquire")
	must(t, st.Append(ctx, l, session.Batch{Records: recs(1, 1, 1), Status: session.StatusPaused}), "Append")
	ids := func(f session.Filter) []string {
		t.Helper()
		list, err := st.List(ctx, f)
		must(t, err, "List")
		out := []string{}
		for _, in := range list {
			out = append(out, in.ID)
		}
		return out
	}
	check := func(name string, f session.Filter, want ...string) {
		t.Helper()
		got := ids(f)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("List %s = %v, want %v", name, got, want)
		}
	}
	all := ids(session.Filter{})
	if len(all) != 4 || all[0] != "b" {
		t.Fatalf("List = %v, want the four sessions, b (updated last) first", all)
	}
	check("user ana", session.Filter{User: "ana"}, orderOf(all, "a", "c")...)
	check("tenant acme", session.Filter{Tenant: "acme"}, "b", "a")
	check("user ana, tenant acme", session.Filter{User: "ana", Tenant: "acme"}, "a")
	check("status paused", session.Filter{Status: session.StatusPaused}, "b")
	check("status new", session.Filter{Status: session.StatusNew}, orderOf(all, "a", "c", "d")...)
	check("updated since", session.Filter{UpdatedSince: mid}, "b")
	check("updated since a far future", session.Filter{UpdatedSince: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)})
	check("updated since a far past", session.Filter{UpdatedSince: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)}, all...)
	check("limit", session.Filter{Limit: 2}, all[:2]...)
	check("offset", session.Filter{Limit: 2, Offset: 2}, all[2:]...)
	check("offset past the end", session.Filter{Offset: 10})
	check("no match", session.Filter{User: "nobody"})
	if _, err := st.List(ctx, session.Filter{Limit: -1}); !errors.Is(err, session.ErrInvalid) {
		t.Fatalf("List with a negative limit: %v, want ErrInvalid", err)
	}
	list, err := st.List(ctx, session.Filter{Tenant: "acme", Limit: 1})
	must(t, err, "List")
	if len(list) != 1 || list[0].Head != 1 || list[0].Base != 1 || list[0].Status != session.StatusPaused || list[0].User != "bo" {
		t.Fatalf("List gives whole Infos: %+v", list)
	}
}

// orderOf returns ids in the order they have in all.
func orderOf(all []string, ids ...string) []string {
	out := []string{}
	for _, a := range all {
		for _, id := range ids {
			if a == id {
				out = append(out, a)
			}
		}
	}
	return out
}

func testLease(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	must(t, st.Create(ctx, session.Info{ID: "s"}), "Create")
	l1, err := st.Acquire(ctx, "s", "one", ttl)
	must(t, err, "Acquire")
	_, err = st.Acquire(ctx, "s", "two", ttl)
	wantErr(t, err, session.ErrSessionBusy, "a second Acquire")
	_, err = st.Acquire(ctx, "s", "one", ttl)
	wantErr(t, err, session.ErrSessionBusy, "a second Acquire by the same holder")
	l1b, err := st.Renew(ctx, l1, 2*ttl)
	must(t, err, "Renew")
	if l1b.Token != l1.Token || !l1b.Expires.After(l1.Expires) {
		t.Fatalf("Renew = %+v from %+v: want the same token and a later expiry", l1b, l1)
	}
	must(t, st.Release(ctx, l1b), "Release")
	must(t, st.Release(ctx, l1b), "a second Release")
	_, err = st.Renew(ctx, l1b, ttl)
	wantErr(t, err, session.ErrLeaseLost, "Renew after Release")
	l2, err := st.Acquire(ctx, "s", "two", ttl)
	must(t, err, "Acquire after Release")
	if l2.Token <= l1.Token {
		t.Fatalf("token %d after %d: want a larger one", l2.Token, l1.Token)
	}
	// The old lease cannot write, release or renew the new one.
	wantErr(t, st.Append(ctx, l1, session.Batch{Records: recs(1, 1)}), session.ErrLeaseLost, "Append with a released lease")
	must(t, st.Release(ctx, l1), "Release of an old lease")
	must(t, st.Append(ctx, l2, session.Batch{Records: recs(1, 1)}), "Append with the current lease after an old lease's Release")
	// A forged lease (the right token, another session) is refused.
	must(t, st.Create(ctx, session.Info{ID: "other"}), "Create")
	forged := l2
	forged.Session = "other"
	wantErr(t, st.Append(ctx, forged, session.Batch{Records: recs(1, 1)}), session.ErrLeaseLost, "Append with another session's lease")
}

func testLeaseExpiry(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	must(t, st.Create(ctx, session.Info{ID: "s"}), "Create")
	short := 300 * time.Millisecond
	l1, err := st.Acquire(ctx, "s", "crashed", short)
	must(t, err, "Acquire")
	must(t, st.Append(ctx, l1, session.Batch{Records: recs(1, 2)}), "Append")
	time.Sleep(short + 700*time.Millisecond)
	// The holder "crashed": its lease lapsed, and another takes the session.
	wantErr(t, st.Append(ctx, l1, session.Batch{Records: recs(3, 1)}), session.ErrLeaseLost, "Append with an expired lease")
	_, err = st.Renew(ctx, l1, ttl)
	wantErr(t, err, session.ErrLeaseLost, "Renew of an expired lease")
	l2, err := st.Acquire(ctx, "s", "next", ttl)
	must(t, err, "Acquire after expiry")
	if l2.Token <= l1.Token {
		t.Fatalf("token %d after %d", l2.Token, l1.Token)
	}
	must(t, st.Append(ctx, l2, session.Batch{Records: recs(3, 1)}), "Append by the next holder")
	sameRecords(t, readAll(t, st, "s", 1), recs(1, 3))
}

func testLeaseAcrossHandles(t *testing.T, open Opener) {
	a, b, ctx := open(t), open(t), ctxOf(t)
	must(t, a.Create(ctx, session.Info{ID: "s", Tenant: "t"}), "Create")
	_, err := b.Stat(ctx, "s")
	must(t, err, "Stat through another handle")
	la, err := a.Acquire(ctx, "s", "a", ttl)
	must(t, err, "Acquire")
	_, err = b.Acquire(ctx, "s", "b", ttl)
	wantErr(t, err, session.ErrSessionBusy, "Acquire through another handle")
	must(t, a.Append(ctx, la, session.Batch{Records: recs(1, 2, 2), Spend: session.Spend{Cost: 1}}), "Append")
	sameRecords(t, readAll(t, b, "s", 1), recs(1, 2, 2))
	must(t, a.Release(ctx, la), "Release")
	lb, err := b.Acquire(ctx, "s", "b", ttl)
	must(t, err, "Acquire through the other handle after Release")
	wantErr(t, a.Append(ctx, la, session.Batch{Records: recs(3, 1)}), session.ErrLeaseLost, "Append with the released lease")
	must(t, b.Append(ctx, lb, session.Batch{Records: recs(3, 1), Spend: session.Spend{Cost: 2}}), "Append")
	spent, err := a.TenantSpend(ctx, "t")
	must(t, err, "TenantSpend")
	if spent.Cost != 3 {
		t.Fatalf("tenant spend %+v, want cost 3 from appends through both handles", spent)
	}
}

func testDelete(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	must(t, st.Create(ctx, session.Info{ID: "s", Tenant: "t"}), "Create")
	l, err := st.Acquire(ctx, "s", "w", ttl)
	must(t, err, "Acquire")
	must(t, st.Append(ctx, l, session.Batch{Records: recs(1, 3), Spend: session.Spend{InputTokens: 7}}), "Append")
	wantErr(t, st.Delete(ctx, "s"), session.ErrSessionBusy, "Delete of a leased session")
	must(t, st.Release(ctx, l), "Release")
	must(t, st.Delete(ctx, "s"), "Delete")
	_, err = st.Stat(ctx, "s")
	wantErr(t, err, session.ErrNotFound, "Stat after Delete")
	wantErr(t, st.Delete(ctx, "s"), session.ErrNotFound, "a second Delete")
	wantErr(t, st.Append(ctx, l, session.Batch{Records: recs(4, 1)}), session.ErrLeaseLost, "Append after Delete")
	spent, err := st.TenantSpend(ctx, "t")
	must(t, err, "TenantSpend")
	if spent.InputTokens != 7 {
		t.Fatalf("tenant spend after Delete %+v, want the deleted session's 7 input tokens kept", spent)
	}
	// The ID can be used again, for a session with nothing of the old one.
	must(t, st.Create(ctx, session.Info{ID: "s"}), "Create after Delete")
	sameRecords(t, readAll(t, st, "s", 1), nil)
	info, err := st.Stat(ctx, "s")
	must(t, err, "Stat")
	if info.Head != 0 || !info.Spent.IsZero() {
		t.Fatalf("a new session under a deleted one's ID: %+v", info)
	}
	l2, err := st.Acquire(ctx, "s", "w", ttl)
	must(t, err, "Acquire")
	if l2.Token == l.Token {
		t.Fatalf("the new session's lease has the deleted one's token %d: tokens must never repeat for an ID", l.Token)
	}
	wantErr(t, st.Append(ctx, l, session.Batch{Records: recs(1, 1)}), session.ErrLeaseLost, "the deleted session's lease on the new one")
}

func testTenantSpend(t *testing.T, open Opener) {
	st, ctx := open(t), ctxOf(t)
	spent, err := st.TenantSpend(ctx, "unknown")
	must(t, err, "TenantSpend of an unknown tenant")
	if !spent.IsZero() {
		t.Fatalf("unknown tenant spent %+v", spent)
	}
	for i, tenant := range []string{"t", "t", "u"} {
		id := fmt.Sprint("s", i)
		must(t, st.Create(ctx, session.Info{ID: id, Tenant: tenant}), "Create")
		l, err := st.Acquire(ctx, id, "w", ttl)
		must(t, err, "Acquire")
		must(t, st.Append(ctx, l, session.Batch{Records: recs(1, 1), Spend: session.Spend{InputTokens: 100, OutputTokens: 10, Cost: 0.125}}), "Append")
		must(t, st.Append(ctx, l, session.Batch{Spend: session.Spend{InputTokens: 1}}), "Append")
	}
	spent, err = st.TenantSpend(ctx, "t")
	must(t, err, "TenantSpend")
	if spent != (session.Spend{InputTokens: 202, OutputTokens: 20, Cost: 0.25}) {
		t.Fatalf("tenant t spent %+v", spent)
	}
	spent, err = st.TenantSpend(ctx, "u")
	must(t, err, "TenantSpend")
	if spent != (session.Spend{InputTokens: 101, OutputTokens: 10, Cost: 0.125}) {
		t.Fatalf("tenant u spent %+v", spent)
	}
}

func testConcurrentAppends(t *testing.T, open Opener) {
	ctx := ctxOf(t)
	setup := open(t)
	const sessions, batches = 8, 20
	for i := range sessions {
		must(t, setup.Create(ctx, session.Info{ID: fmt.Sprint("s", i), Tenant: "t"}), "Create")
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		st := setup
		if i%2 == 1 {
			st = open(t)
		}
		wg.Go(func() {
			id := fmt.Sprint("s", i)
			l, err := st.Acquire(ctx, id, "w", ttl)
			if err != nil {
				errs <- err
				return
			}
			for b := range batches {
				if err := st.Append(ctx, l, session.Batch{Records: recs(int64(b*3+1), 3), Spend: session.Spend{InputTokens: 1}}); err != nil {
					errs <- fmt.Errorf("session %s batch %d: %w", id, b, err)
					return
				}
			}
			errs <- st.Release(ctx, l)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err, "a concurrent writer")
	}
	for i := range sessions {
		sameRecords(t, readAll(t, setup, fmt.Sprint("s", i), 1), recs(1, 3*batches))
	}
	spent, err := setup.TenantSpend(ctx, "t")
	must(t, err, "TenantSpend")
	if spent.InputTokens != sessions*batches {
		t.Fatalf("tenant spent %d input tokens, want %d: concurrent appends lost an update", spent.InputTokens, sessions*batches)
	}
}

func testConcurrentAcquire(t *testing.T, open Opener) {
	ctx := ctxOf(t)
	stores := []session.Store{open(t), open(t), open(t)}
	must(t, stores[0].Create(ctx, session.Info{ID: "s"}), "Create")
	for round := range 10 {
		var wins, busy atomic.Int32
		var won atomic.Pointer[session.Lease]
		var wg sync.WaitGroup
		errs := make(chan error, 12)
		for i := range 12 {
			wg.Go(func() {
				st := stores[i%len(stores)]
				l, err := st.Acquire(ctx, "s", fmt.Sprint("h", i), ttl)
				switch {
				case err == nil:
					wins.Add(1)
					won.Store(&l)
				case errors.Is(err, session.ErrSessionBusy):
					busy.Add(1)
				default:
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			must(t, err, "Acquire")
		}
		if wins.Load() != 1 || busy.Load() != 11 {
			t.Fatalf("round %d: %d acquired and %d were busy, want exactly one winner", round, wins.Load(), busy.Load())
		}
		must(t, stores[0].Release(ctx, *won.Load()), "Release")
	}
}

func testCanceled(t *testing.T, open Opener) {
	st := open(t)
	must(t, st.Create(ctxOf(t), session.Info{ID: "s"}), "Create")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Stat(ctx, "s"); err == nil {
		t.Logf("note: Stat on a canceled context succeeded")
	}
	if err := st.Create(ctx, session.Info{ID: "t"}); err == nil {
		if _, err := st.Stat(ctxOf(t), "t"); err != nil {
			t.Fatalf("Create on a canceled context reported success, but the session is not there: %v", err)
		}
	}
	if _, err := st.Acquire(ctx, "s", "w", ttl); err == nil {
		t.Fatalf("Acquire on a canceled context succeeded; want the context's error")
	}
	// The store is still usable after calls on canceled contexts.
	l, err := st.Acquire(ctxOf(t), "s", "w", ttl)
	must(t, err, "Acquire")
	must(t, st.Append(ctxOf(t), l, session.Batch{Records: recs(1, 1)}), "Append")
}
