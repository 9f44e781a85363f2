package sanitize_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
)

// unredacted lists the fields of an event, and of what it holds, that
// RedactEvent leaves alone: identifiers that tie events together,
// enumerations, and the opaque parts of a reasoning block that its
// provider must get back unchanged. Every other string, byte slice, JSON
// value and map key is redacted; TestRedactEventCoversEveryField fails
// for a field added later until it is redacted or listed here.
var unredacted = map[string]bool{
	"Event.Type": true, "Event.RunID": true, "Event.CallID": true, "Event.Source": true, "Event.StopReason": true,
	"Event.Approvals[key]": true,
	"Verdict.Decision":     true,
	"Message.Role":         true, "Message.StopReason": true,
	"Response.StopReason": true,
	"ToolCall.ID":         true,
	"PendingCall.CallID":  true,
	"Content.Type":        true,
	"Reasoning.Provider":  true, "Reasoning.ID": true, "Reasoning.Signature": true, "Reasoning.Encrypted": true, "Reasoning.CallID": true,
	"ToolResult.CallID": true, "ToolResult.Status": true,
	"ToolError.Kind":         true,
	"ResultMeta.Source":      true,
	"TranscriptEdit.CallIDs": true,
	"CacheBust.Reason":       true,
	"ToolChoice.Mode":        true,
	"Event.ParentRunID":      true, "Event.ParentCallID": true, "PendingCall.ParentCallID": true,
	"PauseState.RunID": true, "ToolExecution.CallID": true,
	"Event.Origin": true, "QueuedMessage.Origin": true, "Interrupt.Mode": true,
	"Job.ID": true, "Job.CallID": true, "Job.Status": true,
	"PauseState.MAC": true, // an HMAC, not a secret: redacting it would break the seal
}

// secretText is what each field is filled with: text holding a token.
var secretText = "see " + fakeGitHub + " here"

// onPath holds the pointer types fill is inside of.
var onPath = map[reflect.Type]bool{}

// fill sets every field of v that can hold text, recursively: strings
// and map keys to secretText, byte slices to its bytes, JSON values to a
// document holding it, an any to it; slices and maps get one element.
// name is the field's "Type.Field" name.
func fill(v reflect.Value, name string) {
	switch v.Type() {
	case reflect.TypeFor[json.RawMessage]():
		doc, _ := json.Marshal(map[string]string{"note": secretText})
		v.SetBytes(doc)
		return
	case reflect.TypeFor[time.Time](), reflect.TypeFor[time.Duration]():
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(secretText)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(secretText))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), name)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, name+"[key]")
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, name)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		// A type that holds itself (a paused agent's state in a pending
		// call) is filled once: the nested copy stays nil.
		if onPath[v.Type()] {
			return
		}
		onPath[v.Type()] = true
		defer delete(onPath, v.Type())
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), name)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fill(v.Field(i), v.Type().Name()+"."+f.Name)
			}
		}
	case reflect.Interface:
		v.Set(reflect.ValueOf(secretText))
	}
}

// leaf is a piece of text found in a value, with the field that holds it.
type leaf struct {
	name, text string
	json       bool
}

// leaves returns every piece of text in v, as fill puts it there.
func leaves(v reflect.Value, name string) []leaf {
	switch v.Type() {
	case reflect.TypeFor[json.RawMessage]():
		return []leaf{{name: name, text: string(v.Bytes()), json: true}}
	case reflect.TypeFor[time.Time](), reflect.TypeFor[time.Duration]():
		return nil
	}
	var out []leaf
	switch v.Kind() {
	case reflect.String:
		out = append(out, leaf{name: name, text: v.String()})
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return []leaf{{name: name, text: string(v.Bytes())}}
		}
		for i := range v.Len() {
			out = append(out, leaves(v.Index(i), name)...)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			out = append(out, leaves(k, name+"[key]")...)
			out = append(out, leaves(v.MapIndex(k), name)...)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, leaves(v.Elem(), name)...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, leaves(v.Field(i), v.Type().Name()+"."+f.Name)...)
			}
		}
	}
	return out
}

// TestRedactEventCoversEveryField fills every field of an event that can
// hold text with a secret, through every pointer, slice and map, and
// checks that RedactEvent removes each one except from the fields listed
// in unredacted, which it must leave as they were.
func TestRedactEventCoversEveryField(t *testing.T) {
	var e toolloop.Event
	fill(reflect.ValueOf(&e).Elem(), "Event")
	before := leaves(reflect.ValueOf(e), "Event")
	require.Greater(t, len(before), 60, "fill reached the event's fields")

	var r sanitize.Redactor
	out := r.RedactEvent(e)

	seen := map[string]bool{}
	for _, l := range leaves(reflect.ValueOf(out), "Event") {
		seen[l.name] = true
		if unredacted[l.name] {
			assert.Equal(t, secretText, l.text, "%s is left alone", l.name)
			continue
		}
		assert.NotContains(t, l.text, fakeGitHub, "%s is redacted", l.name)
		assert.Contains(t, l.text, "[REDACTED:github_token]", "%s keeps the rest of its text", l.name)
		if l.json {
			assert.True(t, json.Valid([]byte(l.text)), "%s stays valid JSON: %s", l.name, l.text)
		}
	}
	for name := range unredacted {
		assert.True(t, seen[name], "%s is listed as left alone but is no field", name)
	}
	after := leaves(reflect.ValueOf(e), "Event")
	assert.Equal(t, before, after, "the caller's event is not changed")
}

