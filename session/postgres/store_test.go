package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/postgres"
	"github.com/toolloop/toolloop/session/postgres/internal/pgtest"
)

func ctxOf(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// queryInt runs a query of one integer on dsn.
func queryInt(t *testing.T, dsn, sql string) int64 {
	t.Helper()
	pool, err := pgxpool.New(ctxOf(t), dsn)
	require.NoError(t, err)
	defer pool.Close()
	var n int64
	require.NoError(t, pool.QueryRow(ctxOf(t), sql).Scan(&n))
	return n
}

func TestMigrations(t *testing.T) {
	require.GreaterOrEqual(t, postgres.SchemaVersion(), 1)
}

// Four processes starting at once on a new database: one migrates, the
// others wait for it under the advisory lock and find nothing to do. A
// second migration would fail (CREATE SEQUENCE and CREATE TABLE without
// IF NOT EXISTS), and the version table would have a row twice.
func TestMigrationLock(t *testing.T) {
	dsn := newDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			st, err := postgres.Open(ctxOf(t), dsn)
			if err == nil {
				st.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "Open %d", i)
	}
	n := queryInt(t, dsn, `SELECT count(*) FROM toolloop_schema_version`)
	assert.Equal(t, int64(postgres.SchemaVersion()), n, "one row per migration, each applied once")
	assert.Equal(t, int64(postgres.SchemaVersion()), queryInt(t, dsn, `SELECT max(version) FROM toolloop_schema_version`))
}

// A schema newer than this build knows is refused, and left as it is.
func TestSchemaVersionNewer(t *testing.T) {
	t.Run("migrated", func(t *testing.T) {
		dsn := newDatabase(t)
		open(t, dsn)
		newer := postgres.SchemaVersion() + 1
		require.NoError(t, pgtest.ExecAdmin(ctxOf(t), dsn, `INSERT INTO toolloop_schema_version (version, name) VALUES ($1, 'from the future')`, newer))
		_, err := postgres.Open(ctxOf(t), dsn)
		require.ErrorIs(t, err, session.ErrSchemaVersion)
		assert.Equal(t, int64(newer), queryInt(t, dsn, `SELECT max(version) FROM toolloop_schema_version`))
	})
	t.Run("nothing else", func(t *testing.T) {
		// Only the version table, of a future version: Open creates nothing.
		dsn := newDatabase(t)
		require.NoError(t, pgtest.ExecAdmin(ctxOf(t), dsn, `CREATE TABLE toolloop_schema_version (
	version integer PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now());
INSERT INTO toolloop_schema_version (version, name) VALUES (99, 'future')`))
		_, err := postgres.Open(ctxOf(t), dsn)
		require.ErrorIs(t, err, session.ErrSchemaVersion)
		assert.Equal(t, int64(0), queryInt(t, dsn, `SELECT count(*) FROM pg_class WHERE relname LIKE 'toolloop_%' AND relname <> 'toolloop_schema_version' AND relname NOT LIKE 'toolloop_schema_version%'`),
			"a refused Open created nothing")
	})
}

