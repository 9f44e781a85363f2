package builtin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/toolloop/toolloop"
)

// Defaults for the zero fields of [CheckpointOptions].
const (
	DefaultCheckpointMaxFileBytes  = 8 << 20
	DefaultCheckpointMaxTotalBytes = 1 << 30
	DefaultCheckpointDiffBytes     = 8 << 10
)

// ErrNoCheckpoint is returned for a call ID that has no checkpoint: the
// call never ran on this workspace, or could not change files.
var ErrNoCheckpoint = errors.New("builtin: no checkpoint for that call")

// checkpointRef is the branch of the store that holds the history.
const checkpointRef = plumbing.ReferenceName("refs/heads/checkpoints")

// CheckpointOptions turns on checkpoints for a workspace (see
// [Options.Checkpoints]) and configures them. The zero value is the
// documented default.
//
// Before each call of write_file, edit_file, apply_patch, exec_shell or
// rewind changes anything, and again after it, the workspace's state is
// recorded in a git repository outside the workspace (the store), and the
// call gets a [Checkpoint] that says what it changed. [Checkpoints.Rewind]
// (and the rewind tool, which the source then offers) puts the workspace
// back to how it was before any recorded call, byte for byte: file
// contents, permission bits, symbolic links (their targets, never
// followed), and directories, empty ones included. Modification times,
// owners and extended attributes are not recorded; restored files get the
// current time.
//
// What is recorded is what the workspace walker sees: .git and
// node_modules directories and whatever the workspace's .gitignore files
// and .git/info/exclude ignore are neither recorded nor ever touched by a
// rewind, and the user's .git is only read (its info/exclude). Nor are
// files larger than MaxFileBytes, files beyond MaxTotalBytes, named pipes,
// sockets, devices and what cannot be read: they are listed as skipped,
// the diff says so, and a rewind leaves them as they are.
//
// A snapshot after the first reads only the files whose size,
// modification time, change time (on Linux), inode or mode changed, as
// git's index does, so recording a large tree costs a walk of its
// directories and little more.
type CheckpointOptions struct {
	// Dir is the store: a bare git repository, created if missing, that
	// must not be inside the workspace. It keeps the history across
	// sources, so a later source on the same workspace can list and rewind
	// the calls of an earlier one; two sources must not use one Dir at
	// the same time. Empty means a new temporary directory that Close
	// removes. [UserCheckpointDir] gives a durable place per workspace.
	// The store grows with every recorded state and is never pruned;
	// delete it to start afresh.
	Dir string
	// MaxFileBytes is the largest file recorded; 0 means 8 MiB. A larger
	// file is skipped.
	MaxFileBytes int64
	// MaxTotalBytes caps the bytes of file content one snapshot records,
	// counted in path order; 0 means 1 GiB. Files beyond it are skipped.
	MaxTotalBytes int64
	// DiffBytes is how much of a call's diff its result carries in
	// Meta.Extra["checkpoint"], where events and the event log see it; 0
	// means 8 KiB, and a negative value leaves the diff out.
	// [Checkpoints.Diff] always gives all of it.
	DiffBytes int
}

// UserCheckpointDir returns a durable store directory for the workspace
// dir, for [CheckpointOptions.Dir]: toolloop/checkpoints/<hash of dir's
// absolute path> under the user's cache directory ([os.UserCacheDir]).
func UserCheckpointDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "toolloop", "checkpoints", hex.EncodeToString(sum[:12])), nil
}

// Checkpoint is the record of one call that could change files.
type Checkpoint struct {
	// CallID, RunID and Turn are the call's, from [toolloop.Call]. A
	// rewind made through [Checkpoints.Rewind] gets a new CallID
	// ("rewind-" and random hex) and no run.
	CallID string    `json:"call_id"`
	RunID  string    `json:"run_id,omitempty"`
	Turn   int       `json:"turn,omitempty"`
	Tool   string    `json:"tool"`
	Time   time.Time `json:"time"`
	// Complete is false while the call runs, and for a call whose state
	// afterwards could not be recorded (the program stopped, or the store
	// failed). It can be rewound to all the same; it has no changes and
	// no diff.
	Complete bool `json:"complete"`
	// Changes lists what the call changed, in path order.
	Changes []Change `json:"changes,omitempty"`
}

