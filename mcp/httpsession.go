package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// What a remote server's HTTP exchanges say about its session, beyond
// what the SDK makes of them:
//
//   - a request whose connection is refused, or that the server answers
//     with 404 (as the protocol says a server that forgot a session must),
//     or with 400 and the JSON-RPC code -32000 (as servers built on
//     the TypeScript SDK's examples, server-everything among them, do),
//     while carrying a session ID, ends that session: the server is gone,
//     or restarted, and the next request starts a new one. Such a request
//     provably was not processed, so a call whose request it was is sent
//     again, once, on a new session.
//   - an event stream that breaks (its connection fails, rather than
//     ending) makes the source check at once whether the server is still
//     there (see probeTimeout); if its address refuses connections, the
//     session ends, and the calls in flight fail at once, rather than when
//     the SDK's attempts to resume the stream run out (about 15 to 25
//     seconds). A server that is still there is left to the SDK, which
//     resumes the stream as it was made to.

// probeTimeout bounds the check that a remote server whose event stream
// broke is still there. A server that does not answer within it is left
// to the SDK's own reconnection.
const probeTimeout = 500 * time.Millisecond

// sessionIDHeader carries the session's ID in streamable HTTP.
const sessionIDHeader = "Mcp-Session-Id"

// codeSessionGone is the JSON-RPC code of the 400 answer some servers give
// for a session they do not know.
const codeSessionGone = -32000

// errSessionGone is the cause of a session the server no longer knows.
var errSessionGone = errors.New("the server no longer knows the session (it restarted, or ended it)")

// callState is what the HTTP transport learns about the requests of one
// call.
type callState struct {
	// unsent: the call's request provably was not processed (its
	// connection was refused, or the server did not know its session).
	unsent atomic.Bool
	// posted is set by the first POST on the call's context: the call's
	// own request, which the SDK sends before any other for the call
	// (the resumption of its event stream, its cancellation).
	posted atomic.Bool
	// broken: an event stream of the call broke.
	broken atomic.Bool
}

type callStateKey struct{}

func withCallState(ctx context.Context, st *callState) context.Context {
	return context.WithValue(ctx, callStateKey{}, st)
}

// observe records what resp or err says about the session the request
// carried, and about the call it belongs to: only the call's own request,
// not a later one made for it, can say the call was not processed.
func (t *clipTransport) observe(r *http.Request, resp *http.Response, err error) {
	st, _ := r.Context().Value(callStateKey{}).(*callState)
	own := st != nil && r.Method == http.MethodPost && st.posted.CompareAndSwap(false, true)
	sid := r.Header.Get(sessionIDHeader)
	var gone error
	switch {
	case err != nil && refused(err):
		gone = err
	case err == nil && sid != "" && sessionMissing(resp):
		gone = errSessionGone
	default:
		return
	}
	if st != nil && own {
		st.unsent.Store(true)
	}
	if sid != "" { // else there is no session yet (it is being started), or none at all
		t.src.sessionGone(sid, gone)
	}
}

// refused reports whether err is a failure to connect: the request was
// never sent.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// sessionMissing reports whether resp answers that the server does not
// know the session. It may replace resp.Body, having read it.
func sessionMissing(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
	default:
		return false
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var msg struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Error != nil && msg.Error.Code == codeSessionGone
}

// sessionGone ends the current session if it is the one of ID sid (or
// whatever session there is, when sid is empty: a server that refuses
// connections has none), for the given cause.
func (s *Source) sessionGone(sid string, cause error) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil || sid != "" && sess.cs.ID() != sid {
		return
	}
	s.logger.Warn("mcp server session lost", "err", cause)
	s.ended(sess, cause)
}

// probe checks whether the server is still there after an event stream
// of the session sid broke, and ends the session if its address refuses
// connections. A server that is dying may still accept a connection and
// then drop it: such an answer is asked again, until the address refuses
// connections, answers, or probeTimeout has passed.
func (s *Source) probe(sid string) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, s.cfg.URL, nil)
		if err != nil {
			return
		}
		resp, err := s.http.Do(req)
		switch {
		case err == nil:
			_ = resp.Body.Close()
			return // it answers
		case refused(err):
			s.sessionGone(sid, err)
			return
		}
		t := time.NewTimer(probeAgain)
		select {
		case <-ctx.Done():
			t.Stop()
			return // it does not answer: leave it to the SDK
		case <-t.C:
		}
	}
}

// probeAgain is the pause between two probes of a server that dropped
// the connection.
const probeAgain = 20 * time.Millisecond

// watchedBody is an event stream's body that tells when it breaks.
type watchedBody struct {
	io.ReadCloser
	once   sync.Once
	broken func()
}

// Read implements [io.Reader].
func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.once.Do(b.broken)
	}
	return n, err
}

// watch makes the event stream of resp, answering r, report when it
// breaks (see probe).
func (t *clipTransport) watch(r *http.Request, resp *http.Response) {
	st, _ := r.Context().Value(callStateKey{}).(*callState)
	sid := r.Header.Get(sessionIDHeader)
	resp.Body = &watchedBody{ReadCloser: resp.Body, broken: func() {
		if r.Context().Err() != nil {
			return // the client gave up on it
		}
		if st != nil {
			st.broken.Store(true)
		}
		t.src.probe(sid)
	}}
}
