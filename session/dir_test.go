package session_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sessiontest"
)

// openDir opens a Dir as a sessiontest.OpenDSN: the DSN is the folder.
func openDir(dsn string) (session.Store, error) { return session.OpenDir(dsn) }

// dirOpener returns an Opener of Dirs on the folder path.
func dirOpener(path string) sessiontest.Opener {
	return func(t *testing.T) session.Store {
		d, err := session.OpenDir(path)
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, d.Close()) })
		return d
	}
}

func TestDirConformance(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T) sessiontest.Opener {
		return dirOpener(filepath.Join(t.TempDir(), "sessions"))
	})
}

func TestDirSessions(t *testing.T) {
	sessiontest.TestSessions(t, func(t *testing.T) sessiontest.Opener {
		return dirOpener(filepath.Join(t.TempDir(), "sessions"))
	})
}

func TestDirProcesses(t *testing.T) {
	sessiontest.TestProcesses(t, func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "sessions")
	}, openDir)
}

func BenchmarkDirStore(b *testing.B) {
	sessiontest.Benchmark(b, func(b *testing.B) func() session.Store {
		path := filepath.Join(b.TempDir(), "sessions")
		return func() session.Store {
			d, err := session.OpenDir(path)
			require.NoError(b, err)
			b.Cleanup(func() { d.Close() })
			return d
		}
	})
}

const ttl = time.Minute

// newDir opens a Dir on a fresh folder, and returns it with the folder.
func newDir(t testing.TB) (*session.Dir, string) {
	path := filepath.Join(t.TempDir(), "sessions")
	d, err := session.OpenDir(path)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d, path
}

// rec makes record seq with data that names it.
func rec(seq int64, base bool) session.Record {
	return session.Record{Seq: seq, Base: base, Data: fmt.Appendf(nil, `{"n":%d}`, seq)}
}

// appendN creates session id and appends n one-record batches to it,
// spending one input token each, and returns its lease, released.
func appendN(t *testing.T, st session.Store, id string, n int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, session.Info{ID: id, Tenant: "t"}))
	l, err := st.Acquire(ctx, id, "w", ttl)
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, st.Append(ctx, l, session.Batch{Records: []session.Record{rec(int64(i+1), i == 0)},
			Spend: session.Spend{InputTokens: 1}, Status: session.StatusRunning}))
	}
	require.NoError(t, st.Release(ctx, l))
}

func seqs(t *testing.T, st session.Store, id string, from int64) ([]int64, error) {
	t.Helper()
	var out []int64
	for r, err := range st.Records(context.Background(), id, from) {
		if err != nil {
			return out, err
		}
		assert.JSONEq(t, fmt.Sprintf(`{"n":%d}`, r.Seq), string(r.Data))
		out = append(out, r.Seq)
	}
	return out, nil
}

func TestDirTornLastLine(t *testing.T) {
	d, path := newDir(t)
	ctx := context.Background()
	appendN(t, d, "s", 3)
	file := filepath.Join(path, "s.jsonl")
	whole, err := os.ReadFile(file)
	require.NoError(t, err)
	// A crash mid-write: half of a fourth batch, no newline.
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":4,"n":1,"time":"2026-01-01T00:00:00Z","records":[{"seq":4,"data":{"n":`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	got, err := seqs(t, d, "s", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, got, "the torn line is not read")
	info, err := d.Stat(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, int64(3), info.Head)

	// The next writer cuts it off, and appends after the whole lines.
	l, err := d.Acquire(ctx, "s", "w", ttl)
	require.NoError(t, err)
	cut, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(whole), string(cut), "Acquire cuts the torn line off")
	require.NoError(t, d.Append(ctx, l, session.Batch{Records: []session.Record{rec(4, false)}}))
	got, err = seqs(t, d, "s", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3, 4}, got)

	// A last line whose end was written and not its middle counts as torn.
	require.NoError(t, d.Release(ctx, l))
	f, err = os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"seq\":5,\"n\":1,\x00\x00\x00\x00]}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err = seqs(t, d, "s", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3, 4}, got)
	l, err = d.Acquire(ctx, "s", "w", ttl)
	require.NoError(t, err)
	require.NoError(t, d.Append(ctx, l, session.Batch{Records: []session.Record{rec(5, false)}}))
	got, err = seqs(t, d, "s", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3, 4, 5}, got)
}

