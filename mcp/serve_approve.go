package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

const (
	// maxApprovalRounds bounds how many times one call may wait for
	// approvals: an agent used as a tool may pause again after each
	// answer. The round after the last denies what still waits.
	maxApprovalRounds = 8
	// maxApprovalArgs bounds the arguments quoted in an approval
	// request's message.
	maxApprovalArgs = 2048
	// mrtrVersion is the first protocol version whose clients answer a
	// server's requests by calling again (multi round-trip requests).
	mrtrVersion = "2026-07-28"
)

// canElicit reports whether the client declared form elicitation.
func canElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	e := ip.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither means form, for older clients
}

// multiRoundTrip reports whether the client answers a server's requests by
// calling again, rather than being sent them during the call.
func multiRoundTrip(ss *sdk.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= mrtrVersion
}

func (s *Server) approvalTimeout() time.Duration {
	return orDur(s.opts.ApprovalTimeout, DefaultApprovalTimeout)
}

// approve settles a call that waits for approvals. A client on an older
// protocol is asked during the call, one elicitation per waiting call; a
// newer one is sent the requests as the call's result (out), and calls
// again with its answers (see resumeApproval).
func (s *Server) approve(ctx context.Context, req *sdk.CallToolRequest, loop *toolloop.AgentLoop, runID string, tc toolloop.ToolCall, p *toolloop.PendingCall) (*toolloop.ToolResult, *sdk.CallToolResult) {
	if multiRoundTrip(req.Session) {
		return s.inputRequired(ctx, loop, runID, tc, p, 1)
	}
	for round := 1; ; round++ {
		decisions := make(map[string]toolloop.Approval)
		var edited json.RawMessage
		for _, w := range p.Waiting() {
			a, args := s.ask(ctx, req.Session, w, round)
			decisions[w.CallID] = a
			if args != nil {
				edited = args
			}
		}
		var res *toolloop.ToolResult
		res, p = s.decide(ctx, loop, runID, tc, p, decisions, edited)
		if p == nil {
			return res, nil
		}
	}
}

// decide goes on with the decisions for p's waiting calls. Approved
// arguments that the person changed run as a new call, through
// validation and the guard again, with the approval settling the guard's
// ask.
func (s *Server) decide(ctx context.Context, loop *toolloop.AgentLoop, runID string, tc toolloop.ToolCall, p *toolloop.PendingCall, decisions map[string]toolloop.Approval, edited json.RawMessage) (*toolloop.ToolResult, *toolloop.PendingCall) {
	if a := decisions[p.CallID]; edited != nil && p.Child == nil && a.Approved {
		tc.Arguments = edited
		return loop.RunCall(ctx, runID, 1, tc, &a)
	}
	return loop.ResumeCall(ctx, runID, 1, tc, p, decisions)
}

// ask asks the client about w and waits for its answer, at most
// ApprovalTimeout. From round maxApprovalRounds on, it denies without
// asking.
func (s *Server) ask(ctx context.Context, ss *sdk.ServerSession, w toolloop.PendingCall, round int) (toolloop.Approval, json.RawMessage) {
	if round > maxApprovalRounds {
		return toolloop.Approval{Reason: fmt.Sprintf("the call asked for approval more than %d times", maxApprovalRounds)}, nil
	}
	timeout := s.approvalTimeout()
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := ss.Elicit(actx, s.elicitParams(w))
	switch {
	case err == nil:
		return s.answer(res, w)
	case ctx.Err() != nil:
		return toolloop.Approval{Reason: "the call was canceled while it waited for approval"}, nil
	case actx.Err() != nil:
		return toolloop.Approval{Reason: fmt.Sprintf("the MCP client did not answer the approval request within %v", timeout)}, nil
	default:
		s.logger.Warn("mcp: serve: approval request failed", "tool", w.Name, "err", err)
		return toolloop.Approval{Reason: "the MCP client could not be asked for approval: " + err.Error()}, nil
	}
}

// elicitParams is the approval form for w.
func (s *Server) elicitParams(w toolloop.PendingCall) *sdk.ElicitParams {
	props := map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Let this call run.", "default": true},
	}
	if s.opts.EditableArguments && w.Child == nil {
		props["arguments"] = map[string]any{"type": "string", "title": "Arguments",
			"description": "The call's arguments, as JSON; change them to run the call with others.", "default": string(w.Arguments)}
	}
	args := string(w.Arguments)
	if len(args) > maxApprovalArgs {
		args = args[:maxApprovalArgs] + fmt.Sprintf("... (%d bytes in all)", len(w.Arguments))
	}
	reason := w.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return &sdk.ElicitParams{
		Mode:            "form",
		Message:         fmt.Sprintf("The tool %s needs your approval to run.\nReason: %s\nArguments: %s", w.Name, reason, args),
		RequestedSchema: map[string]any{"type": "object", "properties": props, "required": []string{"approve"}},
	}
}

