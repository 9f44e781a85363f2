package plugin

import (
	"context"
	"net/rpc"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// rpcPlugin is the go-plugin Plugin of both sides: in the plugin process
// it serves a session; in the host it wraps the dispensed RPC client.
//
// The transport is go-plugin's net/rpc protocol (gob over a yamux
// multiplexed unix socket): it needs no generated code, and plugins are
// Go programs anyway. Calls from the plugin back to the host (progress
// and partial output) go over a second RPC connection on a broker stream
// that the host serves and the plugin dials during Hello.
type rpcPlugin struct {
	srv *server // plugin side only
}

// Server implements goplugin.Plugin for the plugin process.
func (p *rpcPlugin) Server(b *goplugin.MuxBroker) (any, error) {
	return &session{
		srv:     p.srv,
		broker:  b,
		running: map[uint64]context.CancelFunc{},
		early:   map[uint64]bool{},
	}, nil
}

// Client implements goplugin.Plugin for the host.
func (p *rpcPlugin) Client(b *goplugin.MuxBroker, c *rpc.Client) (any, error) {
	return &dispensed{broker: b, rpc: c}, nil
}

// dispensed is the host's handle on a plugin's tool service.
type dispensed struct {
	broker *goplugin.MuxBroker
	rpc    *rpc.Client
}

// callback is what the host serves to the plugin. Its exported methods
// are exactly its RPC methods.
type callback struct {
	src *Source
}

// Report implements the Host.Report RPC: it hands a report to the
// host-side call it belongs to, which turns it into the same events as a
// built-in tool's reports. Reports for calls that have returned are
// dropped.
func (cb *callback) Report(r wire.Report, _ *wire.Empty) error {
	v, ok := cb.src.calls.Load(r.Token)
	if !ok {
		return nil
	}
	call := v.(*toolloop.Call)
	defer func() {
		if p := recover(); p != nil {
			cb.src.logger().Error("plugin: a reporter panicked; report dropped", "plugin", cb.src.name, "panic", p)
		}
	}()
	if r.Progress != nil {
		call.ReportProgress(*r.Progress)
	} else {
		call.ReportPartial(r.Partial)
	}
	return nil
}
