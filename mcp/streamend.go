package mcp

import (
	"context"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
)

// A call's own event stream (the answer to its POST, over streamable
// HTTP) that ends before the call's answer came lost that answer: the
// server may have run the call, so it is never sent again, but its
// failure is a lost connection ([ConnectionLostError]), not a protocol
// error. That happens to a session that expires, or that the server
// forgets, while the call runs. The SDK reports it with an error of its
// own making; what tells it apart from an error the server sent is that
// the stream ended.

type streamEndKey struct{}

// withStreamEnd makes the end of the event streams of the call's POST
// requests made on ctx set ended.
func withStreamEnd(ctx context.Context, ended *atomic.Bool) context.Context {
	return context.WithValue(ctx, streamEndKey{}, ended)
}

// noteStreamEnd makes the event stream of resp, answering r, report its
// end to the call r belongs to, if any. A stream the server ended before
// sending anything comes without a body.
func noteStreamEnd(r *http.Request, resp *http.Response) {
	ended, _ := r.Context().Value(streamEndKey{}).(*atomic.Bool)
	if ended == nil || r.Method != http.MethodPost || resp.StatusCode != http.StatusOK {
		return
	}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media != "text/event-stream" {
		return
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		ended.Store(true) // ended before it began
		return
	}
	resp.Body = &endBody{ReadCloser: resp.Body, ended: ended}
}

// endBody is an event stream's body that tells when it ends.
type endBody struct {
	io.ReadCloser
	ended *atomic.Bool
}

// Read implements [io.Reader].
func (b *endBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.ended.Store(true)
	}
	return n, err
}