// TestRedactEventNoCopy checks that an event without secrets comes back
// sharing everything it points to: nothing is copied.
func TestRedactEventNoCopy(t *testing.T) {
	res := &toolloop.ToolResult{CallID: "c1", Name: "ls", Status: toolloop.StatusOK,
		Content: []toolloop.Content{toolloop.TextContent("a.txt\nb.txt")}, Meta: toolloop.ResultMeta{Extra: map[string]any{"exit_code": 0}}}
	e := toolloop.Event{
		Type: toolloop.EventRunStart, Arguments: json.RawMessage(`{"path":"."}`), Result: res,
		Messages: []toolloop.Message{toolloop.UserMessage("list the files"), {Role: toolloop.RoleAssistant,
			ToolCalls: []toolloop.ToolCall{{ID: "c1", Name: "ls", Arguments: json.RawMessage(`{"path":"."}`)}}}, toolloop.ToolMessage(res)},
		Response: &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("done")}}},
	}
	var r sanitize.Redactor
	out := r.RedactEvent(e)
	assert.Same(t, e.Result, out.Result)
	assert.Same(t, e.Response, out.Response)
	assert.Same(t, &e.Messages[0], &out.Messages[0])
	assert.Same(t, &e.Arguments[0], &out.Arguments[0])
}

func TestRedactEventJSON(t *testing.T) {
	var r sanitize.Redactor
	tests := []struct {
		name, in, want string
	}{
		{"value under a secret key", `{"user": "bob", "password": "hunter22x"}`, `{"user": "bob", "password": "[REDACTED:credential]"}`},
		{"camel case key", `{"apiKey":"a8f3k2m9x7q1w5e4r6t0"}`, `{"apiKey":"[REDACTED:credential]"}`},
		{"name and value pair", `[{"name":"LOG_LEVEL","value":"info"},{"name":"DB_PASSWORD","value":"s3cr3t-Pa55"}]`,
			`[{"name":"LOG_LEVEL","value":"info"},{"name":"DB_PASSWORD","value":"[REDACTED:credential]"}]`},
		{"token inside a string", `{"cmd": "curl -H 'Authorization: Bearer ` + fakeBearer + `' x"}`,
			`{"cmd": "curl -H 'Authorization: Bearer [REDACTED:bearer_token]' x"}`},
		{"escaped newlines", `{"env": "HOME=/root\nDB_PASSWORD=hunter22x\n"}`, `{"env": "HOME=/root\nDB_PASSWORD=[REDACTED:credential]\n"}`},
		{"placeholder kept", `{"password": "${DB_PASSWORD}", "token": ""}`, `{"password": "${DB_PASSWORD}", "token": ""}`},
		{"malformed arguments", `{"password": "hunter22x"`, `{"password": "[REDACTED:credential]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := r.RedactEvent(toolloop.Event{Type: toolloop.EventStart, Arguments: json.RawMessage(tt.in)})
			assert.Equal(t, tt.want, string(out.Arguments))
			assert.Equal(t, json.Valid([]byte(tt.in)), json.Valid(out.Arguments))
		})
	}
}

func TestRedactEventExtra(t *testing.T) {
	type report struct {
		Env string `json:"env"`
	}
	res := &toolloop.ToolResult{Status: toolloop.StatusError, Meta: toolloop.ResultMeta{Extra: map[string]any{
		"exit_code": 1,
		"stderr":    "fatal: could not read Password for 'https://" + fakeGitHub + "@github.com'",
		"report":    report{Env: "GITHUB_TOKEN=" + fakeGitHub},
		"err":       errors.New("auth with " + fakeGitHub + " failed"),
	}}}
	var r sanitize.Redactor
	out := r.RedactEvent(toolloop.Event{Type: toolloop.EventComplete, Result: res})
	doc, err := json.Marshal(out.Result.Meta.Extra)
	require.NoError(t, err)
	assert.NotContains(t, string(doc), fakeGitHub)
	assert.Equal(t, 1, out.Result.Meta.Extra["exit_code"], "numbers keep their type")
	assert.Contains(t, res.Meta.Extra["stderr"], fakeGitHub, "the event's result is not changed")
}

func BenchmarkRedactEvent(b *testing.B) {
	transcript := []toolloop.Message{
		toolloop.SystemMessage("You are a careful coding agent. Read files before you change them, and run the tests after."),
		toolloop.UserMessage("The login handler returns 500 when the session token has expired. Find out why and fix it."),
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"internal/auth/session.go"}`)}}},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "c1", Name: "read_file", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.TextContent(strings.Repeat("func (s *Store) Get(ctx context.Context, id string) (*Session, error) {\n\trow := s.db.QueryRowContext(ctx, q, id)\n}\n", 40))}}),
	}
	events := map[string]toolloop.Event{
		"run.start":     {Type: toolloop.EventRunStart, Messages: transcript},
		"model.delta":   {Type: toolloop.EventModelDelta, Text: "Let me look at the session store"},
		"tool.complete": {Type: toolloop.EventComplete, Result: transcript[3].Result},
	}
	for name, e := range events {
		b.Run(name, func(b *testing.B) {
			var r sanitize.Redactor
			b.ReportAllocs()
			for b.Loop() {
				r.RedactEvent(e)
			}
		})
	}
}

func TestRedactorPostToolUseErrorOnly(t *testing.T) {
	// A failed result whose error holds a secret that its content does not.
	var r sanitize.Redactor
	res := &toolloop.ToolResult{Status: toolloop.StatusError, Content: []toolloop.Content{toolloop.TextContent("request failed")},
		Error: &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "request failed: token " + fakeGitHub}}
	out, err := r.PostToolUse(context.Background(), nil, res)
	require.NoError(t, err)
	require.NotNil(t, out)
	assert.Equal(t, "request failed: token [REDACTED:github_token]", out.Error.Message)
	assert.Contains(t, res.Error.Message, fakeGitHub, "res is not changed")
}
