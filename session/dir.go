package session

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Dir is a [Store] in a folder of JSON Lines files: each session is a
// records file, <id>.jsonl, with one line per [Store.Append], and a small
// metadata file, <id>.json, with its [Info] and lease. Open it with
// [OpenDir].
//
// Use it on one machine: for tests, for a command-line agent, for a few
// sessions that a person may want to read with a text editor or jq. Its
// List and TenantSpend read every session's metadata file, so they cost
// as much as the sessions are many; for more sessions, or sessions shared
// by processes on several machines, use the sqlite or postgres modules.
//
// Records hold [Record.Data] as raw JSON where that gives it back byte
// for byte, so that the files read as JSON Lines; Append refuses Data
// that is not JSON, with an error wrapping [ErrInvalid].
//
// Durability: Append writes its batch as one line with one write and
// syncs the records file (fsync) before it returns, so an append that
// returned survives the process being killed and the machine losing
// power. Create, Acquire, Renew, Release and Delete sync what they write
// (a new file, then its folder) before they return. The metadata file
// is written after the records file, by writing a temporary file and
// renaming it over the old one; on Append it is not synced, because the
// records file is the source of truth: a crash can leave the metadata
// behind the records, and the next reader rebuilds Head, Base, Status,
// Spent and Updated from the lines the metadata has not seen.
//
// What a crash loses: killing the process loses nothing an Append
// returned for; a batch whose Append had not returned is either whole in
// the file or torn, and a torn last line never counts (the next writer
// cuts it off). A power loss can also lose the metadata file's last
// unsynced rewrite; it is then rebuilt from the records file, whose first
// line holds what Create was given, and the session's lease is lost with
// it, which is harmless: every process that held a lease died with the
// machine.
//
// Locking: every change (Create, Delete, the lease methods, Append) and
// TenantSpend run under an exclusive flock(2) on the folder's .lock
// file, so that several processes on one machine, and several Dirs in
// one process, can share a folder; Stat, List and Records read without
// it, seeing whole files (metadata is replaced by rename) and whole lines
// only. The lock is the folder's, not a session's: appends to different
// sessions wait for each other, an fsync each, which is one more reason
// to keep to a few writers at once. On platforms without flock (Windows, Plan 9, js, wasip1) the lock
// is a mutex shared by the Dirs of one process, and two processes must
// not open one folder at once. A network file system's flock may not be
// reliable: keep the folder on a local disk.
//
// Leases expire by this machine's clock. A lease token comes from a
// counter in the folder's .dir.json, which also keeps the spend of
// deleted sessions per tenant, so tokens never repeat in a folder, even
// for a session deleted and created again.
//
// File names: an ID that holds upper-case letters or ':' has them
// escaped in its files' names ('%' and the lower-case letter, "%-" for
// ':'), so that IDs differing in case stay apart on case-insensitive
// file systems and names are valid on Windows, where the names of
// devices (nul, com1, ...) get a "%_" in front; an ID whose name would
// be longer than 180 bytes is cut and given a hash. The files are readable by their owner only (0o600)
// and a folder OpenDir creates is 0o700: records hold tool arguments and
// outputs.
type Dir struct {
	path   string
	lock   *dirLock
	mu     sync.Mutex // taken with lock: one goroutine of this Dir holds lock at a time
	closed atomic.Bool
}

var _ Store = (*Dir)(nil)

// dirSchema is the version of the files this build writes; a file of a
// later version gives ErrSchemaVersion.
const dirSchema = 1

// The names of the folder's own files. Session files never start with a
// dot (CheckID refuses such IDs).
const (
	dirLockFile  = ".lock"
	dirStateFile = ".dir.json"
	dirTempMark  = ".tmp-"
)

var errDirClosed = errors.New("session: the Dir is closed")

// dirState is the folder's .dir.json.
type dirState struct {
	V int `json:"v"`
	// Last is the last number handed out, as a lease token or a
	// session's incarnation.
	Last int64 `json:"last"`
	// Deleted is what deleted sessions spent, per tenant.
	Deleted map[string]Spend `json:"deleted,omitempty"`
	// Pending is the last session deleted: its files are removed after
	// its spend is added to Deleted, and a crash in between leaves them
	// behind, to be removed by the next OpenDir or Create.
	Pending *dirPending `json:"pending,omitempty"`
}

type dirPending struct {
	ID          string `json:"id"`
	Incarnation int64  `json:"incarnation"`
}

