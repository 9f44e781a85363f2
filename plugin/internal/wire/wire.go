// Package wire holds what the plugin host and the plugin process share:
// the go-plugin handshake and the net/rpc messages they exchange.
//
// Messages travel as gob over net/rpc (so their types are exported);
// results travel as JSON inside them, because a ToolResult may carry
// values (Meta.Extra) that gob cannot encode without registration.
//
// Gob matches struct fields by name and skips those the receiver does not
// have, so a field may be added to a message without bumping the protocol
// version when its zero value means what the older side does: each new
// field below says so.
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
	// Job is the ID of the background job the call runs as
	// (toolloop.Call's field of that name); empty, as an older host
	// sends, for a call in the foreground.
	Job string

	// MaxOutputBytes is the call's output budget (toolloop.Call's field of
	// that name): the plugin cuts the text of the result to it before
	// sending it. 0, as a host older than the field sends, means none.
	MaxOutputBytes int
	// MaxReplyBytes is the largest message the host accepts: a plugin
	// whose encoded result is larger sends an execution_failed result
	// instead, which says so. 0, as an older host sends, means none.
	MaxReplyBytes int
}

// RunReply carries the call's result as JSON. Failures are results too:
// a *toolloop.ToolError's kind travels in the result's Error.
type RunReply struct {
	Result []byte
	// Stack is the stack of a tool that panicked, if one did.
	Stack string

	// refused is set by the host when it read the reply's size and
	// refused the reply as too large, instead of decoding it. Being
	// unexported, it never travels.
	refused int64
}

// Refuse records that the host did not decode the reply because its
// encoded size, size bytes, is over the host's limit.
func (r *RunReply) Refuse(size int64) { r.refused = size }

// Refused returns the size Refuse recorded, or 0.
func (r *RunReply) Refused() int64 { return r.refused }

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
