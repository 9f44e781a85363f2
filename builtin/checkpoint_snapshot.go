package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// racySlack is how recently before a snapshot a file may have been
// modified for its recorded content to be trusted on its size, times and
// inode alone. File systems stamp modifications from a coarse clock, so a
// file changed twice within one tick can keep its modification time; like
// git's "racily clean" entries, a file modified within racySlack of the
// snapshot that read it is read again next time.
const racySlack = 100 * time.Millisecond

// Why a path is in a snapshot without its content. Such paths are never
// touched by a rewind.
const (
	skipLarge      = "large"      // over CheckpointOptions.MaxFileBytes
	skipTotal      = "total"      // over CheckpointOptions.MaxTotalBytes
	skipSpecial    = "special"    // not a regular file, directory or symbolic link
	skipUnreadable = "unreadable" // could not be read
)

// entry is one path of a snapshot: a regular file, a symbolic link or a
// directory. Entries are never changed once made, so snapshots share them.
type entry struct {
	mode fs.FileMode   // type bits and permission bits
	hash plumbing.Hash // blob of the content, or of a link's target; zero for directories and skipped files
	size int64
	skip string // why the content is not recorded; "" when it is

	st       statKey // what the index compares
	hashedAt int64   // when the content was read (Unix ns), for racySlack
}

func (e *entry) isDir() bool     { return e.mode.IsDir() }
func (e *entry) isLink() bool    { return e.mode&fs.ModeSymlink != 0 }
func (e *entry) isRegular() bool { return e.mode.IsRegular() }

// sameState reports whether two entries of the same path describe the same
// thing on disk, for the list of a call's changes.
func sameState(a, b *entry) bool {
	switch {
	case a.mode.Type() != b.mode.Type() || a.skip != b.skip:
		return false
	case a.skip != "":
		return a.st == b.st
	case a.isLink():
		return a.hash == b.hash
	}
	return a.mode == b.mode && a.hash == b.hash
}

// statKey is what a snapshot remembers of a path's metadata: when none of
// it changed (and the content was not read too close to a modification)
// the content is taken as unchanged, as git's index does.
type statKey struct {
	size, mtime, ctime int64
	ino                uint64
	mode               fs.FileMode
}

// state is a recorded state of the workspace.
type state struct {
	entries  map[string]*entry // by slash-separated workspace-relative path
	files    plumbing.Hash     // tree of the recorded files; zero when there are none
	manifest plumbing.Hash     // blob of what the tree cannot hold (see encodeManifest)
}