// dirMeta is a session's metadata file.
type dirMeta struct {
	V int `json:"v"`
	// Incarnation tells this session from others with its ID, created
	// before it and deleted.
	Incarnation int64 `json:"incarnation"`
	Info        Info  `json:"info"`
	// Size is how many bytes of the records file Info covers, and Lines
	// how many lines they hold.
	Size  int64 `json:"size"`
	Lines int64 `json:"lines"`
	// BaseOffset and BaseLine locate the line holding the record
	// Info.Base, where loading starts.
	BaseOffset int64     `json:"base_offset,omitempty"`
	BaseLine   int64     `json:"base_line,omitempty"`
	Lease      *dirLease `json:"lease,omitempty"`
}

// OpenDir opens the session folder at path, creating it (0o700) if need
// be. It finishes a Delete that a crash interrupted and removes temporary
// files that a crash left. Close it when done.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("session: opening %s: %w", path, err)
	}
	lk, err := openDirLock(filepath.Join(path, dirLockFile))
	if err != nil {
		return nil, fmt.Errorf("session: opening %s: %w", path, err)
	}
	d := &Dir{path: path, lock: lk}
	err = d.locked(context.Background(), func() error {
		st, err := d.readState()
		if err != nil {
			return err
		}
		if err := d.finishPending(st, ""); err != nil {
			return err
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), dirTempMark) {
				_ = os.Remove(filepath.Join(path, e.Name()))
			}
		}
		return nil
	})
	if err != nil {
		lk.close()
		return nil, err
	}
	return d, nil
}

// Close releases the folder. It does not wait for Records iterations
// under way. Calling it again does nothing.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Swap(true) {
		return nil
	}
	return d.lock.close()
}

// check returns the error that stops a method before it starts.
func (d *Dir) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.closed.Load() {
		return errDirClosed
	}
	return nil
}

// locked runs fn with the folder locked.
func (d *Dir) locked(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return errDirClosed
	}
	if err := d.lock.lock(); err != nil {
		return fmt.Errorf("session: locking %s: %w", d.path, err)
	}
	defer d.lock.unlock()
	return fn()
}

// fileStem is the name of id's files without their extension: id with
// upper-case letters and ':' escaped, cut and hashed if long.
func fileStem(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'A' && c <= 'Z':
			b.WriteByte('%')
			b.WriteByte(c + 'a' - 'A')
		case c == ':':
			b.WriteString("%-")
		default:
			b.WriteByte(c)
		}
	}
	s := b.String()
	if name, _, _ := strings.Cut(s, "."); windowsDevices[name] {
		s = "%_" + s // NUL.json is no file on Windows
	}
	if len(s) > 180 {
		sum := sha256.Sum256([]byte(id))
		s = s[:100] + "~" + hex.EncodeToString(sum[:16])
	}
	return s
}

// windowsDevices are the names Windows keeps for devices, with any
// extension.
var windowsDevices = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

func (d *Dir) metaPath(stem string) string    { return filepath.Join(d.path, stem+".json") }
func (d *Dir) recordsPath(stem string) string { return filepath.Join(d.path, stem+".jsonl") }

// readState reads the folder's state; a folder without one has the zero
// state.
func (d *Dir) readState() (*dirState, error) {
	st := &dirState{V: dirSchema}
	b, err := os.ReadFile(filepath.Join(d.path, dirStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: reading %s: %w", dirStateFile, err)
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, filepath.Join(d.path, dirStateFile), err)
	}
	if st.V > dirSchema {
		return nil, fmt.Errorf("%w: %s is of version %d", ErrSchemaVersion, dirStateFile, st.V)
	}
	return st, nil
}

func (d *Dir) writeState(st *dirState) error {
	st.V = dirSchema
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return d.writeFile(dirStateFile, b, true)
}

// next returns a number never handed out before in the folder, and
// writes the state (synced) so.
func (d *Dir) next(st *dirState) (int64, error) {
	st.Last++
	return st.Last, d.writeState(st)
}

