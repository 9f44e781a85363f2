package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// limits caps one message from a server, in bytes.
type limits struct {
	// text bounds the text a tool result keeps: its text blocks, its
	// embedded resources' text and its structured content. Text over it is
	// cut from the middle, as the loop cuts it.
	text int
	// bin bounds the base64 data of its images, audio and blobs; a block
	// whose data does not fit is left out.
	bin int
	// rest bounds everything else: the envelope, metadata, whole messages
	// that are not tool results (tool lists, notifications). A message
	// with more is refused.
	rest int
}

// kind is where a value sits in a message, which decides how it is cut.
type kind uint8

const (
	kEnv      kind = iota // copied whole, charged to rest
	kTop                  // the message
	kResult               // a response's result
	kContent              // result.content
	kBlock                // one of its blocks
	kResource             // a block's embedded resource
	kText                 // a block's or resource's text: cut in the middle
	kBinary               // base64 data: kept whole, or its block left out
	kData                 // result.structuredContent: cut item by item
)

const (
	// maxDepth is encoding/json's nesting limit.
	maxDepth = 10000
	// maxScalar bounds a number or literal.
	maxScalar = 4 << 10
	// markerReserve is room kept for the marker of a cut string.
	markerReserve = 96
)

// clipError is a message that cannot be passed on: it is not JSON, or it
// is too large where it cannot be cut.
type clipError struct{ msg string }

func (e *clipError) Error() string { return e.msg }

func syntaxErr(what string) error { return &clipError{"invalid JSON: " + what} }

// clipper copies one JSON-RPC message at a time from in to out, cutting
// it to its limits as it reads, so that no more than the limits (and a
// read buffer) is ever held, whatever the size of the message:
//
//   - a tool result's text is cut in the middle, keeping its head and its
//     tail around the loop's marker ("[... N of M bytes cut from the
//     middle of this output ...]"), first come first served;
//   - a content block whose image, audio or blob does not fit what is
//     left of the binary limit, or whose text got nothing of the text
//     limit, is left out, and the content ends with a text block saying
//     how many blocks were cut and why;
//   - structured content keeps its leading items and, where items were
//     left out, gains a "_truncated" note as the loop's truncation does;
//   - anything else over the rest limit makes the message a clipError.
//
// Only what it keeps is checked for validity: the decoder after it sees
// the rest.
type clipper struct {
	in  *bufio.Reader
	out []byte

	lim             limits
	text, bin, rest int // what is left of each limit

	read     int64  // bytes of the message consumed so far
	depth    int    // nesting
	id       []byte // the message's id, once read
	request  bool   // the message has a method: a request or notification
	dropping bool   // the current content block is being left out
	block    blockState
	tail     ring
}

// blockState follows the content block being copied.
type blockState struct {
	mark      int   // len(out) before it
	textSeen  bool  // it has non-empty text
	textKept  bool  // some of its text was kept
	binDenied int64 // base64 bytes it was refused
}

// reset prepares for a message; out keeps what the caller put there.
func (c *clipper) reset(lim limits) {
	c.lim = lim
	c.text, c.bin, c.rest = lim.text, lim.bin, lim.rest
	c.read, c.depth = 0, 0
	c.id, c.request, c.dropping = nil, false, false
}

// message copies one JSON value, the message, to out.
func (c *clipper) message(lim limits) error {
	c.reset(lim)
	return c.value(kTop)
}

// emit appends p to out, charged to the limit of k.
func (c *clipper) emit(k kind, p ...byte) error {
	if c.dropping {
		return nil
	}
	c.out = append(c.out, p...)
	return c.charge(k, len(p))
}

func (c *clipper) emitString(k kind, s string) error {
	if c.dropping {
		return nil
	}
	c.out = append(c.out, s...)
	return c.charge(k, len(s))
}

func (c *clipper) charge(k kind, n int) error {
	switch k {
	case kData:
		c.text -= n
	case kBinary:
		c.bin -= n
	default:
		c.rest -= n
		if c.rest < 0 {
			return &clipError{"the message is larger than the " + strconv.Itoa(c.lim.rest) +
				" bytes a client keeps besides tool output"}
		}
	}
	return nil
}

// appendRaw appends p to out without charging it.
func (c *clipper) appendRaw(p []byte) {
	if !c.dropping {
		c.out = append(c.out, p...)
	}
}