// Change is one path a call added, modified or deleted.
type Change struct {
	// Path is slash-separated and relative to the workspace; a directory's
	// ends in "/".
	Path string     `json:"path"`
	Kind ChangeKind `json:"kind"`
	// Skipped, when set, says why the path's content is not recorded (see
	// [CheckpointOptions]): "large" (over MaxFileBytes), "total" (beyond
	// MaxTotalBytes), "special" (a named pipe, socket or device) or
	// "unreadable". The change is known from the path's metadata only,
	// and a rewind leaves the path alone.
	Skipped string `json:"skipped,omitempty"`
}

// ChangeKind says what happened to a path.
type ChangeKind string

// The kinds of [Change]. A change of permissions, or of a file into a
// link or directory, is a modification.
const (
	ChangeAdded    ChangeKind = "added"
	ChangeModified ChangeKind = "modified"
	ChangeDeleted  ChangeKind = "deleted"
)

// Checkpoints records a workspace's state around the calls that can change
// it, and puts it back. Get it from [Source.Checkpoints]. It is safe for
// concurrent use: snapshots are taken one at a time. Calls that change
// files run at the same time only if the program makes them so (the loop
// runs such tools alone, as they are Exclusive); each state recorded is
// then still a true state of the workspace, but one call's changes may
// show in the other's diff.
type Checkpoints struct {
	ws   *workspace
	opts CheckpointOptions
	temp bool // the store is a temporary directory to remove on close

	mu     sync.Mutex
	closed bool
	repo   *filesystem.Storage
	known  map[plumbing.Hash]struct{}
	// knowsAll: known lists every object of the store, as it had no
	// history when opened, so the store need not be asked.
	knowsAll bool
	// Objects not yet written to the store (see flush).
	pending       *memory.Storage
	pendingHashes []plumbing.Hash
	pendingBytes  int64
	index         map[string]*entry        // the last snapshot, to reuse unchanged entries
	trees         map[string]plumbing.Hash // its directories' trees; nil before the first
	head          plumbing.Hash            // the newest commit of the history
	records       []*record                // oldest first
}

// record is one checkpoint and where its states are in the store.
type record struct {
	cp     Checkpoint
	key    plumbing.Hash // the commit of the state before the call
	before *state
	after  *state // nil until the call ends
}

// openCheckpoints opens or creates the store of a workspace.
func openCheckpoints(ws *workspace, o CheckpointOptions) (*Checkpoints, error) {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultCheckpointMaxFileBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultCheckpointMaxTotalBytes
	}
	if o.DiffBytes == 0 {
		o.DiffBytes = DefaultCheckpointDiffBytes
	}
	c := &Checkpoints{ws: ws, opts: o, known: map[plumbing.Hash]struct{}{}}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "toolloop-checkpoints-")
		if err != nil {
			return nil, fmt.Errorf("builtin: checkpoint store: %w", err)
		}
		c.opts.Dir, c.temp = d, true
	} else if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("builtin: checkpoint store: %w", err)
	}
	if err := c.open(); err != nil {
		c.removeTemp()
		return nil, err
	}
	return c, nil
}

func (c *Checkpoints) open() error {
	abs, err := filepath.Abs(c.opts.Dir)
	if err != nil {
		return fmt.Errorf("builtin: checkpoint store: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("builtin: checkpoint store: %w", err)
	}
	c.opts.Dir = abs
	if _, in := c.ws.inside(real); in {
		return fmt.Errorf("builtin: checkpoint store %s is inside the workspace; put it elsewhere", abs)
	}
	if _, err := os.Stat(filepath.Join(real, "objects")); errors.Is(err, fs.ErrNotExist) {
		if names, _ := os.ReadDir(real); len(names) > 0 {
			return fmt.Errorf("builtin: checkpoint store %s is a directory that is neither empty nor a git repository", abs)
		}
	}
	c.repo = filesystem.NewStorage(osfs.New(real), cache.NewObjectLRU(4<<20))
	if err := c.repo.Init(); err != nil {
		return fmt.Errorf("builtin: checkpoint store: %w", err)
	}
	if _, err := c.repo.Reference(plumbing.HEAD); errors.Is(err, plumbing.ErrReferenceNotFound) {
		cfg := config.NewConfig()
		cfg.Core.IsBare = true
		err = errors.Join(c.repo.SetConfig(cfg), c.repo.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, checkpointRef)))
		if err != nil {
			return fmt.Errorf("builtin: checkpoint store: %w", err)
		}
	}
	if err := c.loadHistory(); err != nil {
		return fmt.Errorf("builtin: checkpoint store %s: %w", abs, err)
	}
	return nil
}

