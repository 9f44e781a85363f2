package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"iter"
	"os"
	"strconv"
	"time"
)

// A Dir's records file is JSON Lines: a header line, then one line per
// Append (a batch), each written with one write and synced:
//
//	{"v":1,"incarnation":7,"info":{"id":"s","tenant":"acme",...}}
//	{"seq":1,"n":2,"base":1,"time":"...","spend":{...},"status":"running","records":[{"seq":1,"base":true,"data":{...}},{"seq":2,"data":{...}}]}
//	{"seq":3,"n":0,"time":"...","spend":{...}}
//
// A record's Data is kept as it is, as raw JSON in "data", or base64 in
// "b64" when raw JSON would not give it back byte for byte (it holds line
// breaks, or white space around the value).

// dirHeader is the first line of a records file: what Create was given.
type dirHeader struct {
	V           int   `json:"v"`
	Incarnation int64 `json:"incarnation"`
	Info        Info  `json:"info"`
}

// dirBatchHead is what a batch line changes in the session's Info.
type dirBatchHead struct {
	Seq    int64     `json:"seq"`
	N      int64     `json:"n"`
	CRC    uint32    `json:"crc"`
	Base   int64     `json:"base"`
	Time   time.Time `json:"time"`
	Spend  Spend     `json:"spend"`
	Status Status    `json:"status"`
}

type dirBatch struct {
	dirBatchHead
	Records []dirRecord `json:"records"`
}

type dirRecord struct {
	Seq  int64           `json:"seq"`
	Base bool            `json:"base"`
	Data json.RawMessage `json:"data"`
	B64  []byte          `json:"b64"`
}

// lineReader reads a records file line by line, holding one line at a
// time.
type lineReader struct {
	r    *bufio.Reader
	buf  []byte
	off  int64 // the offset of the next line
	line int64 // the number of the last line read
}

// newLineReader reads f from off, the start of line line+1, with a
// buffer of size bytes (lines may be longer).
func newLineReader(f *os.File, off, line int64, size int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(io.NewSectionReader(f, off, 1<<62), size), off: off, line: line}
}

// next returns the next whole line, without its newline, or io.EOF at
// the end of the file or at a torn last line (one without a newline). If
// skip says, from the line's start, that it is not wanted, next reads
// past it and returns a nil line.
func (lr *lineReader) next(skip func(start []byte) bool) ([]byte, error) {
	chunk, err := lr.r.ReadSlice('\n')
	if skip != nil && (err == nil || errors.Is(err, bufio.ErrBufferFull)) && skip(chunk) {
		n := int64(len(chunk))
		for errors.Is(err, bufio.ErrBufferFull) {
			chunk, err = lr.r.ReadSlice('\n')
			n += int64(len(chunk))
		}
		if err != nil {
			return nil, err
		}
		lr.off += n
		lr.line++
		return nil, nil
	}
	lr.buf = append(lr.buf[:0], chunk...)
	for errors.Is(err, bufio.ErrBufferFull) {
		chunk, err = lr.r.ReadSlice('\n')
		lr.buf = append(lr.buf, chunk...)
	}
	if err != nil {
		return nil, err // io.EOF: a torn line, or none
	}
	lr.off += int64(len(lr.buf))
	lr.line++
	return lr.buf[:len(lr.buf)-1], nil
}

// atEnd reports whether nothing follows the last line read.
func (lr *lineReader) atEnd() bool {
	_, err := lr.r.Peek(1)
	return err != nil
}

// rebuildMeta makes a session's metadata from its records file's header,
// when the metadata file does not decode. scanTail then adds the batches.
func rebuildMeta(f *os.File, id string) (*dirMeta, error) {
	lr := newLineReader(f, 0, 0, 4<<10)
	line, err := lr.next(nil)
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: session %q: its records file has no header", ErrCorrupt, id)
	}
	if err != nil {
		return nil, err
	}
	var h dirHeader
	if err := json.Unmarshal(line, &h); err != nil || h.Info.ID == "" || id != "" && h.Info.ID != id {
		return nil, fmt.Errorf("%w: session %q, line 1: not the records file's header", ErrCorrupt, id)
	}
	if h.V > dirSchema {
		return nil, fmt.Errorf("%w: session %q: records of version %d", ErrSchemaVersion, id, h.V)
	}
	in := h.Info
	in.Updated, in.Head, in.Base, in.Status, in.Spent = in.Created, 0, 0, StatusNew, Spend{}
	return &dirMeta{V: dirSchema, Incarnation: h.Incarnation, Info: in, Size: lr.off, Lines: 1}, nil
}

