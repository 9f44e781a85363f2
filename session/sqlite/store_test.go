package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sqlite"
)

// rawDB opens the file with the driver alone, as another program might,
// and closes it when t ends.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_busy_timeout=5000")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func pragma(t *testing.T, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, name string) string {
	t.Helper()
	var v string
	require.NoError(t, db.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&v))
	return v
}

// leased creates a session and acquires it.
func leased(t testing.TB, st *sqlite.Store, id, tenant string) session.Lease {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, session.Info{ID: id, Tenant: tenant}))
	l, err := st.Acquire(ctx, id, "test", time.Hour)
	require.NoError(t, err)
	return l
}

func TestSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	st := openT(t, path)
	db := sqlite.DBOf(st)
	// Settings of the file, seen from another program too.
	assert.Equal(t, "wal", pragma(t, rawDB(t, path), "journal_mode"))
	assert.Equal(t, fmt.Sprint(sqlite.SchemaVersion()), pragma(t, rawDB(t, path), "user_version"))
	// Settings of every connection of the store: hold several at once.
	ctx := t.Context()
	var conns []*sql.Conn
	for range 3 {
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	for _, c := range conns {
		assert.Equal(t, "2", pragma(t, c, "synchronous"), "synchronous=FULL")
		assert.Equal(t, "1", pragma(t, c, "foreign_keys"))
		assert.Equal(t, fmt.Sprint(sqlite.BusyTimeout.Milliseconds()), pragma(t, c, "busy_timeout"))
		require.NoError(t, c.Close())
	}
	// Opening an up-to-date file again changes nothing and works.
	require.NoError(t, st.Create(ctx, session.Info{ID: "s"}))
	again := openT(t, path)
	_, err := again.Stat(ctx, "s")
	require.NoError(t, err)
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	db := rawDB(t, path)
	ctx := t.Context()
	newer := sqlite.SchemaVersion() + 1
	_, err := db.ExecContext(ctx, `CREATE TABLE future (x); PRAGMA user_version = `+fmt.Sprint(newer))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	st, err := sqlite.Open(path)
	require.ErrorIs(t, err, session.ErrSchemaVersion)
	assert.Nil(t, st)
	assert.Contains(t, err.Error(), path)

	// Nothing changed: the version, the journal mode, the tables.
	db = rawDB(t, path)
	assert.Equal(t, fmt.Sprint(newer), pragma(t, db, "user_version"))
	assert.Equal(t, "delete", pragma(t, db, "journal_mode"))
	var tables []string
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"future"}, tables)
}

func TestNotADatabase(t *testing.T) {
	_, err := sqlite.Open("")
	require.ErrorIs(t, err, session.ErrInvalid)
	// A path that names a folder cannot be opened.
	_, err = sqlite.Open(t.TempDir())
	require.Error(t, err)
}

func TestCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	st := openT(t, path)
	ctx := t.Context()
	for _, id := range []string{"labels", "status", "gap", "base"} {
		l := leased(t, st, id, "")
		require.NoError(t, st.Append(ctx, l, session.Batch{Records: []session.Record{
			{Seq: 1, Data: []byte(`{"n":1}`)}, {Seq: 2, Data: []byte(`{"n":2}`)}, {Seq: 3, Data: []byte(`{"n":3}`)},
		}}))
	}
	db := rawDB(t, path)
	for _, q := range []string{
		`UPDATE sessions SET labels = '{"k":' WHERE id = 'labels'`,
		`UPDATE sessions SET status = 'sleeping' WHERE id = 'status'`,
		`DELETE FROM records WHERE seq = 2 AND sid = (SELECT sid FROM sessions WHERE id = 'gap')`,
		`UPDATE records SET base = 7 WHERE seq = 3 AND sid = (SELECT sid FROM sessions WHERE id = 'base')`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	for _, id := range []string{"labels", "status"} {
		_, err := st.Stat(ctx, id)
		require.ErrorIs(t, err, session.ErrCorrupt, id)
		assert.Contains(t, err.Error(), `"`+id+`"`, "the error names the session")
		_, err = st.List(ctx, session.Filter{})
		require.ErrorIs(t, err, session.ErrCorrupt, "List meets session %s", id)
	}
	records := func(id string) (seqs []int64, err error) {
		for r, err := range st.Records(ctx, id, 1) {
			if err != nil {
				return seqs, err
			}
			seqs = append(seqs, r.Seq)
		}
		return seqs, nil
	}
	seqs, err := records("gap")
	require.ErrorIs(t, err, session.ErrCorrupt)
	assert.Equal(t, []int64{1}, seqs, "the records before the gap are yielded")
	assert.Contains(t, err.Error(), `"gap"`)
	assert.Contains(t, err.Error(), "record 2")
	seqs, err = records("base")
	require.ErrorIs(t, err, session.ErrCorrupt)
	assert.Empty(t, seqs, "the page with the bad row is refused")
	assert.Contains(t, err.Error(), "record 3")
}

