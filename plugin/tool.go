package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"net/rpc"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// deadlineSlack is how long after the host's deadline the plugin's own
// deadline for a call falls. The host cancels the call itself at its
// deadline; the plugin's deadline is only a backstop should the Cancel
// never arrive, and must not win the race, or a timeout would come back
// as the plugin's result instead of as the host's timeout.
const deadlineSlack = time.Second

// remoteTool is a tool that runs in the plugin process.
type remoteTool struct {
	src  *Source
	spec toolloop.ToolSpec
}

// Spec implements [toolloop.Tool].
func (t *remoteTool) Spec() toolloop.ToolSpec { return t.spec }

// Run implements [toolloop.Tool].
func (t *remoteTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	return t.src.run(ctx, call)
}

// run runs a call in the plugin. A call that never reached the plugin,
// because the process had died unnoticed, is tried once more on a fresh
// process; a call that did reach it never is.
func (s *Source) run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	res, err := s.runOnce(ctx, call)
	if err == errNotSent {
		res, err = s.runOnce(ctx, call)
		if err == errNotSent {
			err = toolloop.Errorf(toolloop.KindExecutionFailed, "plugin %q stopped before %s could run", s.name, call.Name)
		}
	}
	return res, err
}

// errNotSent: the call never reached the plugin.
var errNotSent = errors.New("plugin: call not sent")

func (s *Source) runOnce(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	// Nothing of a call starts once its context is done: not a start of
	// the plugin, not the call.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := s.acquire(ctx)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, ErrClosed):
			return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "plugin %q is closed", s.name)
		}
		return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "plugin %q could not be started: %v", s.name, err)
	}
	token := s.tokens.Add(1)
	args := wire.Run{
		Token: token, Tool: call.Name, ID: call.ID, Arguments: call.Arguments,
		Annotations: call.Annotations, Source: string(call.Source), SourceName: call.SourceName,
		RunID: call.RunID, Turn: call.Turn, Job: call.Job,
		MaxOutputBytes: max(call.MaxOutputBytes, 0), MaxReplyBytes: int(s.maxMessageBytes()),
	}
	if call.Reporter != nil {
		args.Report = true
		s.calls.Store(token, call)
		defer s.calls.Delete(token)
	}
	if dl, ok := ctx.Deadline(); ok {
		args.Deadline = dl.Add(deadlineSlack)
	}
	// Starting the plugin may have taken a while: look again, last
	// thing before the call is sent.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var reply wire.RunReply
	rc := p.rpc.Go(wire.MethodRun, args, &reply, make(chan *rpc.Call, 1))
	select {
	case <-rc.Done:
	case <-ctx.Done():
		// Do not wait: tell the plugin, and let a watchdog stop it if the
		// call does not end. The buffered channel lets net/rpc deliver
		// the late answers without anyone reading them.
		p.rpc.Go(wire.MethodCancel, wire.Cancel{Token: token}, &wire.Empty{}, make(chan *rpc.Call, 1))
		s.watchHang(p, rc, call)
		return nil, ctx.Err()
	}
	if rc.Error != nil {
		var se rpc.ServerError
		if errors.As(rc.Error, &se) {
			return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "plugin %q: %s", s.name, string(se))
		}
		// The connection is gone: the process died or is being stopped.
		p.stop()
		var tl *tooLargeError
		if errors.As(rc.Error, &tl) {
			return nil, toolloop.Errorf(toolloop.KindExecutionFailed,
				"plugin %q was stopped while %s ran: %v; it will be started again for the next call", s.name, call.Name, tl)
		}
		if errors.Is(rc.Error, rpc.ErrShutdown) && !s.isClosed() {
			// The client was already shut down when the call was sent:
			// it never reached the plugin.
			return nil, errNotSent
		}
		if s.isClosed() {
			return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "plugin %q was closed while %s ran", s.name, call.Name)
		}
		return nil, toolloop.Errorf(toolloop.KindExecutionFailed,
			"plugin %q stopped while %s ran (%s); it will be started again for the next call", s.name, call.Name, orDefault(p.exit, rc.Error.Error()))
	}
	if n := reply.Refused(); n > 0 {
		return nil, toolloop.Errorf(toolloop.KindExecutionFailed,
			"plugin %q sent a %d-byte result for %s, over the host's limit of %d bytes (Config.MaxMessageBytes); it was not read",
			s.name, n, call.Name, s.maxMessageBytes())
	}
	var r toolloop.ToolResult
	if err := json.Unmarshal(reply.Result, &r); err != nil {
		return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "plugin %q sent a result for %s that does not decode: %v", s.name, call.Name, err)
	}
	if reply.Stack != "" && r.Error != nil {
		return nil, &remotePanic{err: r.Error, stack: reply.Stack}
	}
	// A plugin built with Serve has cut the text to the budget already;
	// one that ignores it is cut here, so the loop holds no more.
	if call.MaxOutputBytes > 0 {
		return cutResult(&r, call.MaxOutputBytes), nil
	}
	return &r, nil
}

// remotePanic is the failure of a tool that panicked inside the plugin. It
// hands the loop the stack (PanicStack) for the completion event and keeps
// the *toolloop.ToolError (kind panic) for the model.
type remotePanic struct {
	err   *toolloop.ToolError
	stack string
}

func (p *remotePanic) Error() string      { return p.err.Error() }
func (p *remotePanic) Unwrap() error      { return p.err }
func (p *remotePanic) PanicStack() string { return p.stack }

// watchHang stops the process if a call whose context is done has not
// returned within the hang timeout.
func (s *Source) watchHang(p *process, rc *rpc.Call, call *toolloop.Call) {
	d := s.cfg.HangTimeout
	if d < 0 {
		return
	}
	if d == 0 {
		d = DefaultHangTimeout
	}
	if !s.track() {
		return
	}
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-rc.Done:
		case <-p.dead:
		case <-t.C:
			s.logger().Warn("plugin: a cancelled call is still running; stopping the plugin",
				"plugin", s.name, "tool", call.Name, "call_id", call.ID, "after", d)
			p.stop()
		}
	}()
}

func (s *Source) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