// commitMeta is what a commit of the history says about its call, as JSON
// after the commit message's first line.
type commitMeta struct {
	Phase  string `json:"phase"`            // "before" or "after"
	Before string `json:"before,omitempty"` // for "after": the commit of the state before
	Checkpoint
}

// loadHistory reads the checkpoints of earlier sources from the store.
func (c *Checkpoints) loadHistory() error {
	ref, err := c.repo.Reference(checkpointRef)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		c.knowsAll = true
		return nil
	}
	if err != nil {
		return err
	}
	c.head = ref.Hash()
	var chain []*object.Commit
	for h := c.head; !h.IsZero(); {
		cm, err := object.GetCommit(c.repo, h)
		if err != nil {
			return err
		}
		chain = append(chain, cm)
		h = plumbing.ZeroHash
		if len(cm.ParentHashes) > 0 {
			h = cm.ParentHashes[0]
		}
	}
	byKey := map[plumbing.Hash]*record{}
	for _, cm := range slices.Backward(chain) {
		var m commitMeta
		_, body, _ := strings.Cut(cm.Message, "\n\n")
		if json.Unmarshal([]byte(body), &m) != nil {
			continue // not one of ours
		}
		snap, err := c.snapshotOf(cm)
		if err != nil {
			return err
		}
		switch m.Phase {
		case "before":
			m.Complete, m.Changes = false, nil
			r := &record{cp: m.Checkpoint, key: cm.Hash, before: snap}
			byKey[cm.Hash] = r
			c.records = append(c.records, r)
		case "after":
			if r := byKey[plumbing.NewHash(m.Before)]; r != nil {
				r.after, r.cp.Complete, r.cp.Changes = snap, true, m.Changes
			}
		}
	}
	return nil
}

// snapshotOf reads the state a commit records: its tree holds "files"
// (absent when the workspace had none) and "manifest".
func (c *Checkpoints) snapshotOf(cm *object.Commit) (*state, error) {
	t, err := object.GetTree(c.repo, cm.TreeHash)
	if err != nil {
		return nil, err
	}
	s := &state{}
	for _, e := range t.Entries {
		switch e.Name {
		case "files":
			s.files = e.Hash
		case "manifest":
			s.manifest = e.Hash
		}
	}
	if s.manifest.IsZero() {
		return nil, fmt.Errorf("commit %s holds no manifest", cm.Hash)
	}
	return s, nil
}

// commit appends a state to the history.
func (c *Checkpoints) commit(s *state, m commitMeta) (plumbing.Hash, error) {
	entries := []object.TreeEntry{{Name: "manifest", Mode: 0o100644, Hash: s.manifest}}
	if !s.files.IsZero() {
		entries = append([]object.TreeEntry{{Name: "files", Mode: 0o40000, Hash: s.files}}, entries...)
	}
	tobj := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(tobj); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := c.putObject(tobj); err != nil {
		return plumbing.ZeroHash, err
	}
	body, err := json.Marshal(m)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sig := object.Signature{Name: "toolloop", Email: "toolloop@localhost", When: time.Now()}
	cm := &object.Commit{
		Author: sig, Committer: sig, TreeHash: tobj.Hash(),
		Message: fmt.Sprintf("%s %s %s\n\n%s\n", m.Phase, m.Tool, m.CallID, body),
	}
	if !c.head.IsZero() {
		cm.ParentHashes = []plumbing.Hash{c.head}
	}
	cobj := &plumbing.MemoryObject{}
	if err := cm.Encode(cobj); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := c.putObject(cobj); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := c.flush(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := c.repo.SetReference(plumbing.NewHashReference(checkpointRef, cobj.Hash())); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("checkpoint store: %w", err)
	}
	c.head = cobj.Hash()
	return c.head, nil
}