// TestTwoStoresWriting has writers on two Stores of one file, while a
// third program holds the file's write lock for a while: writers wait for
// the lock (busy_timeout) instead of failing with SQLITE_BUSY.
func TestTwoStoresWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	stores := []*sqlite.Store{openT(t, path), openT(t, path)}
	ctx := t.Context()
	const writers, batches = 6, 40
	leases := make([]session.Lease, writers)
	for i := range writers {
		leases[i] = leased(t, stores[0], fmt.Sprint("s", i), "t")
	}

	// Another program takes the write lock and keeps it 300 ms.
	db := rawDB(t, path)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)
	locked := time.Now()
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = conn.ExecContext(context.Background(), "COMMIT")
		conn.Close()
	}()

	var wg sync.WaitGroup
	errs := make(chan error, writers*2)
	for i := range writers {
		st := stores[i%2]
		wg.Go(func() {
			for b := range batches {
				rec := session.Record{Seq: int64(b + 1), Data: fmt.Appendf(nil, `{"writer":%d,"batch":%d}`, i, b)}
				if err := st.Append(ctx, leases[i], session.Batch{Records: []session.Record{rec}, Spend: session.Spend{InputTokens: 1}}); err != nil {
					errs <- err
					return
				}
			}
		})
		// Readers alongside.
		wg.Go(func() {
			for range batches {
				for _, err := range st.Records(ctx, fmt.Sprint("s", i), 1) {
					if err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Greater(t, time.Since(locked), 300*time.Millisecond, "the writers waited for the lock")
	for i := range writers {
		info, err := stores[1].Stat(ctx, fmt.Sprint("s", i))
		require.NoError(t, err)
		assert.EqualValues(t, batches, info.Head)
	}
	spent, err := stores[1].TenantSpend(ctx, "t")
	require.NoError(t, err)
	assert.EqualValues(t, writers*batches, spent.InputTokens)
}

// TestAcquireDoesNotWait: a held lease is a row, not a lock; Acquire
// returns ErrSessionBusy at once.
func TestAcquireDoesNotWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	a, b := openT(t, path), openT(t, path)
	leased(t, a, "s", "")
	start := time.Now()
	_, err := b.Acquire(t.Context(), "s", "other", time.Minute)
	require.ErrorIs(t, err, session.ErrSessionBusy)
	assert.Less(t, time.Since(start), time.Second)
	assert.Contains(t, err.Error(), `"test"`, "the error names the holder")
}

// TestRecordsLarge streams a session of about 50 MB: Records reads it in
// pages, holds about a page in memory, and holds no transaction while the
// caller works, so a checkpoint and other writers go on meanwhile.
func TestRecordsLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB")
	}
	path := filepath.Join(t.TempDir(), "big.db")
	st, other := openT(t, path), openT(t, path)
	ctx := t.Context()
	l := leased(t, st, "big", "")
	const size, n = 64 << 10, 800 // 50 MiB
	pad := make([]byte, size)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	for seq := int64(1); seq <= n; {
		var batch []session.Record
		for range 16 {
			batch = append(batch, session.Record{Seq: seq, Base: seq%100 == 0, Data: fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, seq, pad[:size-40])})
			seq++
		}
		require.NoError(t, st.Append(ctx, l, session.Batch{Records: batch}))
	}
	pad = nil
	lo := leased(t, other, "other", "")
	pagesBefore := sqlite.PagesOf(st)

	var peak uint64
	var ms runtime.MemStats
	var total int
	next := int64(1)
	for r, err := range st.Records(ctx, "big", 1) {
		require.NoError(t, err)
		require.Equal(t, next, r.Seq)
		require.Equal(t, r.Seq%100 == 0, r.Base)
		total += len(r.Data)
		if next%100 == 50 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			// Mid-stream, another Store appends and the WAL is
			// checkpointed in full: no read transaction holds them up.
			require.NoError(t, other.Append(ctx, lo, session.Batch{Records: []session.Record{{Seq: next/100*2 + 1, Data: []byte(`{}`)}, {Seq: next/100*2 + 2, Data: []byte(`{}`)}}}))
			var busy, logged, moved int
			require.NoError(t, sqlite.DBOf(other).QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved))
			assert.Zero(t, busy, "a checkpoint waited for the reader")
		}
		next++
	}
	assert.EqualValues(t, n+1, next)
	assert.Greater(t, total, 50<<20-n*64)
	pages := sqlite.PagesOf(st) - pagesBefore
	assert.GreaterOrEqual(t, pages, int64(total/(sqlite.PageBytes+size)), "read in pages of about %d bytes", sqlite.PageBytes)
	assert.Less(t, peak, uint64(24<<20), "the heap holds about a page, not the session")
	t.Logf("%d records, %d MiB, %d pages, heap at most %d MiB", n, total>>20, pages, peak>>20)
}

func TestClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := sqlite.Open(path)
	require.NoError(t, err)
	ctx := t.Context()
	l := leased(t, st, "s", "")
	require.NoError(t, st.Close())
	require.NoError(t, st.Close(), "a second Close")

	require.ErrorIs(t, st.Create(ctx, session.Info{ID: "t"}), sqlite.ErrClosed)
	_, err = st.Stat(ctx, "s")
	require.ErrorIs(t, err, sqlite.ErrClosed)
	_, err = st.List(ctx, session.Filter{})
	require.ErrorIs(t, err, sqlite.ErrClosed)
	_, err = st.Acquire(ctx, "s", "w", time.Minute)
	require.ErrorIs(t, err, sqlite.ErrClosed)
	require.ErrorIs(t, st.Append(ctx, l, session.Batch{}), sqlite.ErrClosed)
	require.ErrorIs(t, st.Release(ctx, l), sqlite.ErrClosed)
	_, err = st.TenantSpend(ctx, "")
	require.ErrorIs(t, err, sqlite.ErrClosed)
	for _, err := range st.Records(ctx, "s", 1) {
		require.ErrorIs(t, err, sqlite.ErrClosed)
	}
	require.ErrorIs(t, st.Delete(ctx, "s"), sqlite.ErrClosed)
}

// TestRecordsCanceled: a context canceled between pages ends the stream
// with its error.
func TestRecordsCanceled(t *testing.T) {
	st := openT(t, filepath.Join(t.TempDir(), "s.db"))
	l := leased(t, st, "s", "")
	var batch []session.Record
	for i := range 2*sqlite.PageRows + 1 {
		batch = append(batch, session.Record{Seq: int64(i + 1), Data: []byte(`{}`)})
	}
	require.NoError(t, st.Append(t.Context(), l, session.Batch{Records: batch}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n := 0
	var last error
	for _, err := range st.Records(ctx, "s", 1) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 10 {
			cancel()
		}
	}
	require.ErrorIs(t, last, context.Canceled)
	assert.Equal(t, sqlite.PageRows, n, "the page read before the cancel is yielded whole")
}

func TestInvalid(t *testing.T) {
	st := openT(t, filepath.Join(t.TempDir(), "s.db"))
	ctx := t.Context()
	l := leased(t, st, "s", "")
	err := st.Append(ctx, l, session.Batch{Status: "sleeping"})
	require.ErrorIs(t, err, session.ErrInvalid)
	_, err = st.Acquire(ctx, "s", "w", 0)
	require.ErrorIs(t, err, session.ErrInvalid)
	_, err = st.Renew(ctx, l, -time.Second)
	require.ErrorIs(t, err, session.ErrInvalid)
	_, err = st.List(ctx, session.Filter{Offset: -1})
	require.ErrorIs(t, err, session.ErrInvalid)
	// Records are kept byte for byte, an empty one included.
	require.NoError(t, st.Append(ctx, l, session.Batch{Records: []session.Record{{Seq: 1}, {Seq: 2, Data: []byte{0, 0xff, '\n'}}}}))
	var got [][]byte
	for r, err := range st.Records(ctx, "s", 0) {
		require.NoError(t, err)
		got = append(got, r.Data)
	}
	assert.Equal(t, [][]byte{{}, {0, 0xff, '\n'}}, got)
}

// TestOpenTogether: stores opened at once on a new file (as processes
// starting together do) create the schema once, and all work.
func TestOpenTogether(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	const n = 6
	stores := make([]*sqlite.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = sqlite.Open(path) })
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		t.Cleanup(func() { stores[i].Close() })
	}
	ctx := t.Context()
	for i, st := range stores {
		require.NoError(t, st.Create(ctx, session.Info{ID: fmt.Sprint("s", i)}))
	}
	list, err := stores[0].List(ctx, session.Filter{})
	require.NoError(t, err)
	assert.Len(t, list, n)
}