func TestDirMetadataLags(t *testing.T) {
	d, path := newDir(t)
	ctx := context.Background()
	require.NoError(t, d.Create(ctx, session.Info{ID: "s", User: "ana", Tenant: "t", Title: "x"}))
	meta := filepath.Join(path, "s.json")
	fresh, err := os.ReadFile(meta)
	require.NoError(t, err)
	l, err := d.Acquire(ctx, "s", "w", ttl)
	require.NoError(t, err)
	leased, err := os.ReadFile(meta)
	require.NoError(t, err)
	require.NoError(t, d.Append(ctx, l, session.Batch{Records: []session.Record{rec(1, true), rec(2, false)},
		Spend: session.Spend{InputTokens: 5, Cost: 0.5}, Status: session.StatusRunning}))
	require.NoError(t, d.Append(ctx, l, session.Batch{Records: []session.Record{rec(3, true)},
		Spend: session.Spend{OutputTokens: 2}, Status: session.StatusPaused}))
	want, err := d.Stat(ctx, "s")
	require.NoError(t, err)

	check := func(name string) {
		t.Helper()
		other, err := session.OpenDir(path)
		require.NoError(t, err)
		defer other.Close()
		got, err := other.Stat(ctx, "s")
		require.NoError(t, err, name)
		assert.Equal(t, want.Head, got.Head, name)
		assert.Equal(t, want.Base, got.Base, name)
		assert.Equal(t, want.Status, got.Status, name)
		assert.Equal(t, want.Spent, got.Spent, name)
		assert.True(t, want.Updated.Equal(got.Updated), "%s: Updated %v, want %v", name, got.Updated, want.Updated)
		assert.Equal(t, "ana", got.User, name)
		list, err := other.List(ctx, session.Filter{Status: session.StatusPaused})
		require.NoError(t, err)
		assert.Len(t, list, 1, name)
		spent, err := other.TenantSpend(ctx, "t")
		require.NoError(t, err)
		assert.Equal(t, want.Spent, spent, name)
		r, err := seqs(t, other, "s", 3)
		require.NoError(t, err)
		var wantSeqs []int64
		for s := int64(3); s <= want.Head; s++ {
			wantSeqs = append(wantSeqs, s)
		}
		assert.Equal(t, wantSeqs, r, name)
	}
	// The metadata of before the appends (a crash between the two writes).
	require.NoError(t, os.WriteFile(meta, leased, 0o600))
	check("metadata behind by two batches")
	// The lease kept in the lagging metadata still holds.
	require.NoError(t, d.Append(ctx, l, session.Batch{Records: []session.Record{rec(4, false)}}))
	want, err = d.Stat(ctx, "s")
	require.NoError(t, err)
	check("after an append on the rebuilt metadata")
	// Metadata lost to a power cut: empty, or of before Acquire.
	require.NoError(t, os.WriteFile(meta, nil, 0o600))
	check("empty metadata")
	require.NoError(t, os.WriteFile(meta, fresh, 0o600))
	check("metadata of a new session")
	// The rebuilt session can be leased and written again.
	l2, err := d.Acquire(ctx, "s", "next", ttl)
	if errors.Is(err, session.ErrSessionBusy) { // the fresh metadata has no lease: it was taken again
		t.Fatal("the lease survived metadata with none")
	}
	require.NoError(t, err)
	require.NoError(t, d.Append(ctx, l2, session.Batch{Records: []session.Record{rec(5, false)}}))
	got, err := seqs(t, d, "s", 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3, 4, 5}, got)
}