// begin records the state before a call.
func (c *Checkpoints) begin(ctx context.Context, cp Checkpoint) (*record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.beginLocked(ctx, cp)
}

func (c *Checkpoints) beginLocked(ctx context.Context, cp Checkpoint) (*record, error) {
	if c.closed {
		return nil, fs.ErrClosed
	}
	s, err := c.take(ctx)
	if err != nil {
		return nil, err
	}
	key, err := c.commit(s, commitMeta{Phase: "before", Checkpoint: cp})
	if err != nil {
		return nil, err
	}
	r := &record{cp: cp, key: key, before: s}
	c.records = append(c.records, r)
	return r, nil
}

// end records the state after a call and what the call changed.
func (c *Checkpoints) end(r *record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endLocked(r)
}

func (c *Checkpoints) endLocked(r *record) error {
	if c.closed {
		return fs.ErrClosed
	}
	// The call is over: finish recording it even if its context ended.
	s, err := c.take(context.Background())
	if err != nil {
		return err
	}
	changes := diffEntries(r.before.entries, s.entries)
	cp := r.cp
	cp.Complete, cp.Changes = true, changes
	if _, err := c.commit(s, commitMeta{Phase: "after", Before: r.key.String(), Checkpoint: cp}); err != nil {
		return err
	}
	r.after, r.cp.Complete, r.cp.Changes = s, true, changes
	return nil
}

// diffEntries lists what changed from one snapshot to the next.
func diffEntries(before, after map[string]*entry) []Change {
	var out []Change
	add := func(rel string, e *entry, kind ChangeKind, skipped string) {
		if e.isDir() {
			rel += "/"
		}
		out = append(out, Change{Path: rel, Kind: kind, Skipped: skipped})
	}
	for rel, a := range after {
		b := before[rel]
		switch {
		case b == nil:
			add(rel, a, ChangeAdded, a.skip)
		case !sameState(b, a):
			add(rel, a, ChangeModified, cmpOr(a.skip, b.skip))
		}
	}
	for rel, b := range before {
		if after[rel] == nil {
			add(rel, b, ChangeDeleted, b.skip)
		}
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// List returns the checkpoints, oldest first: those of this source and,
// when [CheckpointOptions.Dir] is set, those of earlier sources on the
// same store.
func (c *Checkpoints) List() []Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Checkpoint, len(c.records))
	for i, r := range c.records {
		out[i] = r.cp
		out[i].Changes = slices.Clone(r.cp.Changes)
	}
	return out
}

// Dir returns the store's directory.
func (c *Checkpoints) Dir() string { return c.opts.Dir }

