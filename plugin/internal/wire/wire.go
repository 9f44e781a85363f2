// Package wire holds what the plugin host and the plugin process share:
// the go-plugin handshake and the net/rpc messages they exchange.
//
// Messages travel as gob over net/rpc (so their types are exported);
// results travel as JSON inside them, because a ToolResult may carry
// values (Meta.Extra) that gob cannot encode without registration.
package wire

import (
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/toolloop/toolloop"
)

// Handshake is the go-plugin handshake both sides must agree on. Bump
// ProtocolVersion when a message below changes incompatibly.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "TOOLLOOP_PLUGIN",
	MagicCookieValue: "b4d2e1c7-toolloop-capability-plugin",
}

// PluginName is the name the plugin's tool service is dispensed under.
const PluginName = "tools"

// RPC method names. The plugin serves Plugin.*; the host serves Host.*
// over a broker stream the plugin dials during Hello.
const (
	MethodHello  = "Plugin.Hello"
	MethodRun    = "Plugin.Run"
	MethodCancel = "Plugin.Cancel"
	MethodReport = "Host.Report"
	HostService  = "Host"
)

// Empty is an empty argument or reply.
type Empty struct{}

// Hello opens a session: the plugin dials the host's callback stream and
// answers with its tools.
type Hello struct {
	// CallbackID is the broker stream the host serves Host.* on.
	CallbackID uint32
}

// HelloReply lists the plugin's tools.
type HelloReply struct {
	Specs []toolloop.ToolSpec
	PID   int
}

// Run asks the plugin to run one call.
type Run struct {
	// Token identifies the call in Cancel and Report.
	Token uint64
	// Report says whether the host wants progress and partial output.
	Report bool
	// Deadline, if set, bounds the call in the plugin too, as a backstop
	// in case the host's Cancel never arrives.
	Deadline time.Time

	Tool        string
	ID          string
	Arguments   []byte
	Annotations toolloop.Annotations
	Source      string
	SourceName  string
	RunID       string
	Turn        int
}

// RunReply carries the call's result as JSON. Failures are results too:
// a *toolloop.ToolError's kind travels in the result's Error.
type RunReply struct {
	Result []byte
	// Stack is the stack of a tool that panicked, if one did.
	Stack string
}

// Cancel cancels the context of a running call.
type Cancel struct {
	Token uint64
}

// Report is progress or partial output of a running call.
type Report struct {
	Token    uint64
	Progress *toolloop.Progress
	Partial  string
}