func (c *clipper) discard(n int) {
	_, _ = c.in.Discard(n)
	c.read += int64(n)
}

// peek skips white space and returns the next byte, unread.
func (c *clipper) peek() (byte, error) {
	for {
		b, err := c.in.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			c.read++
			continue
		}
		_ = c.in.UnreadByte()
		return b, nil
	}
}

// noEOF makes the end of input inside a message unexpected.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// chunk returns the buffered input, reading more if there is none.
func (c *clipper) chunk() ([]byte, error) {
	if c.in.Buffered() == 0 {
		if _, err := c.in.Peek(1); err != nil {
			return nil, noEOF(err)
		}
	}
	b, _ := c.in.Peek(c.in.Buffered())
	return b, nil
}

func (c *clipper) expect(want byte, k kind) error {
	b, err := c.peek()
	if err != nil {
		return noEOF(err)
	}
	if b != want {
		return syntaxErr("expected " + strconv.QuoteRune(rune(want)) + ", found " + strconv.QuoteRune(rune(b)))
	}
	c.discard(1)
	return c.emit(k, want)
}

func (c *clipper) value(k kind) error {
	b, err := c.peek()
	if err != nil {
		return noEOF(err)
	}
	switch b {
	case '{':
		if k != kTop && k != kResult && k != kBlock && k != kResource && k != kData {
			k = kEnv
		}
		return c.object(k)
	case '[':
		if k != kContent && k != kData {
			k = kEnv
		}
		return c.array(k)
	case '"':
		c.discard(1)
		switch k {
		case kText, kData:
			return c.cutText(k)
		case kBinary:
			return c.binary()
		}
		return c.copyString(kEnv)
	}
	if k != kData {
		k = kEnv
	}
	return c.scalar(k)
}

func (c *clipper) enter() error {
	c.depth++
	if c.depth > maxDepth {
		return syntaxErr("nested too deeply")
	}
	return nil
}

// child is the kind of the member named name of an object of kind k.
func child(k kind, name []byte) kind {
	if k == kData {
		return kData
	}
	switch {
	case k == kTop && string(name) == "result":
		return kResult
	case k == kResult && string(name) == "content":
		return kContent
	case k == kResult && string(name) == "structuredContent":
		return kData
	case (k == kBlock || k == kResource) && string(name) == "text":
		return kText
	case k == kBlock && string(name) == "data", k == kResource && string(name) == "blob":
		return kBinary
	case k == kBlock && string(name) == "resource":
		return kResource
	}
	return kEnv
}

func (c *clipper) object(k kind) error {
	c.discard(1)
	if err := c.enter(); err != nil {
		return err
	}
	defer func() { c.depth-- }()
	if err := c.emit(k, '{'); err != nil {
		return err
	}
	kept, skipped := 0, 0
	b, err := c.peek()
	if err != nil {
		return noEOF(err)
	}
	for b != '}' {
		if b != '"' {
			return syntaxErr("expected an object key, found " + strconv.QuoteRune(rune(b)))
		}
		if k == kData && c.text <= 0 {
			c.discard(1)
			if err := c.skipString(); err != nil {
				return err
			}
			if err := c.expectSkip(':'); err != nil {
				return err
			}
			if err := c.skipValue(); err != nil {
				return err
			}
			skipped++
		} else {
			if kept > 0 {
				if err := c.emit(k, ','); err != nil {
					return err
				}
			}
			c.discard(1)
			var name []byte
			if k == kData {
				err = c.cutText(kData)
			} else {
				name, err = c.key()
			}
			if err != nil {
				return err
			}
			if err := c.expect(':', k); err != nil {
				return err
			}
			start := len(c.out)
			isID := k == kTop && string(name) == "id"
			c.request = c.request || k == kTop && string(name) == "method"
			if err := c.value(child(k, name)); err != nil {
				return err
			}
			if isID {
				c.id = bytes.Clone(c.out[start:])
			}
			kept++
		}
		if b, err = c.afterItem('}'); err != nil {
			return err
		}
	}
	c.discard(1)
	if skipped > 0 {
		if kept > 0 {
			if err := c.emit(kEnv, ','); err != nil {
				return err
			}
		}
		if err := c.emitString(kEnv, `"_truncated":`+itemsNote(skipped, kept+skipped)); err != nil {
			return err
		}
	}
	return c.emit(k, '}')
}

func itemsNote(cut, total int) string {
	return strconv.Quote(strconv.Itoa(cut) + " of " + strconv.Itoa(total) + " items cut to fit the output budget")
}

