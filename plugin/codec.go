package plugin

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"net/rpc"
	"sync"

	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// DefaultMaxMessageBytes is the largest message the host reads from a
// plugin when Config.MaxMessageBytes is zero.
const DefaultMaxMessageBytes = 16 << 20

// tooLargeError is a message from the plugin that the host skipped
// unread because it was over the limit.
type tooLargeError struct {
	size, limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the plugin sent a %d-byte message, over the host's limit of %d bytes (Config.MaxMessageBytes)", e.size, e.limit)
}

// msgReader hands a gob decoder the stream of gob messages from r one
// message at a time, and skips, without holding it, any message larger
// than limit: the decoder gets a *tooLargeError instead, and the next
// message after it, so the stream stays usable.
//
// A gob stream is a sequence of messages, each a byte count followed by
// that many bytes; the count is one byte below 128, or else a byte
// holding minus the length of the big-endian count that follows it.
// net/rpc's own gob codec reads whatever count it is sent into memory.
type msgReader struct {
	r     *bufio.Reader
	limit int64
	left  int64 // bytes of the current message, count included, not yet read
}

func (m *msgReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if m.left == 0 {
		if err := m.next(); err != nil {
			return 0, err
		}
	}
	if int64(len(p)) > m.left {
		p = p[:m.left]
	}
	n, err := m.r.Read(p)
	m.left -= int64(n)
	return n, err
}

// next reads the count of the next message, leaving it for the decoder,
// or skips the message if it is too large.
func (m *msgReader) next() error {
	first, err := m.r.Peek(1)
	if err != nil {
		return err
	}
	width, size := 1, uint64(first[0])
	if first[0] >= 0x80 {
		n := -int(int8(first[0]))
		if n > 8 {
			return errors.New("gob: corrupt message count")
		}
		width = 1 + n
		hdr, err := m.r.Peek(width)
		if err != nil {
			return err
		}
		size = 0
		for _, b := range hdr[1:] {
			size = size<<8 | uint64(b)
		}
	}
	if size > uint64(m.limit) {
		if size > math.MaxInt64-8 {
			return errors.New("gob: corrupt message count")
		}
		// Skip it: io.Discard reads through a small pooled buffer.
		if _, err := io.CopyN(io.Discard, m.r, int64(width)+int64(size)); err != nil {
			return err
		}
		return &tooLargeError{size: int64(size), limit: m.limit}
	}
	m.left = int64(width) + int64(size)
	return nil
}

// newDecoder returns a gob decoder of r's messages that skips any larger
// than limit bytes.
func newDecoder(r io.Reader, limit int64) *gob.Decoder {
	return gob.NewDecoder(&msgReader{r: bufio.NewReader(r), limit: limit})
}

// clientCodec is net/rpc's gob client codec with a limit on what it
// reads. A Plugin.Run reply over the limit is skipped and marked refused
// on the reply (see wire.RunReply.Refuse), so that call alone fails; a
// response header over it ends the connection, failing every call with
// the *tooLargeError.
type clientCodec struct {
	rwc    io.ReadWriteCloser
	dec    *gob.Decoder
	enc    *gob.Encoder
	encBuf *bufio.Writer
}

func newClientCodec(conn io.ReadWriteCloser, limit int64) *clientCodec {
	buf := bufio.NewWriter(conn)
	return &clientCodec{rwc: conn, dec: newDecoder(conn, limit), enc: gob.NewEncoder(buf), encBuf: buf}
}

func (c *clientCodec) WriteRequest(r *rpc.Request, body any) error {
	if err := c.enc.Encode(r); err != nil {
		return err
	}
	if err := c.enc.Encode(body); err != nil {
		return err
	}
	return c.encBuf.Flush()
}

func (c *clientCodec) ReadResponseHeader(r *rpc.Response) error { return c.dec.Decode(r) }

func (c *clientCodec) ReadResponseBody(body any) error {
	err := c.dec.Decode(body)
	var tl *tooLargeError
	if errors.As(err, &tl) {
		switch b := body.(type) {
		case nil: // net/rpc discards this body anyway
			return nil
		case *wire.RunReply:
			b.Refuse(tl.size)
			return nil
		}
	}
	return err
}

func (c *clientCodec) Close() error { return c.rwc.Close() }

// serverCodec is net/rpc's gob server codec with a limit on what it
// reads. A request body over the limit is skipped, and the request fails
// with the *tooLargeError after refused is told its size; a request
// header over it ends the connection.
type serverCodec struct {
	rwc     io.ReadWriteCloser
	dec     *gob.Decoder
	enc     *gob.Encoder
	encBuf  *bufio.Writer
	refused func(size int64)

	closeOnce sync.Once
	closeErr  error
}

func newServerCodec(conn io.ReadWriteCloser, limit int64, refused func(size int64)) *serverCodec {
	buf := bufio.NewWriter(conn)
	return &serverCodec{rwc: conn, dec: newDecoder(conn, limit), enc: gob.NewEncoder(buf), encBuf: buf, refused: refused}
}

func (c *serverCodec) ReadRequestHeader(r *rpc.Request) error { return c.dec.Decode(r) }

func (c *serverCodec) ReadRequestBody(body any) error {
	err := c.dec.Decode(body)
	var tl *tooLargeError
	if errors.As(err, &tl) {
		if body == nil { // net/rpc discards this body anyway
			return nil
		}
		c.refused(tl.size)
	}
	return err
}

func (c *serverCodec) WriteResponse(r *rpc.Response, body any) error {
	if err := c.enc.Encode(r); err != nil {
		// As net/rpc's codec: a header gob cannot encode breaks the
		// connection.
		if c.encBuf.Flush() == nil {
			_ = c.Close()
		}
		return err
	}
	if err := c.enc.Encode(body); err != nil {
		if c.encBuf.Flush() == nil {
			_ = c.Close()
		}
		return err
	}
	return c.encBuf.Flush()
}

func (c *serverCodec) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.rwc.Close() })
	return c.closeErr
}
