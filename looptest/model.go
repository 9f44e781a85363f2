package looptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/toolloop/toolloop"
)

// ErrUnexpected is what the scripted model returns to the loop when the
// loop sent a request the script did not expect, or called the model more
// often than the script allows. The test has already been marked failed.
var ErrUnexpected = errors.New("looptest: the loop sent a request the script did not expect")

// Turn is one scripted model turn.
type Turn struct {
	// Want, if not nil, is the transcript the loop must send on this turn.
	// It is compared as JSON, ignoring result durations (see
	// DiffTranscripts).
	Want []toolloop.Message
	// Check, if not nil, inspects the request and returns a non-empty
	// complaint to fail the test with.
	Check func(req *toolloop.Request) string
	// Reply is the model's answer. It is copied, so one Reply may serve
	// several turns.
	Reply *toolloop.Response
	// Err, if not nil, is returned instead of Reply, as a provider error.
	Err error
}

// Model is a scripted [toolloop.Model]. It answers turn after turn from its
// script and records every request. It is safe for concurrent use, though a
// loop calls it from one goroutine at a time.
type Model struct {
	t        testing.TB
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []*toolloop.Request
}

// NewModel returns a model that plays turns in order. When the test ends it
// fails the test if some turns were never played.
func NewModel(t testing.TB, turns ...Turn) *Model {
	t.Helper()
	m := &Model{t: t, turns: turns}
	t.Cleanup(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.next < len(m.turns) && !t.Failed() {
			t.Errorf("looptest: the script has %d turns but the model was called %d times", len(m.turns), m.next)
		}
	})
	return m
}

// Replay returns a model that plays back the assistant messages of a whole
// expected transcript. On each turn it checks that the loop sent exactly the
// transcript up to that assistant message, so a run that diverges from the
// transcript fails the test at the first difference, with a diff.
func Replay(t testing.TB, transcript []toolloop.Message) *Model {
	t.Helper()
	var turns []Turn
	for i, m := range transcript {
		if m.Role != toolloop.RoleAssistant {
			continue
		}
		reply := &toolloop.Response{Message: m, StopReason: m.StopReason, Model: m.Model}
		if m.Usage != nil {
			reply.Usage = *m.Usage
		}
		reply.Message.StopReason, reply.Message.Usage, reply.Message.Model = "", nil, ""
		turns = append(turns, Turn{Want: transcript[:i:i], Reply: reply})
	}
	return NewModel(t, turns...)
}

// Generate implements [toolloop.Model].
func (m *Model) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, cloneRequest(req))
	if m.next >= len(m.turns) {
		m.t.Errorf("looptest: the model was called for turn %d, but the script has only %d turns; last message sent:\n%s",
			m.next+1, len(m.turns), lastMessage(req))
		m.next++
		return nil, ErrUnexpected
	}
	turn := m.turns[m.next]
	m.next++
	if turn.Want != nil {
		if d := DiffTranscripts(turn.Want, req.Messages); d != "" {
			m.t.Errorf("looptest: turn %d: the loop sent a transcript the script did not expect (-want +got):\n%s", m.next, d)
			return nil, ErrUnexpected
		}
	}
	if turn.Check != nil {
		if msg := turn.Check(req); msg != "" {
			m.t.Errorf("looptest: turn %d: %s", m.next, msg)
			return nil, ErrUnexpected
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if turn.Err != nil {
		return nil, turn.Err
	}
	if turn.Reply == nil {
		m.t.Errorf("looptest: turn %d has neither Reply nor Err", m.next)
		return nil, ErrUnexpected
	}
	return cloneResponse(turn.Reply), nil
}

// Requests returns copies of the requests the model received, in order.
func (m *Model) Requests() []*toolloop.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*toolloop.Request(nil), m.requests...)
}

// Remaining reports how many scripted turns have not been played.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return max(len(m.turns)-m.next, 0)
}

// Text returns a reply that ends the run with text.
func Text(text string) *toolloop.Response {
	return &toolloop.Response{
		Message:    toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent(text)}},
		StopReason: toolloop.StopEnd,
	}
}

// Calls returns a reply that asks for tool calls.
func Calls(calls ...toolloop.ToolCall) *toolloop.Response {
	return &toolloop.Response{
		Message:    toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: calls},
		StopReason: toolloop.StopToolUse,
	}
}

// Call returns a tool call. args is used as is, so it may be malformed on
// purpose.
func Call(id, name, args string) toolloop.ToolCall {
	return toolloop.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// Load reads a transcript (a JSON array of messages) from a file, failing
// the test if it cannot.
func Load(t testing.TB, path string) []toolloop.Message {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("looptest: %v", err)
	}
	var msgs []toolloop.Message
	if err := json.Unmarshal(b, &msgs); err != nil {
		t.Fatalf("looptest: %s: %v", path, err)
	}
	return msgs
}

func lastMessage(req *toolloop.Request) string {
	if len(req.Messages) == 0 {
		return "(none)"
	}
	b, _ := json.MarshalIndent(req.Messages[len(req.Messages)-1], "", "  ")
	return string(b)
}

// cloneRequest deep-copies a request through JSON, so later changes by the
// loop cannot alter what was recorded.
func cloneRequest(req *toolloop.Request) *toolloop.Request {
	var out toolloop.Request
	mustRoundTrip(req, &out)
	return &out
}

func cloneResponse(r *toolloop.Response) *toolloop.Response {
	var out toolloop.Response
	mustRoundTrip(r, &out)
	return &out
}

func mustRoundTrip(in, out any) {
	b, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		panic(fmt.Sprintf("looptest: copying %T: %v", in, err))
	}
}