// find returns the newest checkpoint of a call. c.mu must be held.
func (c *Checkpoints) find(callID string) (*record, error) {
	if c.closed {
		return nil, fs.ErrClosed
	}
	for _, r := range slices.Backward(c.records) {
		if r.cp.CallID == callID {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w %q", ErrNoCheckpoint, callID)
}

// Diff returns what a call changed as a unified diff, git's flavour, with
// the changes a diff of file contents cannot show (directories,
// permissions beyond the executable bit, skipped files) first, on lines
// that start with "# ". When a call ID was used more than once, the
// newest call is meant. It fails with [ErrNoCheckpoint] for an unknown
// call, and for a call that is not [Checkpoint.Complete].
func (c *Checkpoints) Diff(callID string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.find(callID)
	if err != nil {
		return "", err
	}
	if r.after == nil {
		return "", fmt.Errorf("%w %q: the state after the call was not recorded", ErrNoCheckpoint, callID)
	}
	d, _, err := c.diffText(r, -1)
	return d, err
}

// Rewind puts the workspace back to its state before the call callID (the
// newest call of that ID), and records that as a checkpoint of its own,
// which it returns: rewinding to the returned checkpoint's CallID undoes
// the rewind. Paths that the target state or the current one holds
// without their content (see [CheckpointOptions]) are left alone, as are
// ignored paths.
//
// It fails with [ErrNoCheckpoint] for an unknown call. If some paths
// cannot be restored, it restores the others and returns an error naming
// them together with the checkpoint, which can be rewound to.
func (c *Checkpoints) Rewind(ctx context.Context, callID string) (Checkpoint, error) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	cp, _, err := c.rewind(ctx, Checkpoint{CallID: "rewind-" + hex.EncodeToString(rnd[:]), Tool: Rewind, Time: time.Now()}, callID)
	return cp, err
}

// rewind restores the state before the call `to`, recorded as the
// checkpoint cp. It returns the checkpoint, the record rewound to, and the
// error of any path it could not restore.
func (c *Checkpoints) rewind(ctx context.Context, cp Checkpoint, to string) (Checkpoint, *record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	target, err := c.find(to)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	want, err := c.load(target.before)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	r, err := c.beginLocked(ctx, cp)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	restoreErr := c.restore(want, r.before.entries)
	if err := c.endLocked(r); err != nil {
		return r.cp, target, errors.Join(restoreErr, err)
	}
	return r.cp, target, restoreErr
}

// close removes a temporary store. Later calls fail.
func (c *Checkpoints) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.removeTemp()
}

func (c *Checkpoints) removeTemp() {
	if c.temp {
		_ = os.RemoveAll(c.opts.Dir)
	}
}

// checkpointed wraps a tool that can change files: its calls are recorded
// before and after they run.
type checkpointed struct {
	toolloop.Tool
	c *Checkpoints
}

// Run implements [toolloop.Tool].
func (t *checkpointed) Run(ctx context.Context, call *toolloop.Call) (res *toolloop.ToolResult, err error) {
	r, err := t.c.begin(ctx, checkpointOf(call))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, failed("recording the workspace before the call failed, so the call was not made: %v", err)
	}
	ended := false
	defer func() {
		if !ended { // the tool panicked: record what it did, and let the panic go on
			_ = t.c.end(r)
		}
	}()
	res, err = t.Tool.Run(ctx, call)
	ended = true
	endErr := t.c.end(r)
	if res != nil {
		t.c.annotate(res, r, endErr)
	}
	return res, err
}

func checkpointOf(call *toolloop.Call) Checkpoint {
	return Checkpoint{CallID: call.ID, RunID: call.RunID, Turn: call.Turn, Tool: call.Name, Time: time.Now()}
}

// annotate puts a summary of what the call changed in its result's
// Meta.Extra["checkpoint"], for events and the event log.
func (c *Checkpoints) annotate(res *toolloop.ToolResult, r *record, endErr error) {
	sum := map[string]any{"call_id": r.cp.CallID}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case endErr != nil:
		sum["error"] = "the state after the call was not recorded: " + endErr.Error()
	case r.after == nil:
		sum["error"] = "the state after the call was not recorded"
	default:
		counts := map[ChangeKind]int{}
		var paths []string
		for _, ch := range r.cp.Changes {
			counts[ch.Kind]++
			if len(paths) < maxSummaryPaths {
				paths = append(paths, string(ch.Kind[0])+" "+ch.Path)
			}
		}
		sum["added"], sum["modified"], sum["deleted"] = counts[ChangeAdded], counts[ChangeModified], counts[ChangeDeleted]
		if len(paths) > 0 {
			sum["paths"] = paths
		}
		if c.opts.DiffBytes > 0 && len(r.cp.Changes) > 0 {
			d, cut, err := c.diffText(r, c.opts.DiffBytes)
			if err == nil {
				sum["diff"] = d
				if cut {
					sum["diff_truncated"] = true
				}
			}
		}
	}
	if res.Meta.Extra == nil {
		res.Meta.Extra = map[string]any{}
	}
	res.Meta.Extra["checkpoint"] = sum
}

// maxSummaryPaths is how many changed paths a result's summary lists.
const maxSummaryPaths = 20
