package providertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/providertest"
)

// tinyModel is a provider of your own: a toolloop.Model for "tiny", an
// API that takes a transcript as JSON and answers with text or calls.
type tinyModel struct {
	URL    string
	Client *http.Client
}

type tinyMessage struct {
	Role   string     `json:"role"`
	Text   string     `json:"text,omitempty"`
	Calls  []tinyCall `json:"calls,omitempty"`
	CallID string     `json:"call_id,omitempty"`
}

type tinyCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type tinyAnswer struct {
	Model string     `json:"model"`
	Text  string     `json:"text,omitempty"`
	Calls []tinyCall `json:"calls,omitempty"`
	Stop  string     `json:"stop"`
	Usage struct {
		In  int64 `json:"in"`
		Out int64 `json:"out"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// tinyStops maps tiny's stop reasons to toolloop's, both ways.
var tinyStops = map[string]toolloop.StopReason{
	"end": toolloop.StopEnd, "calls": toolloop.StopToolUse, "length": toolloop.StopLength, "refused": toolloop.StopRefusal,
}

// Generate sends req to tiny and maps its answer.
func (m *tinyModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	if req.Output != nil {
		return nil, fmt.Errorf("tiny: no structured output: %w", providers.ErrConfig)
	}
	body := map[string]any{}
	var msgs []tinyMessage
	for _, msg := range req.Messages {
		tm := tinyMessage{Role: string(msg.Role), Text: msg.Text()}
		for _, c := range msg.ToolCalls {
			tm.Calls = append(tm.Calls, tinyCall{c.ID, c.Name, c.Arguments})
		}
		if msg.Result != nil {
			tm.CallID, tm.Text = msg.Result.CallID, msg.Result.Text()
		}
		msgs = append(msgs, tm)
	}
	body["messages"] = msgs
	if len(req.Tools) > 0 {
		body["tools"], body["tool_choice"] = req.Tools, "auto"
	}
	offered := slices.ContainsFunc(req.Tools, func(s toolloop.ToolSpec) bool { return s.Name == req.ToolChoice.Name })
	switch c := req.ToolChoice; {
	case c.Mode == toolloop.ToolChoiceAuto && c.Name == "":
	case c.Mode == toolloop.ToolChoiceNone && c.Name == "":
		if len(req.Tools) > 0 {
			body["tool_choice"] = "none"
		}
	case c.Mode == toolloop.ToolChoiceRequired && c.Name == "" && len(req.Tools) > 0:
		body["tool_choice"] = "required"
	case c.Mode == toolloop.ToolChoiceRequired && offered:
		body["tool_choice"] = c.Name
	default:
		return nil, fmt.Errorf("tiny: tool choice %+v cannot be sent with %d tools", c, len(req.Tools))
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL+"/v1/answer", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	res, err := m.Client.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var a tinyAnswer
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
		return nil, err
	}
	if a.Error != nil {
		pe := &providers.Error{Provider: "tiny", StatusCode: res.StatusCode, Type: a.Error.Type, Message: a.Error.Message,
			Method: hreq.Method, URL: m.URL + hreq.URL.Path}
		switch {
		case a.Error.Type == "too_long":
			pe.Kind = providers.ErrContextLength
		case res.StatusCode == http.StatusTooManyRequests:
			pe.Kind = providers.ErrRateLimit
		case res.StatusCode == http.StatusServiceUnavailable:
			pe.Kind = providers.ErrOverloaded
		case res.StatusCode == http.StatusUnauthorized:
			pe.Kind = providers.ErrAuth
		}
		return nil, fmt.Errorf("tiny: %s %q: %w", pe.Method, pe.URL, pe)
	}
	out := &toolloop.Response{StopReason: tinyStops[a.Stop], Model: a.Model,
		Usage: toolloop.Usage{InputTokens: a.Usage.In, OutputTokens: a.Usage.Out}}
	out.Message.Role = toolloop.RoleAssistant
	if a.Text != "" {
		out.Message.Content = []toolloop.Content{toolloop.TextContent(a.Text)}
	}
	for _, c := range a.Calls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, toolloop.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Args})
	}
	return out, nil
}

// encode writes a response in tiny's wire format, as its server would.
func encode(r toolloop.Response) []byte {
	a := tinyAnswer{Model: r.Model, Text: r.Message.Text()}
	for stop, reason := range tinyStops {
		if reason == r.StopReason {
			a.Stop = stop
		}
	}
	for _, c := range r.Message.ToolCalls {
		a.Calls = append(a.Calls, tinyCall{c.ID, c.Name, c.Arguments})
	}
	a.Usage.In, a.Usage.Out = r.Usage.InputTokens, r.Usage.OutputTokens
	b, _ := json.Marshal(a)
	return b
}

// tinyError is an error response of tiny's.
func tinyError(status int, typ, msg string) providertest.Reply {
	return providertest.Reply{Status: status, Body: fmt.Appendf(nil, `{"error":{"type":%q,"message":%q}}`, typ, msg)}
}

// testTiny is the conformance test of tiny, in a _test.go file of its
// package: func TestConformance(t *testing.T) { testTiny(t) }.
func testTiny(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		Provider: "tiny",
		New: func(t *testing.T, s providertest.Setup) toolloop.Model {
			return &tinyModel{URL: s.URL, Client: s.Client}
		},
		Replies: func(turn providertest.Turn) []providertest.Reply {
			return []providertest.Reply{{Body: encode(turn.Want.Response)}}
		},
		Errors: []providertest.ErrorCase{
			{Name: "too long", Reply: tinyError(400, "too_long", "the conversation is too long"), Kind: providers.ErrContextLength, Type: "too_long"},
			{Name: "rate limited", Reply: tinyError(429, "rate_limited", "slow down"), Kind: providers.ErrRateLimit, Type: "rate_limited"},
			{Name: "overloaded", Reply: tinyError(503, "overloaded", "try again later"), Kind: providers.ErrOverloaded, Type: "overloaded"},
			{Name: "bad key", Reply: tinyError(401, "bad_key", "unknown key"), Kind: providers.ErrAuth, Type: "bad_key"},
			{Name: "bad request", Reply: tinyError(400, "bad_request", "no messages"), Type: "bad_request"},
		},
		// tiny neither streams nor takes structured output: tinyModel is
		// no toolloop.Streamer or toolloop.NativeOutput, and the kit
		// checks that a request with Output fails with ErrConfig.
		Lacks: providertest.Features{Reasoning: true},
	})
}

// A provider of your own, tiny, runs the conformance kit: testTiny is its
// test. Here the model answers a fake tiny server.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(encode(toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("Hello!")}},
			StopReason: toolloop.StopEnd, Model: "tiny-1"}))
	}))
	defer srv.Close()
	m := &tinyModel{URL: srv.URL, Client: srv.Client()}
	resp, err := m.Generate(context.Background(), &toolloop.Request{Messages: []toolloop.Message{toolloop.UserMessage("Hi.")}})
	fmt.Println(resp.Message.Text(), resp.StopReason, resp.Model, err)
	_, err = m.Generate(context.Background(), &toolloop.Request{Messages: []toolloop.Message{toolloop.UserMessage("Hi.")},
		Output: &toolloop.OutputFormat{Schema: json.RawMessage(`{"type":"object"}`)}})
	fmt.Println(errors.Is(err, providers.ErrConfig))
	// Output:
	// Hello! stop tiny-1 <nil>
	// true
}