// scanTail brings m up to date with the whole lines of the records file
// after the part m covers, and returns the offset where the file's valid
// part ends: a torn last line starts there. A last line that ends but
// does not decode counts as torn (a crash wrote its end and not all of
// its middle); one that other lines follow is corrupt.
func scanTail(f *os.File, m *dirMeta) (int64, error) {
	lr := newLineReader(f, m.Size, m.Lines, 4<<10) // usually nothing to read
	for {
		start := lr.off
		line, err := lr.next(nil)
		if errors.Is(err, io.EOF) {
			return start, nil
		}
		if err != nil {
			return 0, err
		}
		b, err := decodeHead(line)
		if err == nil && b.Seq != m.Info.Head+1 {
			err = fmt.Errorf("batch at seq %d after seq %d", b.Seq, m.Info.Head)
		}
		if err != nil {
			if lr.atEnd() {
				return start, nil
			}
			return 0, fmt.Errorf("%w: session %q, line %d: %v", ErrCorrupt, m.Info.ID, lr.line, err)
		}
		m.apply(b, start, lr.line)
		m.Size, m.Lines = lr.off, lr.line
	}
}

// apply adds a batch, at the line of the records file at off, to m's
// Info.
func (m *dirMeta) apply(b dirBatchHead, off, line int64) {
	m.Info.Head += b.N
	if b.Base > 0 {
		m.Info.Base, m.BaseOffset, m.BaseLine = b.Base, off, line
	}
	m.Info.Spent = m.Info.Spent.Add(b.Spend)
	if b.Status != "" {
		m.Info.Status = b.Status
	}
	if b.Time.After(m.Info.Updated) {
		m.Info.Updated = b.Time
	}
}

// Append writes b with the lease l (see [Store.Append]) as one line of
// the records file, synced before it returns, then the metadata file
// (not synced: see [Dir]).
func (d *Dir) Append(ctx context.Context, l Lease, b Batch) error {
	if err := d.check(ctx); err != nil {
		return err
	}
	body, err := encodeRecords(b.Records)
	if err != nil {
		return err
	}
	var gap error
	for i, r := range b.Records {
		if r.Seq != b.Records[0].Seq+int64(i) {
			gap = fmt.Errorf("%w: record %d has seq %d after %d", ErrInvalid, i, r.Seq, b.Records[i-1].Seq)
			break
		}
	}
	if CheckID(l.Session) != nil {
		return fmt.Errorf("%w: no session %q", ErrLeaseLost, l.Session)
	}
	return d.locked(ctx, func() error {
		stem := fileStem(l.Session)
		m, f, err := d.loadForWrite(stem, l.Session)
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%w: %v", ErrLeaseLost, err)
		}
		if err != nil {
			return err
		}
		defer f.Close()
		now := time.Now()
		if m.Lease == nil || m.Lease.Token != l.Token || m.Lease.Holder != l.Holder || !m.Lease.held(now) {
			return fmt.Errorf("%w: %q is not held with token %d", ErrLeaseLost, l.Session, l.Token)
		}
		if len(b.Records) > 0 && b.Records[0].Seq != m.Info.Head+1 {
			return fmt.Errorf("%w: record %d after the head %d of %q", ErrConflict, b.Records[0].Seq, m.Info.Head, l.Session)
		}
		if gap != nil {
			return gap
		}
		h := dirBatchHead{Seq: m.Info.Head + 1, N: int64(len(b.Records)), Time: now, Spend: b.Spend, Status: b.Status}
		if h.Time.Before(m.Info.Updated) {
			h.Time = m.Info.Updated
		}
		for _, r := range b.Records {
			if r.Base {
				h.Base = r.Seq
			}
		}
		line, err := encodeBatch(h, body)
		if err != nil {
			return err
		}
		off := m.Size
		if _, err := f.WriteAt(line, off); err != nil {
			_ = f.Truncate(off)
			return fmt.Errorf("session: appending to %q: %w", l.Session, err)
		}
		if err := f.Sync(); err != nil {
			_ = f.Truncate(off)
			return fmt.Errorf("session: syncing %q: %w", l.Session, err)
		}
		m.apply(h, off, m.Lines+1)
		m.Size, m.Lines = off+int64(len(line)), m.Lines+1
		// The records are durable: the append happened. Should the
		// metadata fail to be written, the next reader rebuilds it.
		_ = d.writeMeta(stem, m, false)
		return nil
	})
}

// encodeRecords returns the JSON array of a batch's records, or an error
// wrapping ErrInvalid if a record's Data is not JSON.
func encodeRecords(recs []Record) ([]byte, error) {
	size := 2
	for _, r := range recs {
		size += len(r.Data) + 48
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '[')
	for i, r := range recs {
		if !json.Valid(r.Data) {
			return nil, fmt.Errorf("%w: the Data of record %d (seq %d) is not JSON", ErrInvalid, i, r.Seq)
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"seq":`...)
		buf = strconv.AppendInt(buf, r.Seq, 10)
		if r.Base {
			buf = append(buf, `,"base":true`...)
		}
		if rawSafe(r.Data) {
			buf = append(buf, `,"data":`...)
			buf = append(buf, r.Data...)
		} else {
			buf = append(buf, `,"b64":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, r.Data)
			buf = append(buf, '"')
		}
		buf = append(buf, '}')
	}
	return append(buf, ']'), nil
}