// answer reads the client's answer about w: accept with approve true (or
// absent) approves; anything else denies. It returns the arguments the
// person changed, if any.
func (s *Server) answer(res *sdk.ElicitResult, w toolloop.PendingCall) (toolloop.Approval, json.RawMessage) {
	switch res.Action {
	case "accept":
	case "decline":
		return toolloop.Approval{Reason: "the user declined"}, nil
	case "cancel":
		return toolloop.Approval{Reason: "the user dismissed the approval request"}, nil
	default:
		return toolloop.Approval{Reason: fmt.Sprintf("the MCP client answered %q", res.Action)}, nil
	}
	if v, ok := res.Content["approve"]; ok {
		if b, isBool := v.(bool); !isBool || !b {
			return toolloop.Approval{Reason: "the user did not approve"}, nil
		}
	}
	a := toolloop.Approval{Approved: true, Reason: "approved by the user"}
	if text, ok := res.Content["arguments"].(string); ok && s.opts.EditableArguments && w.Child == nil {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(text)) != nil || !bytes.Equal(buf.Bytes(), compact(w.Arguments)) {
			a.Reason = "approved by the user with edited arguments"
			return a, json.RawMessage(text)
		}
	}
	return a, nil
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// heldApproval is a call that waits for a client to call again with its
// answers.
type heldApproval struct {
	tc      toolloop.ToolCall
	p       *toolloop.PendingCall
	round   int
	expires time.Time
}

// inputRequired holds p and returns the result that asks the client for
// its answers, or, if too many approvals wait already, denies.
func (s *Server) inputRequired(ctx context.Context, loop *toolloop.AgentLoop, runID string, tc toolloop.ToolCall, p *toolloop.PendingCall, round int) (*toolloop.ToolResult, *sdk.CallToolResult) {
	reqs := make(sdk.InputRequestMap)
	for _, w := range p.Waiting() {
		reqs[w.CallID] = s.elicitParams(w)
	}
	token, ok := "", round <= maxApprovalRounds
	if ok {
		token, ok = s.approvals.put(&heldApproval{tc: tc, p: p, round: round, expires: time.Now().Add(s.approvalTimeout())})
	}
	if !ok {
		reason := fmt.Sprintf("the call asked for approval more than %d times", maxApprovalRounds)
		if round <= maxApprovalRounds {
			reason = "too many calls wait for approval on this server"
		}
		decisions := make(map[string]toolloop.Approval)
		for _, w := range p.Waiting() {
			decisions[w.CallID] = toolloop.Approval{Reason: reason}
		}
		res, _ := loop.ResumeCall(ctx, runID, 1, tc, p, decisions)
		return res, nil
	}
	return nil, &sdk.CallToolResult{InputRequests: reqs, RequestState: token}
}

// resumeApproval goes on with a call that a client calls again with its
// answers to approval requests (multi round-trip requests).
func (s *Server) resumeApproval(ctx context.Context, req *sdk.CallToolRequest, loop *toolloop.AgentLoop, runID string, tc toolloop.ToolCall) (*toolloop.ToolResult, *sdk.CallToolResult) {
	h := s.approvals.take(req.Params.RequestState)
	if h == nil || h.tc.Name != tc.Name {
		return &toolloop.ToolResult{CallID: tc.ID, Name: tc.Name, Status: toolloop.StatusError,
			Error: &toolloop.ToolError{Kind: toolloop.KindDenied, Message: fmt.Sprintf(
				"not run: the approval this call answers is unknown or expired (approvals wait at most %v)", s.approvalTimeout())},
		}, nil
	}
	decisions := make(map[string]toolloop.Approval)
	var edited json.RawMessage
	for _, w := range h.p.Waiting() {
		res, ok := req.Params.InputResponses[w.CallID].(*sdk.ElicitResult)
		if !ok {
			decisions[w.CallID] = toolloop.Approval{Reason: "the MCP client sent no answer to the approval request"}
			continue
		}
		a, args := s.answer(res, w)
		decisions[w.CallID] = a
		if args != nil {
			edited = args
		}
	}
	res, p := s.decide(ctx, loop, runID, h.tc, h.p, decisions, edited)
	if p != nil {
		return s.inputRequired(ctx, loop, runID, h.tc, p, h.round+1)
	}
	return res, nil
}

// approvalStore holds the calls that wait for clients to call again,
// under unguessable tokens, each until it expires; at most max.
type approvalStore struct {
	mu   sync.Mutex
	max  int
	held map[string]*heldApproval
}

func (st *approvalStore) put(h *heldApproval) (string, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := time.Now()
	for k, v := range st.held {
		if now.After(v.expires) {
			delete(st.held, k)
		}
	}
	if len(st.held) >= st.max {
		return "", false
	}
	if st.held == nil {
		st.held = make(map[string]*heldApproval)
	}
	token := rand.Text()
	st.held[token] = h
	return token, true
}

// take returns and forgets the call held under token, if it has not
// expired.
func (st *approvalStore) take(token string) *heldApproval {
	st.mu.Lock()
	defer st.mu.Unlock()
	h := st.held[token]
	delete(st.held, token)
	if h == nil || time.Now().After(h.expires) {
		return nil
	}
	return h
}

func (st *approvalStore) clear() {
	st.mu.Lock()
	st.held = nil
	st.mu.Unlock()
}
