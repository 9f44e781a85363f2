package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// metaKind is the _meta key of a failed result's [toolloop.ErrorKind].
const metaKind = "toolloop/kind"

// serveCall is a call whose client asked for progress.
type serveCall struct {
	// ctx is the request's: the SDK sends a notification made under it on
	// the request's own stream (streamable HTTP).
	ctx   context.Context
	ss    *sdk.ServerSession
	token any

	mu   sync.Mutex
	last float64
}

// callTool is the SDK handler of every tool: it runs the call through the
// loop and turns its result into MCP's.
func (s *Server) callTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	runID, n := s.nextRun()
	if gone := s.requestGone(req); gone != nil {
		cctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(gone, func() { cancel(ErrClientGone) })
		defer func() {
			stop()
			cancel(nil)
		}()
		ctx = cctx
	}
	return s.runCall(ctx, req, runID, n, false), nil
}

// requestGone returns the context of the HTTP POST that carried req, on
// the stateful handler: when it ends before the call does, the client
// went away (its connection closed), and, as the call's stream cannot be
// resumed without a ServeOptions.HTTP.EventStore, nobody can get its
// result: the call is cancelled. It returns nil for other transports.
func (s *Server) requestGone(req *sdk.CallToolRequest) context.Context {
	if req.Extra == nil || req.Extra.Header == nil {
		return nil
	}
	tok := req.Extra.Header.Get(headerRequest)
	if tok == "" {
		return nil
	}
	v, ok := s.requests.Load(tok)
	if !ok {
		return nil
	}
	return v.(context.Context)
}

// resumable reports whether a client may resume an HTTP call's stream
// after its connection ends (an EventStore is set): then a call goes on
// when its POST ends.
func (s *Server) resumable() bool { return s.opts.HTTP != nil && s.opts.HTTP.EventStore != nil }

// nextRun numbers a call: its run ID and the number.
func (s *Server) nextRun() (runID, n string) {
	n = strconv.FormatUint(s.seq.Add(1), 10)
	return "mcp_" + n, n
}

// runCall runs a served call; inTask says it runs as a task (see
// startTask), whose progress becomes the task's statusMessage.
func (s *Server) runCall(ctx context.Context, req *sdk.CallToolRequest, runID, n string, inTask bool) *sdk.CallToolResult {
	tc := toolloop.ToolCall{ID: "call_" + n, Name: req.Params.Name, Arguments: req.Params.Arguments}
	loop := s.plain
	if inTask {
		loop = s.observed
	}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		s.calls.Store(runID, &serveCall{ctx: ctx, ss: req.Session, token: tok})
		defer s.calls.Delete(runID)
		loop = s.observed
	}

	var res *toolloop.ToolResult
	if req.Params.RequestState != "" {
		var out *sdk.CallToolResult
		res, out = s.resumeApproval(ctx, req, loop, runID, tc)
		if out != nil {
			return out
		}
	} else {
		var decision *toolloop.Approval
		switch {
		case !s.hasApprover && !canElicit(req.Session):
			// Settled before the call runs: used only if the guard asks.
			decision = &toolloop.Approval{Reason: "the call needs approval, and the MCP client cannot give one (it did not declare the elicitation capability)"}
		case !s.hasApprover && inTask && multiRoundTrip(req.Session):
			// Its client answers approvals by calling again, which a
			// task's call cannot.
			decision = &toolloop.Approval{Reason: "the call needs approval, which a task cannot ask this MCP client for; call the tool without a task"}
		}
		var pending *toolloop.PendingCall
		res, pending = loop.RunCall(ctx, runID, 1, tc, decision)
		if pending != nil {
			var out *sdk.CallToolResult
			res, out = s.approve(ctx, req, loop, runID, tc, pending)
			if out != nil {
				return out
			}
		}
	}
	if ctx.Err() != nil {
		// The client cancelled (or the session ended): whatever the tool
		// made is not sent. Over Run's transports the reply is dropped
		// altogether (see dropCancelled).
		return canceledResult()
	}
	return toCallResult(res)
}