// rawSafe reports whether valid JSON data, written raw in a line, reads
// back byte for byte: no line breaks, no white space around it.
func rawSafe(data []byte) bool {
	return !bytes.ContainsAny(data, "\r\n") && !isSpace(data[0]) && !isSpace(data[len(data)-1])
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// encodeBatch returns a batch's line, its newline included, with its
// head's fields first so that a reader can skip it by its start.
func encodeBatch(h dirBatchHead, records []byte) ([]byte, error) {
	buf := make([]byte, 0, len(records)+160)
	buf = append(buf, `{"seq":`...)
	buf = strconv.AppendInt(buf, h.Seq, 10)
	buf = append(buf, `,"n":`...)
	buf = strconv.AppendInt(buf, h.N, 10)
	if h.N > 0 {
		buf = append(buf, `,"crc":`...)
		buf = strconv.AppendUint(buf, uint64(crc32.Checksum(records, castagnoli)), 10)
	}
	if h.Base > 0 {
		buf = append(buf, `,"base":`...)
		buf = strconv.AppendInt(buf, h.Base, 10)
	}
	t, err := h.Time.MarshalJSON()
	if err != nil {
		return nil, err
	}
	buf = append(buf, `,"time":`...)
	buf = append(buf, t...)
	if !h.Spend.IsZero() {
		s, err := json.Marshal(h.Spend)
		if err != nil {
			return nil, err
		}
		buf = append(buf, `,"spend":`...)
		buf = append(buf, s...)
	}
	if h.Status != "" {
		s, err := json.Marshal(h.Status)
		if err != nil {
			return nil, err
		}
		buf = append(buf, `,"status":`...)
		buf = append(buf, s...)
	}
	if h.N > 0 {
		buf = append(buf, `,"records":`...)
		buf = append(buf, records...)
	}
	return append(buf, "}\n"...), nil
}

// batchRange reads the seq and n of a batch line from its start, as
// encodeBatch writes it.
func batchRange(start []byte) (seq, n int64, ok bool) {
	rest, ok := bytes.CutPrefix(start, []byte(`{"seq":`))
	if !ok {
		return 0, 0, false
	}
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		return 0, 0, false
	}
	seq, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"n":`))
	if !ok {
		return 0, 0, false
	}
	i = bytes.IndexAny(rest, ",}")
	if i < 0 {
		return 0, 0, false
	}
	n, err = strconv.ParseInt(string(rest[:i]), 10, 64)
	return seq, n, err == nil
}

// Records yields a session's records from from on (see [Store.Records]),
// reading its records file a line at a time, without the folder's lock.
// It starts at the line of the session's Base record when from is at or
// after it, and skips the lines before from without decoding them. A
// line that does not decode, with others after it, yields an error
// wrapping ErrCorrupt that names the session and the line.
func (d *Dir) Records(ctx context.Context, id string, from int64) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if err := d.check(ctx); err != nil {
			yield(Record{}, err)
			return
		}
		if CheckID(id) != nil {
			yield(Record{}, fmt.Errorf("%w: %q", ErrNotFound, id))
			return
		}
		stem := fileStem(id)
		m, err := d.readMeta(stem, id)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			yield(Record{}, err)
			return
		}
		f, err := os.Open(d.recordsPath(stem))
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		if err != nil {
			yield(Record{}, err)
			return
		}
		defer f.Close()
		var lr *lineReader
		if m != nil && m.Info.Base > 0 && from >= m.Info.Base && m.BaseOffset > 0 {
			lr = newLineReader(f, m.BaseOffset, m.BaseLine-1, 64<<10)
		} else {
			lr = newLineReader(f, 0, 0, 64<<10)
			if _, err := lr.next(nil); err != nil { // the header
				if !errors.Is(err, io.EOF) {
					yield(Record{}, err)
				}
				return
			}
		}
		skip := func(start []byte) bool {
			seq, n, ok := batchRange(start)
			return ok && seq+n <= from
		}
		var batch []Record
		for {
			if err := ctx.Err(); err != nil {
				yield(Record{}, err)
				return
			}
			line, err := lr.next(skip)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Record{}, err)
				return
			}
			if line == nil {
				continue
			}
			batch, err = decodeBatch(line, from, batch[:0])
			if err != nil {
				if lr.atEnd() {
					return // a torn last line: it never counted
				}
				yield(Record{}, fmt.Errorf("%w: session %q, line %d: %v", ErrCorrupt, id, lr.line, err))
				return
			}
			for _, r := range batch {
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}