func TestCorrupt(t *testing.T) {
	for _, tc := range []struct{ name, sql string }{
		{"labels", `UPDATE toolloop_sessions SET labels = '{"k": 1}' WHERE id = 'bad'`},
		{"labels not an object", `UPDATE toolloop_sessions SET labels = '[1, 2]' WHERE id = 'bad'`},
		{"status", `UPDATE toolloop_sessions SET status = 'exploded' WHERE id = 'bad'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := newDatabase(t)
			st, ctx := open(t, dsn), ctxOf(t)
			require.NoError(t, st.Create(ctx, session.Info{ID: "bad", Labels: map[string]string{"k": "v"}}))
			require.NoError(t, st.Create(ctx, session.Info{ID: "good"}))
			require.NoError(t, pgtest.ExecAdmin(ctx, dsn, tc.sql))
			_, err := st.Stat(ctx, "bad")
			require.ErrorIs(t, err, session.ErrCorrupt)
			assert.Contains(t, err.Error(), `"bad"`, "the error names the session")
			_, err = st.List(ctx, session.Filter{})
			require.ErrorIs(t, err, session.ErrCorrupt)
			_, err = st.Stat(ctx, "good")
			require.NoError(t, err, "the other sessions are still read")
		})
	}
}

// roundTrips counts the network round trips on the connections of a
// pool: each time the client writes after it read (or first).
type roundTrips struct{ n atomic.Int64 }

type countingConn struct {
	net.Conn
	rt      *roundTrips
	reading atomic.Bool
}

func (c *countingConn) Write(p []byte) (int, error) {
	if c.reading.CompareAndSwap(true, false) {
		c.rt.n.Add(1)
	}
	return c.Conn.Write(p)
}

// Read marks a read once it has returned bytes: a read that blocks (the
// driver's background reader, started when a write is slow on a loaded
// machine) is not the end of a round trip until the answer comes.
func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.reading.Store(true)
	}
	return n, err
}

// countedStore opens a Store through New on a pool of one connection
// whose round trips rt counts, and that never pings.
func countedStore(t *testing.T, dsn string) (*postgres.Store, *roundTrips) {
	cfg, err := pgxpool.ParseConfig(dsn)
	require.NoError(t, err)
	rt := &roundTrips{}
	cfg.MaxConns = 1
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	cfg.ConnConfig.AfterNetConnect = func(_ context.Context, _ *pgconn.Config, conn net.Conn) (net.Conn, error) {
		return &countingConn{Conn: conn, rt: rt}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctxOf(t), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st, err := postgres.New(ctxOf(t), pool)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st, rt
}

func TestAppendOneRoundTrip(t *testing.T) {
	st, rt := countedStore(t, newDatabase(t))
	ctx := ctxOf(t)
	require.NoError(t, st.Create(ctx, session.Info{ID: "s", Tenant: "t"}))
	l, err := st.Acquire(ctx, "s", "w", time.Minute)
	require.NoError(t, err)
	// The first Append on the connection prepares the statement.
	turn := turnRecords(1)
	require.NoError(t, st.Append(ctx, l, session.Batch{Records: turn, Spend: session.Spend{InputTokens: 1}, Status: session.StatusRunning}))
	measure := func(what string, b session.Batch, want error) {
		t.Helper()
		before := rt.n.Load()
		err := st.Append(ctx, l, b)
		if want == nil {
			require.NoError(t, err, what)
		} else {
			require.ErrorIs(t, err, want, what)
		}
		assert.Equal(t, int64(1), rt.n.Load()-before, "%s: network round trips", what)
	}
	measure("a turn", session.Batch{Records: turnRecords(int64(len(turn)) + 1), Spend: session.Spend{InputTokens: 5, Cost: 0.1}}, nil)
	measure("a conflict", session.Batch{Records: turnRecords(1)}, session.ErrConflict)
	measure("no records", session.Batch{Status: session.StatusEnded, Spend: session.Spend{OutputTokens: 1}}, nil)
	require.NoError(t, st.Release(ctx, l))
	measure("a released lease", session.Batch{Records: turnRecords(13)}, session.ErrLeaseLost)
	before := rt.n.Load()
	require.ErrorIs(t, st.Append(ctx, l, session.Batch{Records: []session.Record{{Seq: 13}, {Seq: 15}}}), session.ErrInvalid)
	assert.Equal(t, int64(0), rt.n.Load()-before, "Seqs that do not follow each other are refused before any round trip")
	info, err := st.Stat(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, int64(12), info.Head)
	assert.Equal(t, session.StatusEnded, info.Status)
}

// The database's clock decides when a lease expires, not the client's:
// a lease whose Expires the client still sees ahead is lost once the
// database says its time has passed (here: its row says it expired).
func TestLeaseExpiryDatabaseClock(t *testing.T) {
	dsn := newDatabase(t)
	st, ctx := open(t, dsn), ctxOf(t)
	require.NoError(t, st.Create(ctx, session.Info{ID: "s"}))
	l, err := st.Acquire(ctx, "s", "one", time.Hour)
	require.NoError(t, err)
	var dbNow time.Time
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&dbNow))
	assert.WithinDuration(t, dbNow.Add(time.Hour), l.Expires, 5*time.Second, "Expires is the database's clock plus the ttl")

	// The database's time passes the lease's expiry.
	require.NoError(t, pgtest.ExecAdmin(ctx, dsn, `UPDATE toolloop_sessions SET lease_expires = clock_timestamp() - interval '1 second' WHERE id = 's'`))
	require.True(t, l.Expires.After(time.Now()), "the client's clock still sees the lease ahead")
	require.ErrorIs(t, st.Append(ctx, l, session.Batch{Records: turnRecords(1)}), session.ErrLeaseLost)
	_, err = st.Renew(ctx, l, time.Hour)
	require.ErrorIs(t, err, session.ErrLeaseLost)
	l2, err := st.Acquire(ctx, "s", "two", time.Hour)
	require.NoError(t, err, "an expired lease is free to take")
	require.Greater(t, l2.Token, l.Token)

	// A short ttl lapses by the database's clock.
	require.NoError(t, st.Release(ctx, l2))
	l3, err := st.Acquire(ctx, "s", "three", 50*time.Millisecond)
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	l3.Expires = time.Now().Add(time.Hour) // what the client believes does not matter
	require.ErrorIs(t, st.Append(ctx, l3, session.Batch{Records: turnRecords(1)}), session.ErrLeaseLost)
}

// Acquire of a held session answers ErrSessionBusy at once, also while
// other writers append to it and race for it.
func TestAcquireBusyPromptly(t *testing.T) {
	dsn := newDatabase(t)
	a, b, ctx := open(t, dsn), open(t, dsn), ctxOf(t)
	require.NoError(t, a.Create(ctx, session.Info{ID: "s"}))
	l, err := a.Acquire(ctx, "s", "a", time.Minute)
	require.NoError(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for seq := int64(1); ; seq += 6 {
			select {
			case <-stop:
				return
			default:
			}
			if err := a.Append(ctx, l, session.Batch{Records: turnRecords(seq)}); err != nil {
				t.Errorf("Append: %v", err)
				return
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	var slowest time.Duration
	for range 50 {
		start := time.Now()
		_, err := b.Acquire(ctx, "s", "b", time.Minute)
		slowest = max(slowest, time.Since(start))
		require.ErrorIs(t, err, session.ErrSessionBusy)
	}
	assert.Less(t, slowest, time.Second, "the slowest ErrSessionBusy")
	t.Logf("the slowest of 50 busy Acquires took %v", slowest)
}

// Records pages by count and by size, holds no connection while the
// caller runs (the pool here has one), and passes cancellation through.
func TestRecordsPages(t *testing.T) {
	st, _ := countedStore(t, newDatabase(t))
	ctx := ctxOf(t)
	require.NoError(t, st.Create(ctx, session.Info{ID: "s"}))
	l, err := st.Acquire(ctx, "s", "w", time.Minute)
	require.NoError(t, err)
	var want []session.Record
	for i := range 2500 {
		want = append(want, session.Record{Seq: int64(i + 1), Base: i%100 == 0, Data: fmt.Appendf(nil, `{"n":%d}`, i+1)})
	}
	for i := range 12 { // 12 records of 1 MiB: three pages by size
		want = append(want, session.Record{Seq: int64(len(want) + 1), Data: fmt.Appendf(nil, `{"pad":"%0*d"}`, 1<<20, i)})
	}
	for i := 0; i < len(want); i += 500 {
		require.NoError(t, st.Append(ctx, l, session.Batch{Records: want[i:min(i+500, len(want))]}))
	}
	var got []session.Record
	for r, err := range st.Records(ctx, "s", 1) {
		require.NoError(t, err)
		if len(got)%700 == 0 {
			_, err := st.Stat(ctx, "s") // needs the pool's one connection
			require.NoError(t, err)
		}
		got = append(got, r)
	}
	require.Len(t, got, len(want))
	for i := range got {
		require.Equal(t, want[i].Seq, got[i].Seq)
		require.Equal(t, want[i].Base, got[i].Base)
		require.Equal(t, string(want[i].Data), string(got[i].Data))
	}
	n := 0
	for r, err := range st.Records(ctx, "s", 2499) {
		require.NoError(t, err)
		require.Equal(t, int64(2499+n), r.Seq)
		n++
	}
	require.Equal(t, 14, n)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for _, err := range st.Records(canceled, "s", 1) {
		require.ErrorIs(t, err, context.Canceled)
	}
	_, err = st.Stat(canceled, "s")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, st.Append(canceled, l, session.Batch{Records: turnRecords(int64(len(want) + 1))}), context.Canceled)
}

func TestCloseTwice(t *testing.T) {
	st, err := postgres.Open(ctxOf(t), newDatabase(t))
	require.NoError(t, err)
	st.Close()
	st.Close()
	_, err = st.Stat(ctxOf(t), "s")
	require.Error(t, err)
	assert.False(t, errors.Is(err, session.ErrNotFound))
	_, err = postgres.Open(ctxOf(t), "host=/nonexistent port=1 user=x connect_timeout=1")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "session/postgres: "), err.Error())
}

// turnRecords is one turn of an agent as a store sees it: a model
// response of about 1 KB and four tool completions of 2 to 8 KB, and the
// turn's end, from seq on.
func turnRecords(seq int64) []session.Record {
	sizes := []int{1 << 10, 2 << 10, 4 << 10, 6 << 10, 8 << 10, 200}
	out := make([]session.Record, len(sizes))
	for i, n := range sizes {
		data := fmt.Appendf(nil, `{"type":"event","seq":%d,"text":"`, seq+int64(i))
		for len(data) < n-2 {
			data = append(data, "the quick brown fox jumps over the lazy dog. "...)
		}
		out[i] = session.Record{Seq: seq + int64(i), Base: i == 0 && seq == 1, Data: append(data[:n-2], `"}`...)}
	}
	return out
}