func TestDirCorruptLine(t *testing.T) {
	d, path := newDir(t)
	ctx := context.Background()
	appendN(t, d, "s", 3)
	file := filepath.Join(path, "s.jsonl")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.Len(t, lines, 5) // header, three batches, ""
	lines[2] = strings.Replace(lines[2], `"records":[`, `"records":{`, 1)
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "")), 0o600))

	got, err := seqs(t, d, "s", 1)
	assert.Equal(t, []int64{1}, got, "the records before the corrupt line")
	require.ErrorIs(t, err, session.ErrCorrupt)
	assert.Contains(t, err.Error(), `"s"`)
	assert.Contains(t, err.Error(), "line 3")
	// A writer does not append after a corrupt line when the metadata
	// has not seen it.
	meta := filepath.Join(path, "s.json")
	saved, err := os.ReadFile(meta)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(meta, nil, 0o600))
	_, err = d.Acquire(ctx, "s", "w", ttl)
	require.ErrorIs(t, err, session.ErrCorrupt)
	_, err = d.Stat(ctx, "s")
	require.ErrorIs(t, err, session.ErrCorrupt)
	// With its metadata back, the session is listed as the metadata
	// says, along with the others, and can be deleted.
	require.NoError(t, os.WriteFile(meta, saved, 0o600))
	appendN(t, d, "ok", 1)
	list, err := d.List(ctx, session.Filter{})
	require.NoError(t, err)
	require.Len(t, list, 2)
	spent, err := d.TenantSpend(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, int64(4), spent.InputTokens)
	require.NoError(t, d.Delete(ctx, "s"))
	_, err = d.Stat(ctx, "s")
	require.ErrorIs(t, err, session.ErrNotFound)
}

func TestDirManyHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions")
	var dirs [2]*session.Dir
	for i := range dirs {
		d, err := session.OpenDir(path)
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		dirs[i] = d
	}
	ctx := context.Background()
	const sessions, writers, batches = 4, 16, 10
	for i := range sessions {
		require.NoError(t, dirs[0].Create(ctx, session.Info{ID: fmt.Sprint("s", i), Tenant: "t"}))
	}
	// Writers race for the sessions' leases through both Dirs; each
	// winner appends batches that follow the head it sees.
	var wg sync.WaitGroup
	var mu sync.Mutex
	appended := map[string]int64{}
	for w := range writers {
		wg.Go(func() {
			d := dirs[w%2]
			id := fmt.Sprint("s", w%sessions)
			for range batches {
				l, err := d.Acquire(ctx, id, fmt.Sprint("w", w), ttl)
				if errors.Is(err, session.ErrSessionBusy) {
					runtime.Gosched()
					continue
				}
				if !assert.NoError(t, err) {
					return
				}
				info, err := d.Stat(ctx, id)
				assert.NoError(t, err)
				err = d.Append(ctx, l, session.Batch{Records: []session.Record{rec(info.Head+1, false), rec(info.Head+2, false)},
					Spend: session.Spend{InputTokens: 1}})
				assert.NoError(t, err)
				if err == nil {
					mu.Lock()
					appended[id] += 2
					mu.Unlock()
				}
				_, err = d.List(ctx, session.Filter{Tenant: "t"})
				assert.NoError(t, err)
				assert.NoError(t, d.Release(ctx, l))
			}
		})
	}
	wg.Wait()
	var total int64
	for i := range sessions {
		id := fmt.Sprint("s", i)
		got, err := seqs(t, dirs[1], id, 1)
		require.NoError(t, err)
		require.Len(t, got, int(appended[id]))
		for j, s := range got {
			require.Equal(t, int64(j+1), s)
		}
		total += appended[id]
	}
	assert.Positive(t, total, "some writer appended")
	spent, err := dirs[1].TenantSpend(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, total/2, spent.InputTokens)
}

func TestDirTokensAcrossDelete(t *testing.T) {
	d, path := newDir(t)
	ctx := context.Background()
	var last int64
	for round := range 3 {
		require.NoError(t, d.Create(ctx, session.Info{ID: "s", Tenant: "t"}))
		l, err := d.Acquire(ctx, "s", "w", ttl)
		require.NoError(t, err)
		assert.Greater(t, l.Token, last, "round %d", round)
		last = l.Token
		require.NoError(t, d.Append(ctx, l, session.Batch{Records: []session.Record{rec(1, true)}, Spend: session.Spend{InputTokens: 10}}))
		require.NoError(t, d.Release(ctx, l))
		require.NoError(t, d.Delete(ctx, "s"))
		// Another Dir on the folder, as after a restart, goes on counting.
		require.NoError(t, d.Close())
		d, err = session.OpenDir(path)
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
	}
	spent, err := d.TenantSpend(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, int64(30), spent.InputTokens, "deleted sessions' spend is kept")
}