func canceledResult() *sdk.CallToolResult {
	return &sdk.CallToolResult{
		IsError: true,
		Content: []sdk.Content{&sdk.TextContent{Text: "the call was canceled"}},
		Meta:    sdk.Meta{metaKind: string(toolloop.KindCanceled)},
	}
}

// onEvent is the OnEvent of the loop that runs calls with a progress
// token: a call's progress becomes the client's notifications/progress.
func (s *Server) onEvent(e toolloop.Event) {
	if e.Type == toolloop.EventProgress && e.Progress != nil && e.ParentRunID == "" && e.ParentCallID == "" {
		if v, ok := s.calls.Load(e.RunID); ok {
			v.(*serveCall).progress(e.Progress, s)
		}
		s.tasks.note(e.RunID, e.Progress.Message)
	}
	if e.Type == toolloop.EventPartialResult && e.ParentRunID == "" && e.ParentCallID == "" {
		s.tasks.note(e.RunID, e.Text)
	}
	if s.userOnEvent != nil {
		s.userOnEvent(e)
	}
}

// progress sends p. MCP asks that a call's progress value never goes
// down, so a report below the last one sent keeps the last.
func (c *serveCall) progress(p *toolloop.Progress, s *Server) {
	c.mu.Lock()
	done := max(p.Done, c.last)
	c.last = done
	c.mu.Unlock()
	err := c.ss.NotifyProgress(c.ctx, &sdk.ProgressNotificationParams{
		ProgressToken: c.token, Progress: done, Total: p.Total, Message: p.Message,
	})
	if err != nil && c.ctx.Err() == nil {
		s.logger.Debug("mcp: serve: progress notification failed", "err", err)
	}
}

// toCallResult turns a loop's result into MCP's:
//
//   - text, image and audio blocks become blocks of the same type;
//   - a resource with text or bytes becomes an embedded resource, one with
//     only a URI a resource link;
//   - a JSON block becomes a text block with its JSON, and, if it is the
//     only JSON block and holds an object, the result's structuredContent
//     (a single text block that the tool marked application/json and that
//     holds an object is structured content too);
//   - reasoning blocks are left out;
//   - an error result has isError, the loop's error text (its content, or
//     its message when it has none), and its kind in _meta["toolloop/kind"].
func toCallResult(r *toolloop.ToolResult) *sdk.CallToolResult {
	out := &sdk.CallToolResult{Content: make([]sdk.Content, 0, len(r.Content))}
	var structured json.RawMessage
	objects := 0
	for _, c := range r.Content {
		switch c.Type {
		case toolloop.ContentText:
			out.Content = append(out.Content, &sdk.TextContent{Text: c.Text})
		case toolloop.ContentJSON:
			out.Content = append(out.Content, &sdk.TextContent{Text: string(c.JSON)})
			if isObject(c.JSON) {
				structured, objects = c.JSON, objects+1
			}
		case toolloop.ContentImage:
			out.Content = append(out.Content, &sdk.ImageContent{Data: c.Data, MIMEType: c.MIMEType})
		case toolloop.ContentAudio:
			out.Content = append(out.Content, &sdk.AudioContent{Data: c.Data, MIMEType: c.MIMEType})
		case toolloop.ContentResource:
			if c.Text == "" && c.Data == nil {
				out.Content = append(out.Content, &sdk.ResourceLink{URI: c.URI, Name: c.URI, MIMEType: c.MIMEType})
			} else {
				out.Content = append(out.Content, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
					URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Data,
				}})
			}
		}
	}
	switch {
	case objects == 1:
		out.StructuredContent = structured
	case objects == 0 && len(r.Content) == 1 && r.Content[0].Type == toolloop.ContentText &&
		r.Meta.MIMEType == "application/json" && isObject([]byte(r.Content[0].Text)):
		out.StructuredContent = json.RawMessage(r.Content[0].Text)
	}
	if r.IsError() {
		out.IsError = true
		out.StructuredContent = nil
		if len(out.Content) == 0 {
			out.Content = append(out.Content, &sdk.TextContent{Text: r.Text()})
		}
		kind := toolloop.KindExecutionFailed
		if r.Error != nil {
			kind = r.Error.Kind
		}
		out.Meta = sdk.Meta{metaKind: string(kind)}
	}
	return out
}

// isObject reports whether b is a JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