// writeFile replaces the folder's file name with b: a temporary file
// renamed over it, synced first (and the folder after) if sync is set.
func (d *Dir) writeFile(name string, b []byte, sync bool) error {
	f, err := os.CreateTemp(d.path, "."+name+dirTempMark+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(d.path, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("session: writing %s: %w", filepath.Join(d.path, name), err)
	}
	if sync {
		return d.syncDir()
	}
	return nil
}

// syncDir makes the folder's entries durable. It is best effort, as in
// package eventlog: some platforms and file systems cannot sync a folder.
func (d *Dir) syncDir() error {
	if f, err := os.Open(d.path); err == nil {
		_ = f.Sync()
		f.Close()
	}
	return nil
}

func (d *Dir) writeMeta(stem string, m *dirMeta, sync bool) error {
	m.V = dirSchema
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return d.writeFile(stem+".json", b, sync)
}

// finishPending removes the files of the session whose Delete a crash
// interrupted, if they are still there; id, if set, limits it to that
// session.
func (d *Dir) finishPending(st *dirState, id string) error {
	p := st.Pending
	if p == nil || id != "" && p.ID != id {
		return nil
	}
	stem := fileStem(p.ID)
	m, err := d.readMeta(stem, p.ID)
	if err != nil || m.Incarnation != p.Incarnation {
		return nil // gone, or another session now
	}
	return d.removeSession(stem)
}

func (d *Dir) removeSession(stem string) error {
	if err := os.Remove(d.metaPath(stem)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Remove(d.recordsPath(stem)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return d.syncDir()
}

// Create stores a new session (see [Store.Create]): its records file,
// whose first line holds info, then its metadata file, both synced.
func (d *Dir) Create(ctx context.Context, info Info) error {
	if err := CheckID(info.ID); err != nil {
		return err
	}
	return d.locked(ctx, func() error {
		st, err := d.readState()
		if err != nil {
			return err
		}
		if err := d.finishPending(st, info.ID); err != nil {
			return err
		}
		stem := fileStem(info.ID)
		if _, err := os.Lstat(d.metaPath(stem)); err == nil {
			return fmt.Errorf("%w: %q", ErrExists, info.ID)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		inc, err := d.next(st)
		if err != nil {
			return err
		}
		now := time.Now()
		m := &dirMeta{Incarnation: inc, Info: Info{
			ID: info.ID, User: info.User, Tenant: info.Tenant, Title: info.Title, Labels: maps.Clone(info.Labels),
			Parent: info.Parent, ForkedAt: info.ForkedAt, Created: now, Updated: now, Status: StatusNew,
		}}
		head, err := json.Marshal(dirHeader{V: dirSchema, Incarnation: inc, Info: m.Info})
		if err != nil {
			return err
		}
		head = append(head, '\n')
		if err := writeNew(d.recordsPath(stem), head); err != nil {
			return fmt.Errorf("session: creating %q: %w", info.ID, err)
		}
		m.Size, m.Lines = int64(len(head)), 1
		return d.writeMeta(stem, m, true)
	})
}

// writeNew creates (or truncates) the file at path with b, synced.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Stat returns a session's metadata (see [Store.Stat]), brought up to
// date with its records file if the metadata file lags behind it.
func (d *Dir) Stat(ctx context.Context, id string) (Info, error) {
	if err := d.check(ctx); err != nil {
		return Info{}, err
	}
	if err := CheckID(id); err != nil {
		return Info{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	m, err := d.loadInfo(fileStem(id), id)
	if errors.Is(err, ErrCorrupt) {
		// A Delete and a Create may have replaced the files while they
		// were read: read again, with the folder locked.
		err = d.locked(ctx, func() error {
			m, err = d.loadInfo(fileStem(id), id)
			return err
		})
	}
	if err != nil {
		return Info{}, err
	}
	if st, err := d.readState(); err == nil && st.Pending != nil && st.Pending.ID == id && st.Pending.Incarnation == m.Incarnation {
		return Info{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return m.Info, nil
}

// loadInfo reads a session's metadata and the lines of its records file
// the metadata does not cover yet, without changing either.
func (d *Dir) loadInfo(stem, id string) (*dirMeta, error) {
	m, err := d.readMeta(stem, id)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	f, ferr := os.Open(d.recordsPath(stem))
	if ferr != nil {
		if errors.Is(ferr, fs.ErrNotExist) {
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: session %q has no records file", ErrCorrupt, id)
		}
		return nil, ferr
	}
	defer f.Close()
	if err != nil { // the metadata does not decode: rebuild it
		if m, err = rebuildMeta(f, id); err != nil {
			return nil, err
		}
	}
	if _, err := scanTail(f, m); err != nil {
		return nil, err
	}
	return m, nil
}

// readMeta reads a session's metadata file: ErrNotFound if there is
// none, an error wrapping ErrCorrupt if it does not decode.
func (d *Dir) readMeta(stem, id string) (*dirMeta, error) {
	b, err := os.ReadFile(d.metaPath(stem))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	m := new(dirMeta)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w: the metadata of session %q: %v", ErrCorrupt, id, err)
	}
	if m.V > dirSchema {
		return nil, fmt.Errorf("%w: the metadata of session %q is of version %d", ErrSchemaVersion, id, m.V)
	}
	if id != "" && m.Info.ID != id {
		return nil, fmt.Errorf("%w: the metadata file of session %q names session %q", ErrCorrupt, id, m.Info.ID)
	}
	return m, nil
}

// loadForWrite reads a session's metadata for a change, with the folder
// locked: it brings the metadata up to date with the records file, cuts
// off a torn last line, and returns the records file open for writing.
func (d *Dir) loadForWrite(stem, id string) (*dirMeta, *os.File, error) {
	m, err := d.readMeta(stem, id)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return nil, nil, err
	}
	f, ferr := os.OpenFile(d.recordsPath(stem), os.O_RDWR, 0)
	if ferr != nil {
		if errors.Is(ferr, fs.ErrNotExist) {
			if err != nil {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("%w: session %q has no records file", ErrCorrupt, id)
		}
		return nil, nil, ferr
	}
	fail := func(err error) (*dirMeta, *os.File, error) {
		f.Close()
		return nil, nil, err
	}
	if err != nil {
		if m, err = rebuildMeta(f, id); err != nil {
			return fail(err)
		}
		m.Lease = nil // lost with the metadata, harmlessly (see Dir)
	}
	end, err := scanTail(f, m)
	if err != nil {
		return fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if fi.Size() > end { // a torn last line: it never counted
		if err := f.Truncate(end); err != nil {
			return fail(err)
		}
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	return m, f, nil
}

// List returns the sessions f selects (see [Store.List]). It reads every
// session's metadata file.
func (d *Dir) List(ctx context.Context, f Filter) ([]Info, error) {
	if err := d.check(ctx); err != nil {
		return nil, err
	}
	if f.Limit < 0 || f.Offset < 0 {
		return nil, fmt.Errorf("%w: List with limit %d and offset %d", ErrInvalid, f.Limit, f.Offset)
	}
	metas, err := d.all(ctx)
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, m := range metas {
		in := m.Info
		if f.User != "" && in.User != f.User || f.Tenant != "" && in.Tenant != f.Tenant || f.Status != "" && in.Status != f.Status ||
			!f.UpdatedSince.IsZero() && in.Updated.Before(f.UpdatedSince) {
			continue
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	out = out[min(f.Offset, len(out)):]
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// all reads every session's metadata, brought up to date with its
// records file, leaving out a session whose Delete a crash interrupted.
func (d *Dir) all(ctx context.Context) ([]*dirMeta, error) {
	st, err := d.readState()
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	var out []*dirMeta
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(stem, ".") || !e.Type().IsRegular() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := d.loadInfo(stem, "")
		if errors.Is(err, ErrCorrupt) {
			// The records do not read: the metadata says what it can.
			m, err = d.readMeta(stem, "")
		}
		if errors.Is(err, ErrNotFound) {
			continue // deleted since ReadDir
		}
		if err != nil {
			return nil, err
		}
		if p := st.Pending; p != nil && p.ID == m.Info.ID && p.Incarnation == m.Incarnation {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// Delete removes a session (see [Store.Delete]). Its spend is added to
// its tenant's in the folder's state, synced, before its files are
// removed.
func (d *Dir) Delete(ctx context.Context, id string) error {
	if err := CheckID(id); err != nil {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return d.locked(ctx, func() error {
		st, err := d.readState()
		if err != nil {
			return err
		}
		if err := d.finishPending(st, id); err != nil {
			return err
		}
		stem := fileStem(id)
		m, f, err := d.loadForWrite(stem, id)
		if errors.Is(err, ErrCorrupt) {
			// A session whose records do not read can still be deleted,
			// with the spend its metadata says, or none.
			if m, err = d.readMeta(stem, id); errors.Is(err, ErrCorrupt) {
				m, err = &dirMeta{Info: Info{ID: id}}, nil
			}
		} else if err == nil {
			f.Close()
		}
		if err != nil {
			return err
		}
		if m.Lease.held(time.Now()) {
			return fmt.Errorf("%w: %q is held by %q", ErrSessionBusy, id, m.Lease.Holder)
		}
		if st.Deleted == nil {
			st.Deleted = make(map[string]Spend)
		}
		st.Deleted[m.Info.Tenant] = st.Deleted[m.Info.Tenant].Add(m.Info.Spent)
		st.Pending = &dirPending{ID: id, Incarnation: m.Incarnation}
		if err := d.writeState(st); err != nil {
			return err
		}
		return d.removeSession(stem)
	})
}

// TenantSpend returns what the tenant's sessions have spent (see
// [Store.TenantSpend]), with the folder locked: it reads every session's
// metadata.
func (d *Dir) TenantSpend(ctx context.Context, tenant string) (Spend, error) {
	var s Spend
	err := d.locked(ctx, func() error {
		st, err := d.readState()
		if err != nil {
			return err
		}
		s = st.Deleted[tenant]
		metas, err := d.all(ctx)
		if err != nil {
			return err
		}
		for _, m := range metas {
			if m.Info.Tenant == tenant {
				s = s.Add(m.Info.Spent)
			}
		}
		return nil
	})
	return s, err
}