func TestDirInterruptedDelete(t *testing.T) {
	d, path := newDir(t)
	ctx := context.Background()
	appendN(t, d, "s", 2)
	files := map[string][]byte{}
	for _, name := range []string{"s.json", "s.jsonl"} {
		b, err := os.ReadFile(filepath.Join(path, name))
		require.NoError(t, err)
		files[name] = b
	}
	require.NoError(t, d.Delete(ctx, "s"))
	// A crash after the spend was kept and before the files went.
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(path, name), b, 0o600))
	}
	spent, err := d.TenantSpend(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, int64(2), spent.InputTokens, "the deleted session counts once")
	_, err = d.Stat(ctx, "s")
	require.ErrorIs(t, err, session.ErrNotFound)
	list, err := d.List(ctx, session.Filter{})
	require.NoError(t, err)
	assert.Empty(t, list)
	other, err := session.OpenDir(path)
	require.NoError(t, err)
	require.NoError(t, other.Close())
	for name := range files {
		_, err := os.Stat(filepath.Join(path, name))
		assert.ErrorIs(t, err, os.ErrNotExist, "OpenDir finishes the Delete")
	}
}

func TestDirPermissions(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no Unix permissions")
	}
	d, path := newDir(t)
	appendN(t, d, "s", 1)
	require.NoError(t, d.Delete(context.Background(), "s"))
	appendN(t, d, "s", 1)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the folder")
	ents, err := os.ReadDir(path)
	require.NoError(t, err)
	require.NotEmpty(t, ents)
	for _, e := range ents {
		fi, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), e.Name())
	}
}

