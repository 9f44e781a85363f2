package looptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/toolloop/toolloop"
)

// ErrUnexpected is what the scripted model returns to the loop when the
// loop sent a request the script did not expect, or called the model more
// often than the script allows. The test has already been marked failed.
var ErrUnexpected = errors.New("looptest: the loop sent a request the script did not expect")

// Forever, as [Turn].Times, makes a turn answer every call from its first
// on: the script never runs out, so the loop must stop on its own limits
// (Budget.MaxTurns, a budget, cancellation).
const Forever = -1

// Turn is one scripted model turn.
type Turn struct {
	// Want, if not nil, is the transcript the loop must send on this turn.
	// It is compared as JSON, ignoring result durations (see
	// DiffTranscripts).
	Want []toolloop.Message
	// Check, if not nil, inspects the request and returns a non-empty
	// complaint to fail the test with.
	Check func(req *toolloop.Request) string
	// Reply is the model's answer. Each call gets a deep copy, made
	// without re-encoding: tool call arguments arrive byte for byte as
	// given, even when they are not valid JSON, repeat a key or nest past
	// any decoder's limit, and text keeps invalid UTF-8. So one Reply may
	// serve several turns.
	Reply *toolloop.Response
	// Err, if not nil, is returned instead of Reply, as a provider error.
	Err error
	// Times is how many calls in a row the turn answers: 0 or 1 means
	// once, [Forever] (any negative) every call from here on. Want and
	// Check apply to each of them; tool call IDs repeat as given. The
	// test fails if the turn does not answer all its calls, or, with
	// Forever, at least one.
	Times int
}

// calls returns how many calls t answers, or -1 for every call.
func (t *Turn) calls() int {
	if t.Times < 0 {
		return -1
	}
	return max(t.Times, 1)
}

// Model is a scripted [toolloop.Model]. It answers turn after turn from its
// script and records every request. It is safe for concurrent use, though a
// loop calls it from one goroutine at a time.
type Model struct {
	t        testing.TB
	mu       sync.Mutex
	turns    []Turn
	next     int // the turn that answers the next call
	played   int // how many calls turns[next] has answered
	calls    int
	requests []*toolloop.Request
}

// NewModel returns a model that plays turns in order, each as many times
// as its Times says. When the test ends it fails the test if some turns
// were never played. A turn that repeats Forever must be the last.
func NewModel(t testing.TB, turns ...Turn) *Model {
	t.Helper()
	m := &Model{t: t, turns: turns}
	for i := range turns[:max(len(turns)-1, 0)] {
		if turns[i].calls() < 0 {
			t.Errorf("looptest: turn %d repeats forever, so the %d turns after it can never play", i+1, len(turns)-i-1)
		}
	}
	t.Cleanup(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if n := m.remaining(); n > 0 && !t.Failed() {
			t.Errorf("looptest: the model was called %d times, but the script wants %d more calls", m.calls, n)
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
	m.requests = append(m.requests, deepCopy(req))
	m.calls++
	if m.next >= len(m.turns) {
		m.t.Errorf("looptest: the model was called for turn %d, but the script answers only %d calls; last message sent:\n%s",
			m.calls, m.calls-1, lastMessage(req))
		return nil, ErrUnexpected
	}
	turn := m.turns[m.next]
	m.played++
	if n := turn.calls(); n >= 0 && m.played >= n {
		m.next, m.played = m.next+1, 0
	}
	if turn.Want != nil {
		if d := DiffTranscripts(turn.Want, req.Messages); d != "" {
			m.t.Errorf("looptest: turn %d: the loop sent a transcript the script did not expect (-want +got):\n%s", m.calls, d)
			return nil, ErrUnexpected
		}
	}
	if turn.Check != nil {
		if msg := turn.Check(req); msg != "" {
			m.t.Errorf("looptest: turn %d: %s", m.calls, msg)
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
		m.t.Errorf("looptest: turn %d has neither Reply nor Err", m.calls)
		return nil, ErrUnexpected
	}
	return deepCopy(turn.Reply), nil
}

// Requests returns copies of the requests the model received, in order.
func (m *Model) Requests() []*toolloop.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*toolloop.Request(nil), m.requests...)
}

// Remaining reports how many more calls the script wants: the calls its
// turns have yet to answer, counting a turn that repeats Forever as one
// until it has answered once.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.remaining()
}

func (m *Model) remaining() int {
	n := 0
	for i := m.next; i < len(m.turns); i++ {
		c := m.turns[i].calls()
		switch {
		case c < 0 && i == m.next && m.played > 0:
		case c < 0:
			n++
		default:
			n += c
		}
		if i == m.next && c > 0 {
			n -= m.played
		}
	}
	return n
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

// Call returns a tool call. args is used as is, and reaches the loop byte
// for byte: it may be malformed on purpose (invalid JSON, duplicate keys,
// nesting deeper than decoders accept).
func Call(id, name, args string) toolloop.ToolCall {
	return toolloop.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// Load reads a transcript (a JSON array of messages) from a file, failing
// the test if it cannot. Tool call arguments that are valid JSON come back
// compact, as a model sends them, without the indentation of the file
// (which AssertGolden writes); arguments that are not valid JSON, stored
// as a string, come back byte for byte. So a transcript played back with
// Replay sends the loop what the recorded run got.
func Load(t testing.TB, path string) []toolloop.Message {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("looptest: %v", err)
		return nil
	}
	var msgs []toolloop.Message
	if err := json.Unmarshal(b, &msgs); err != nil {
		t.Fatalf("looptest: %s: %v", path, err)
		return nil
	}
	for i := range msgs {
		for j, tc := range msgs[i].ToolCalls {
			var c bytes.Buffer
			if json.Valid(tc.Arguments) && json.Compact(&c, tc.Arguments) == nil {
				msgs[i].ToolCalls[j].Arguments = c.Bytes()
			}
		}
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
