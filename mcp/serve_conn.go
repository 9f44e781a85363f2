package mcp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// dropCancelled is a server transport whose connections send no reply to
// a request the client cancelled, as the protocol asks: the SDK would
// send the handler's result anyway. They also record in gone when the
// client went away.
type dropCancelled struct {
	sdk.Transport
	gone *clientGone
}

func (t *dropCancelled) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelConn{Connection: c, inflight: make(map[jsonrpc.ID]bool), gone: t.gone}, nil
}

// cancelConn tracks the requests in flight, from their arrival to their
// reply, and marks those the client cancels; a marked request's reply is
// not written. Only requests in flight are tracked, so the set is as
// large as the calls running, and an ID that a client uses again after
// its reply is not mistaken for a cancelled one.
type cancelConn struct {
	sdk.Connection

	mu       sync.Mutex
	inflight map[jsonrpc.ID]bool // true: cancelled
	gone     *clientGone
}

func (c *cancelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil && ctx.Err() == nil && closedErr(err) {
		c.mu.Lock()
		if len(c.inflight) > 0 {
			c.gone.set(err)
		}
		c.mu.Unlock()
	}
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
		switch {
		case req.IsCall():
			renameTaskCall(req)
			c.mu.Lock()
			c.inflight[req.ID] = false
			c.mu.Unlock()
		case req.Method == "notifications/cancelled":
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					c.mu.Lock()
					if _, ok := c.inflight[id]; ok {
						c.inflight[id] = true
					}
					c.mu.Unlock()
				}
			}
		}
	}
	return msg, err
}

func (c *cancelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		cancelled := c.inflight[resp.ID]
		delete(c.inflight, resp.ID)
		c.mu.Unlock()
		if cancelled {
			return nil
		}
	}
	err := c.Connection.Write(ctx, msg)
	if err != nil && ctx.Err() == nil {
		// The SDK, seeing the write fail, cancels the calls in flight
		// and closes the connection.
		c.gone.set(err)
	}
	return err
}