func TestDirData(t *testing.T) {
	d, path := newDir(t)
	ctx := context.Background()
	require.NoError(t, d.Create(ctx, session.Info{ID: "s"}))
	l, err := d.Acquire(ctx, "s", "w", ttl)
	require.NoError(t, err)
	// Data comes back byte for byte, line breaks and odd spacing too.
	data := []string{`{"a":1}`, "{\n  \"a\": 1\n}", ` [1, 2] `, `"x<&>\u00e9"`, `null`, "\"\xff\"",
		`"a\\"`, `{"a":"\\\"}"}`, `[{"x":[1,2,{}]},"]",[]]`, `123`, `true`, `-1.5e3`, `{"k":"}","l":"\"{["}`, `{}`, `""`}
	var batch []session.Record
	for i, s := range data {
		batch = append(batch, session.Record{Seq: int64(i + 1), Data: []byte(s)})
	}
	require.NoError(t, d.Append(ctx, l, session.Batch{Records: batch}))
	i := 0
	for r, err := range d.Records(ctx, "s", 1) {
		require.NoError(t, err)
		assert.Equal(t, data[i], string(r.Data))
		i++
	}
	assert.Equal(t, len(data), i)
	// The file stays JSON Lines, with Data raw where it can be.
	b, err := os.ReadFile(filepath.Join(path, "s.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(b), "\n"))
	assert.Contains(t, string(b), `"data":{"a":1}`)
	// Data that is not JSON is refused, and nothing is written.
	for _, bad := range []string{"", "{", "text"} {
		err := d.Append(ctx, l, session.Batch{Records: []session.Record{{Seq: 7, Data: []byte(bad)}}})
		require.ErrorIs(t, err, session.ErrInvalid, "%q", bad)
	}
	info, err := d.Stat(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), info.Head)
}

func TestDirIDsAsFileNames(t *testing.T) {
	d, path := newDir(t)
	ctx := context.Background()
	// IDs that differ in case only, or that a file system would trip on.
	ids := []string{"abc", "ABC", "aBc", "a:b", "a%-b", strings.Repeat("X", session.MaxIDLength), strings.Repeat("X", session.MaxIDLength-1) + "y", "x.json", "x.jsonl", "nul", "NUL", "com1.x", "console"}
	for i, id := range ids {
		if strings.Contains(id, "%") {
			require.ErrorIs(t, d.Create(ctx, session.Info{ID: id}), session.ErrInvalid)
			continue
		}
		require.NoError(t, d.Create(ctx, session.Info{ID: id, Title: fmt.Sprint(i)}), id)
	}
	for i, id := range ids {
		if strings.Contains(id, "%") {
			continue
		}
		info, err := d.Stat(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, fmt.Sprint(i), info.Title, id)
	}
	list, err := d.List(ctx, session.Filter{})
	require.NoError(t, err)
	assert.Len(t, list, len(ids)-1)
	for _, name := range []string{"abc", "%a%b%c", "a%bc", "a%-b", "%_nul", "%n%u%l", "%_com1.x", "console", "x.json", "x.jsonl"} {
		for _, ext := range []string{".json", ".jsonl"} {
			_, err := os.Stat(filepath.Join(path, name+ext))
			assert.NoError(t, err, "%s%s", name, ext)
		}
	}
}

func TestDirClosed(t *testing.T) {
	d, _ := newDir(t)
	ctx := context.Background()
	require.NoError(t, d.Create(ctx, session.Info{ID: "s"}))
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close is idempotent")
	assert.Error(t, d.Create(ctx, session.Info{ID: "t"}))
	_, err := d.Stat(ctx, "s")
	assert.Error(t, err)
	for _, err := range d.Records(ctx, "s", 1) {
		assert.Error(t, err)
	}
}

func TestDirLineOfAnotherLayout(t *testing.T) {
	d, path := newDir(t)
	ctx := context.Background()
	appendN(t, d, "s", 1)
	// A line with its fields in another order, as a tool might write it:
	// read through encoding/json, its records still checked by the CRC.
	recs := `[{"data":{"n":2},"seq":2},{"seq":3,"b64":"eyJuIjozfQ=="}]`
	line := fmt.Sprintf(`{"n":2,"seq":2,"time":"2030-01-01T00:00:00Z","crc":%d,"status":"ended","records":%s}`+"\n",
		crc32.Checksum([]byte(recs), crc32.MakeTable(crc32.Castagnoli)), recs)
	f, err := os.OpenFile(filepath.Join(path, "s.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(line)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err := seqs(t, d, "s", 2)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, got)
	info, err := d.Stat(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, int64(3), info.Head)
	assert.Equal(t, session.StatusEnded, info.Status)
	assert.Equal(t, 2030, info.Updated.Year())

	// The same line with a record changed fails its CRC.
	bad := strings.Replace(line, `{"n":2}`, `{"n":9}`, 1)
	bad = strings.Replace(bad, `"seq":2,`, `"seq":4,`, 1)
	bad = strings.Replace(bad, `"seq":2}`, `"seq":4}`, 1)
	bad = strings.Replace(bad, `"seq":3,`, `"seq":5,`, 1)
	f, err = os.OpenFile(filepath.Join(path, "s.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(bad + line)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = seqs(t, d, "s", 1)
	require.ErrorIs(t, err, session.ErrCorrupt)
	assert.Contains(t, err.Error(), "line 4")
}

// dirChildEnv names the folder a child process of TestDirAcrossProcesses
// works on.
const dirChildEnv = "TOOLLOOP_SESSION_DIR_CHILD"

// TestDirChild is the work of a child process of TestDirAcrossProcesses:
// it appends 20 records to session s, one lease at a time, as the leases
// come.
func TestDirChild(t *testing.T) {
	path := os.Getenv(dirChildEnv)
	if path == "" {
		t.Skip("the child process of TestDirAcrossProcesses")
	}
	d, err := session.OpenDir(path)
	require.NoError(t, err)
	defer d.Close()
	ctx := context.Background()
	for n := 0; n < 20; {
		l, err := d.Acquire(ctx, "s", fmt.Sprint("pid-", os.Getpid()), ttl)
		if errors.Is(err, session.ErrSessionBusy) {
			time.Sleep(time.Millisecond)
			continue
		}
		require.NoError(t, err)
		info, err := d.Stat(ctx, "s")
		require.NoError(t, err)
		require.NoError(t, d.Append(ctx, l, session.Batch{Records: []session.Record{rec(info.Head+1, false)}, Spend: session.Spend{InputTokens: 1}}))
		require.NoError(t, d.Release(ctx, l))
		n++
	}
}

func TestDirAcrossProcesses(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
	default:
		t.Skip("no flock: one process per folder")
	}
	d, path := newDir(t)
	ctx := context.Background()
	require.NoError(t, d.Create(ctx, session.Info{ID: "s", Tenant: "t"}))
	const children = 4
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for range children {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDirChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), dirChildEnv+"="+path)
		out := new(strings.Builder)
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "child %d:\n%s", i, outs[i])
	}
	got, err := seqs(t, d, "s", 1)
	require.NoError(t, err)
	require.Len(t, got, children*20)
	for i, s := range got {
		require.Equal(t, int64(i+1), s)
	}
	spent, err := d.TenantSpend(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, int64(children*20), spent.InputTokens)
}
