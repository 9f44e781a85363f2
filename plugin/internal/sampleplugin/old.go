package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/rpc"
	"os"
	"strings"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// serveOld serves as a plugin built before the host sent output budgets
// and limits would, or a hostile one: it decodes Run as the message was
// then (OldRun), so it never sees the budget, and sends results whole.
// Its tools are implemented here, on the protocol, without Serve.
func serveOld() {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: wire.Handshake,
		Plugins:         goplugin.PluginSet{wire.PluginName: oldPlugin{}},
	})
}

type oldPlugin struct{}

func (oldPlugin) Server(b *goplugin.MuxBroker) (any, error) { return &OldSession{broker: b}, nil }

func (oldPlugin) Client(*goplugin.MuxBroker, *rpc.Client) (any, error) {
	return nil, errors.New("the plugin side only")
}

// OldRun is wire.Run as it was before MaxOutputBytes and MaxReplyBytes.
type OldRun struct {
	Token       uint64
	Report      bool
	Deadline    time.Time
	Tool        string
	ID          string
	Arguments   []byte
	Annotations toolloop.Annotations
	Source      string
	SourceName  string
	RunID       string
	Turn        int
}

// OldSession serves the protocol's Plugin service.
type OldSession struct {
	broker *goplugin.MuxBroker
	mu     sync.Mutex
	host   *rpc.Client
}

// Hello implements Plugin.Hello.
func (s *OldSession) Hello(h wire.Hello, reply *wire.HelloReply) error {
	conn, err := s.broker.Dial(h.CallbackID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.host = rpc.NewClient(conn)
	s.mu.Unlock()
	for _, name := range []string{"big", "huge_error", "big_report", "pid"} {
		reply.Specs = append(reply.Specs, toolloop.ToolSpec{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	reply.PID = os.Getpid()
	return nil
}

// Cancel implements Plugin.Cancel.
func (s *OldSession) Cancel(wire.Cancel, *wire.Empty) error { return nil }

// Run implements Plugin.Run: big returns bytes of text whatever the
// budget; huge_error fails the RPC itself with an error message of that
// many bytes; big_report reports partial output of that many bytes, then
// "small", and returns "reported"; pid returns the process's ID.
func (s *OldSession) Run(r OldRun, reply *wire.RunReply) error {
	var in struct {
		Bytes int `json:"bytes"`
	}
	_ = json.Unmarshal(r.Arguments, &in)
	var res *toolloop.ToolResult
	switch r.Tool {
	case "big":
		res = toolloop.TextResult(strings.Repeat("x", in.Bytes))
	case "huge_error":
		return errors.New(strings.Repeat("e", in.Bytes))
	case "big_report":
		s.mu.Lock()
		host := s.host
		s.mu.Unlock()
		err := host.Call(wire.MethodReport, wire.Report{Token: r.Token, Partial: strings.Repeat("p", in.Bytes)}, &wire.Empty{})
		if err == nil {
			return errors.New("the host took an oversize report")
		}
		if err := host.Call(wire.MethodReport, wire.Report{Token: r.Token, Partial: "small"}, &wire.Empty{}); err != nil {
			return err
		}
		res = toolloop.TextResult("reported")
	default:
		res = toolloop.TextResult(fmt.Sprint(os.Getpid()))
	}
	b, err := json.Marshal(res)
	reply.Result = b
	return err
}
