package mcp

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrClientGone is returned by [Serve], [Server.ServeStdio] and [Server.Run]
// when the client went away without ending the session as the protocol
// asks: a write to it failed (over stdio, it closed its end of stdout or
// died), or its end of the connection closed (EOF on stdin) while calls
// were in flight. The calls in flight are cancelled. A client that closes
// stdin with no call in flight ends the session, and nil is returned.
var ErrClientGone = errors.New("mcp: the client went away")

// clientGone records why the client of one session is gone, if it is.
type clientGone struct {
	mu    sync.Mutex
	cause error
}

func (g *clientGone) set(cause error) {
	g.mu.Lock()
	if g.cause == nil {
		g.cause = cause
	}
	g.mu.Unlock()
}

// err returns nil, or an error that is [ErrClientGone] and says why.
func (g *clientGone) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cause == nil {
		return nil
	}
	return &goneError{g.cause}
}

// goneError is ErrClientGone with its cause, which is not kept for
// errors.Is: how the connection failed is the transport's affair.
type goneError struct{ cause error }

func (e *goneError) Error() string        { return ErrClientGone.Error() + ": " + e.cause.Error() }
func (e *goneError) Is(target error) bool { return target == ErrClientGone }

// closedErr reports whether a read error means the client's end of the
// connection closed, rather than that it sent something wrong.
func closedErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed)
}

// stdioLike reports whether t may write to the process's stdout or
// stderr, where a write to a closed pipe kills a Go program with SIGPIPE
// unless SIGPIPE is caught (see catchSIGPIPE).
func stdioLike(t sdk.Transport) bool {
	switch t.(type) {
	case *sdk.StdioTransport, *sdk.IOTransport:
		return true
	}
	return false
}