// take walks the workspace and records its state in the store, reading
// again only the files whose metadata changed since the last snapshot.
// It skips what the workspace walker skips (.git, node_modules, and what
// .gitignore files ignore), and .git files. c.mu must be held.
func (c *Checkpoints) take(ctx context.Context) (*state, error) {
	start := time.Now().UnixNano()
	next := make(map[string]*entry, len(c.index))
	var total int64
	wk := c.ws.walker()
	err := wk.walk(ctx, ".", 0, func(dir *os.Root, rel string, d fs.DirEntry, _ int) error {
		if d.Name() == ".git" { // the walker skips .git folders; a .git file (a worktree's) is the user's too
			return nil
		}
		e, err := c.record(dir, rel, d, start, &total)
		if err != nil {
			return err
		}
		if e == nil { // gone since it was listed
			return skipDir(d)
		}
		next[rel] = e
		if e.isDir() && e.skip != "" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &state{entries: next}
	var keepTrees func()
	if s.files, keepTrees, err = c.writeTrees(next); err != nil {
		return nil, err
	}
	if s.manifest, err = c.putBlob(encodeManifest(next)); err != nil {
		return nil, err
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	keepTrees()
	c.index = next
	return s, nil
}

func skipDir(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// record makes the entry of one path, reusing the last snapshot's entry
// when the path's metadata is unchanged. It returns nil for a path that
// no longer exists, and an error only when the store fails.
func (c *Checkpoints) record(dir *os.Root, rel string, d fs.DirEntry, start int64, total *int64) (*entry, error) {
	name := d.Name()
	fi, err := dir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return &entry{mode: d.Type(), skip: skipUnreadable}, nil
	}
	st := statOf(fi)
	mode := fi.Mode().Type() | fi.Mode().Perm()
	old := c.index[rel]
	switch {
	case fi.IsDir():
		skip := ""
		if !canList(fi) {
			skip = skipUnreadable
		}
		if old != nil && old.isDir() && old.mode == mode && old.skip == skip {
			return old, nil // unchanged, so its tree can be reused
		}
		return &entry{mode: mode, st: st, skip: skip}, nil
	case !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0:
		return &entry{mode: mode, size: fi.Size(), st: st, skip: skipSpecial}, nil
	case old != nil && old.st == st && old.skip == "" && st.mtime < old.hashedAt-int64(racySlack):
		if !fi.Mode().IsRegular() {
			return old, nil
		}
		if *total+old.size <= c.opts.MaxTotalBytes {
			*total += old.size
			return old, nil
		}
	}
	e := &entry{mode: mode, size: fi.Size(), st: st}
	if fi.Mode()&fs.ModeSymlink != 0 {
		dest, err := dir.Readlink(name)
		if err != nil {
			e.skip = skipUnreadable
			return e, nil
		}
		e.hashedAt = start
		e.hash, err = c.putBlob([]byte(dest))
		return e, err
	}
	switch {
	case e.size > c.opts.MaxFileBytes:
		e.skip = skipLarge
		return e, nil
	case *total+e.size > c.opts.MaxTotalBytes:
		e.skip = skipTotal
		return e, nil
	}
	data, ok := readRegular(dir, name, c.opts.MaxFileBytes)
	switch {
	case !ok:
		e.skip = skipUnreadable
		return e, nil
	case int64(len(data)) > c.opts.MaxFileBytes:
		e.skip = skipLarge // it grew while being read
		return e, nil
	}
	*total += int64(len(data))
	e.size, e.hashedAt = int64(len(data)), start
	e.hash, err = c.putBlob(data)
	return e, err
}

// readRegular reads up to limit+1 bytes of a regular file; ok is false if
// it cannot be opened or read, or is no longer a regular file.
func readRegular(dir *os.Root, name string, limit int64) (data []byte, ok bool) {
	f, err := openRead(dir, name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	data = make([]byte, 0, min(fi.Size(), limit)+1)
	data, err = readAllInto(io.LimitReader(f, limit+1), data)
	return data, err == nil
}

// readAllInto is io.ReadAll into a buffer sized in advance.
func readAllInto(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// gitMode is the mode a git tree records for an entry: git keeps only
// the executable bit of a file's permissions; the manifest keeps the rest.
func gitMode(e *entry) filemode.FileMode {
	switch {
	case e.isLink():
		return filemode.Symlink
	case e.mode.Perm()&0o100 != 0:
		return filemode.Executable
	}
	return filemode.Regular
}

// canonicalPerm is the permission a file gets back from its git mode alone.
func canonicalPerm(m filemode.FileMode) fs.FileMode {
	if m == filemode.Executable {
		return 0o755
	}
	return 0o644
}

// writeTrees stores the git trees of a snapshot's recorded files and
// returns the root tree, or the zero hash when nothing is recorded. Empty
// directories are not in the trees (git has no place for them): the
// manifest lists every directory. Only the trees of directories whose
// entries changed since the last snapshot are made again; the others
// come from c.trees, which keep updates once the snapshot is stored.
func (c *Checkpoints) writeTrees(entries map[string]*entry) (root plumbing.Hash, keep func(), err error) {
	dirty := map[string]bool{".": c.trees == nil}
	for rel, e := range entries {
		if c.index[rel] != e {
			dirty[path.Dir(rel)] = true
			if e.isDir() {
				dirty[rel] = true
			}
		}
	}
	for rel := range c.index {
		if entries[rel] == nil {
			dirty[path.Dir(rel)] = true
		}
	}
	for d := range dirty { // a changed directory changes the trees above it
		for p := d; p != "."; {
			p = path.Dir(p)
			if dirty[p] {
				break
			}
			dirty[p] = true
		}
	}
	children := map[string][]object.TreeEntry{}
	for rel, e := range entries {
		parent := path.Dir(rel)
		switch {
		case e.skip != "" || !dirty[parent]:
		case !e.isDir():
			children[parent] = append(children[parent], object.TreeEntry{Name: path.Base(rel), Mode: gitMode(e), Hash: e.hash})
		case !dirty[rel]:
			if h := c.trees[rel]; !h.IsZero() {
				children[parent] = append(children[parent], object.TreeEntry{Name: path.Base(rel), Mode: filemode.Dir, Hash: h})
			}
		}
	}
	dirs := make([]string, 0, len(dirty))
	for d, ok := range dirty {
		if e := entries[d]; ok && (d == "." || e != nil && e.isDir() && e.skip == "") {
			dirs = append(dirs, d)
		}
	}
	// Deepest first, so a directory's tree is made after its subtrees.
	slices.SortFunc(dirs, func(a, b string) int { return depth(b) - depth(a) })
	made := map[string]plumbing.Hash{}
	for _, d := range dirs {
		var h plumbing.Hash
		if kids := children[d]; len(kids) > 0 {
			slices.SortFunc(kids, func(a, b object.TreeEntry) int { return strings.Compare(treeSortName(a), treeSortName(b)) })
			obj := &plumbing.MemoryObject{}
			if err := (&object.Tree{Entries: kids}).Encode(obj); err != nil {
				return plumbing.ZeroHash, nil, err
			}
			if err := c.putObject(obj); err != nil {
				return plumbing.ZeroHash, nil, err
			}
			h = obj.Hash()
		}
		made[d] = h
		if d != "." && !h.IsZero() {
			parent := path.Dir(d)
			children[parent] = append(children[parent], object.TreeEntry{Name: path.Base(d), Mode: filemode.Dir, Hash: h})
		}
	}
	root = c.trees["."]
	if h, ok := made["."]; ok {
		root = h
	}
	keep = func() {
		if c.trees == nil {
			c.trees = map[string]plumbing.Hash{}
		}
		for d := range c.trees {
			if e := entries[d]; d != "." && (e == nil || !e.isDir() || e.skip != "") {
				delete(c.trees, d)
			}
		}
		maps.Copy(c.trees, made)
	}
	return root, keep, nil
}

func depth(rel string) int {
	if rel == "." {
		return -1
	}
	return strings.Count(rel, "/")
}

// treeSortName is how git orders tree entries: a directory as if its name
// ended in a slash.
func treeSortName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// encodeManifest writes what a git tree cannot hold, one path a line,
// sorted, paths quoted with strconv.Quote so that any byte survives:
//
//	d 0755 "dir"         every directory, with its permissions
//	m 0600 "file"        a file whose permissions are not 0644 or 0755
//	s large "big.bin"    a path whose content is not recorded, and why
func encodeManifest(entries map[string]*entry) []byte {
	var lines []string
	for rel, e := range entries {
		switch {
		case e.skip != "":
			lines = append(lines, "s "+e.skip+" "+strconv.Quote(rel))
		case e.isDir():
			lines = append(lines, fmt.Sprintf("d %04o %s", e.mode.Perm(), strconv.Quote(rel)))
		case e.isRegular() && e.mode.Perm() != canonicalPerm(gitMode(e)):
			lines = append(lines, fmt.Sprintf("m %04o %s", e.mode.Perm(), strconv.Quote(rel)))
		}
	}
	// Sorted by path, the quoted path being the line's last field.
	slices.SortFunc(lines, func(a, b string) int {
		return strings.Compare(a[strings.IndexByte(a[2:], ' ')+3:], b[strings.IndexByte(b[2:], ' ')+3:])
	})
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// load reads a recorded state back from the store: its files from the
// tree, and its directories, permissions and skipped paths from the
// manifest.
func (c *Checkpoints) load(s *state) (map[string]*entry, error) {
	out := map[string]*entry{}
	if !s.files.IsZero() {
		t, err := object.GetTree(c.repo, s.files)
		if err != nil {
			return nil, err
		}
		if err := c.loadTree(t, "", out); err != nil {
			return nil, err
		}
	}
	data, err := c.readBlob(s.manifest)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		arg, q, _ := strings.Cut(rest, " ")
		rel, err := strconv.Unquote(q)
		if err != nil {
			return nil, fmt.Errorf("checkpoint manifest %s: bad line %q", s.manifest, sc.Text())
		}
		perm, _ := strconv.ParseUint(arg, 8, 32)
		switch kind {
		case "d":
			out[rel] = &entry{mode: fs.ModeDir | fs.FileMode(perm)&fs.ModePerm}
		case "m":
			if e := out[rel]; e != nil {
				cp := *e
				cp.mode = fs.FileMode(perm) & fs.ModePerm
				out[rel] = &cp
			}
		case "s":
			out[rel] = &entry{skip: arg}
		}
	}
	return out, sc.Err()
}

func (c *Checkpoints) loadTree(t *object.Tree, prefix string, out map[string]*entry) error {
	for _, te := range t.Entries {
		rel := prefix + te.Name
		switch te.Mode {
		case filemode.Dir:
			sub, err := object.GetTree(c.repo, te.Hash)
			if err != nil {
				return err
			}
			if err := c.loadTree(sub, rel+"/", out); err != nil {
				return err
			}
		case filemode.Symlink:
			out[rel] = &entry{mode: fs.ModeSymlink | 0o777, hash: te.Hash}
		case filemode.Regular, filemode.Executable:
			out[rel] = &entry{mode: canonicalPerm(te.Mode), hash: te.Hash}
		}
	}
	return nil
}

// putBlob stores data as a blob and returns its hash.
func (c *Checkpoints) putBlob(data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	if c.has(h) {
		return h, nil
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.BlobObject)
	_, _ = obj.Write(data)
	return h, c.putObject(obj)
}

// Objects are stored in batches: a batch of packMin objects or more goes
// into one pack file, which is much faster than as many loose objects
// when a whole tree is recorded for the first time; a batch is written
// out when it holds maxPendingBytes, and when a state is complete.
const (
	packMin         = 64
	maxPendingBytes = 32 << 20
)

// putObject stores an object unless the store has it already.
func (c *Checkpoints) putObject(obj *plumbing.MemoryObject) error {
	h := obj.Hash()
	if c.has(h) {
		return nil
	}
	if c.pending == nil {
		c.pending = memory.NewStorage()
	}
	if _, err := c.pending.SetEncodedObject(obj); err != nil {
		return err
	}
	c.pendingHashes = append(c.pendingHashes, h)
	c.pendingBytes += obj.Size()
	if c.pendingBytes >= maxPendingBytes {
		return c.flush()
	}
	return nil
}

// flush writes the pending objects to the store.
func (c *Checkpoints) flush() (err error) {
	hashes, pending := c.pendingHashes, c.pending
	c.pending, c.pendingHashes, c.pendingBytes = nil, nil, 0
	if len(hashes) == 0 {
		return nil
	}
	if len(hashes) < packMin {
		for _, h := range hashes {
			obj, err := pending.EncodedObject(plumbing.AnyObject, h)
			if err == nil {
				_, err = c.repo.SetEncodedObject(obj)
			}
			if err != nil {
				return fmt.Errorf("checkpoint store: %w", err)
			}
			c.known[h] = struct{}{}
		}
		return nil
	}
	w, err := c.repo.PackfileWriter()
	if err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	_, err = packfile.NewEncoder(w, pending, false).Encode(hashes, 0)
	if err = errors.Join(err, w.Close()); err != nil {
		return fmt.Errorf("checkpoint store: writing a pack: %w", err)
	}
	for _, h := range hashes {
		c.known[h] = struct{}{}
	}
	return nil
}

// has reports whether the store holds an object, or will once the
// pending ones are written, remembering the answer. A wrong "no" costs
// only an object written twice.
func (c *Checkpoints) has(h plumbing.Hash) bool {
	if _, ok := c.known[h]; ok {
		return true
	}
	if c.pending != nil && c.pending.HasEncodedObject(h) == nil {
		return true
	}
	if !c.knowsAll && c.repo.HasEncodedObject(h) == nil {
		c.known[h] = struct{}{}
		return true
	}
	return false
}

func (c *Checkpoints) readBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := c.repo.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: blob %s: %w", h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// osPath turns a slash-separated workspace path into one for os.Root.
func osPath(rel string) string { return filepath.FromSlash(rel) }