func (c *clipper) array(k kind) error {
	c.discard(1)
	if err := c.enter(); err != nil {
		return err
	}
	defer func() { c.depth-- }()
	if err := c.emit(k, '['); err != nil {
		return err
	}
	elem := kEnv
	switch k {
	case kContent:
		elem = kBlock
	case kData:
		elem = kData
	}
	kept, skipped := 0, 0
	var textCut, binCut int
	var binBytes int64
	b, err := c.peek()
	if err != nil {
		return noEOF(err)
	}
	for b != ']' {
		switch {
		case k == kData && c.text <= 0:
			if err := c.skipValue(); err != nil {
				return err
			}
			skipped++
		case k == kContent:
			c.block = blockState{mark: len(c.out)}
			text, bin, rest := c.text, c.bin, c.rest
			if kept > 0 {
				if err := c.emit(k, ','); err != nil {
					return err
				}
			}
			if err := c.value(kBlock); err != nil {
				return err
			}
			drop := c.dropping || (c.block.textSeen && !c.block.textKept)
			switch {
			case c.dropping:
				binCut++
				binBytes += c.block.binDenied
			case drop:
				textCut++
			default:
				kept++
			}
			if drop {
				c.dropping = false
				c.out = c.out[:c.block.mark]
				c.text, c.bin, c.rest = text, bin, rest
			}
		default:
			if kept > 0 {
				if err := c.emit(k, ','); err != nil {
					return err
				}
			}
			if err := c.value(elem); err != nil {
				return err
			}
			kept++
		}
		if b, err = c.afterItem(']'); err != nil {
			return err
		}
	}
	c.discard(1)
	var note string
	switch {
	case textCut+binCut > 0:
		note = c.blocksNote(textCut, binCut, binBytes, kept)
	case skipped > 0:
		note = `{"_truncated":` + itemsNote(skipped, kept+skipped) + `}`
	}
	if note != "" {
		if kept > 0 {
			note = "," + note
		}
		if err := c.emitString(kEnv, note); err != nil {
			return err
		}
	}
	return c.emit(k, ']')
}

// blocksNote is the text block that ends a result's content when blocks
// were left out.
func (c *clipper) blocksNote(textCut, binCut int, binBytes int64, kept int) string {
	msg := "[... " + strconv.Itoa(textCut+binCut) + " of " + strconv.Itoa(textCut+binCut+kept) +
		" content blocks cut to fit the output budget:"
	if textCut > 0 {
		msg += " " + strconv.Itoa(textCut) + " with text past the " + strconv.Itoa(c.lim.text) + " bytes of text a result keeps;"
	}
	if binCut > 0 {
		msg += " " + strconv.Itoa(binCut) + " with " + strconv.FormatInt(binBytes, 10) +
			" bytes of base64 data over the " + strconv.Itoa(c.lim.bin) + " bytes of images, audio and blobs a result keeps;"
	}
	msg = msg[:len(msg)-1] + " ...]"
	q, _ := json.Marshal(msg)
	return `{"type":"text","text":` + string(q) + `}`
}

// key copies an object key and returns it, if it is short and plain, as
// a slice of out valid until out grows.
func (c *clipper) key() ([]byte, error) {
	start := len(c.out)
	if err := c.copyString(kEnv); err != nil {
		return nil, err
	}
	if c.dropping {
		return nil, nil
	}
	k := c.out[start:]
	if len(k) > 66 || bytes.IndexByte(k, '\\') >= 0 {
		return nil, nil
	}
	return k[1 : len(k)-1], nil
}

// errorResponse is a JSON-RPC error answering the request id.
func errorResponse(id []byte, msg string) ([]byte, error) {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{-32603, msg}})
}

// afterItem reads past the comma after a member or element of a container
// that ends with close, and returns the byte that starts the next one, or
// close (not consumed) at the container's end.
func (c *clipper) afterItem(close byte) (byte, error) {
	b, err := c.peek()
	if err != nil {
		return 0, noEOF(err)
	}
	switch b {
	case ',':
		c.discard(1)
		if b, err = c.peek(); err != nil {
			return 0, noEOF(err)
		}
		return b, nil
	case close:
		return b, nil
	}
	return 0, syntaxErr("expected ',' or '" + string(rune(close)) + "', found " + strconv.QuoteRune(rune(b)))
}
