package looptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// rawArguments are tool call arguments a copy through JSON cannot carry
// byte for byte.
func rawArguments() map[string]string {
	return map[string]string{
		"invalid JSON":            `{"text":`,
		"duplicate keys":          `{"text":"a","text":"b"}`,
		"whitespace and HTML":     "{ \"text\" :\n\t\"<b>&amp;</b>\" }",
		"escapes kept as written": `{"text":"\u00e9\/"}`,
		"nesting at the limit":    `{"text":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
		"nesting past the limit":  `{"text":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		"invalid UTF-8":           "{\"text\":\"\xff\xfe\"}",
		"invalid JSON and UTF-8":  "{\"text\":\"\xff",
		"empty":                   "",
		"not an object":           `["text"]`,
	}
}

// models returns each scripted model, answering with reply.
func models(t *testing.T, reply *toolloop.Response) map[string]toolloop.Model {
	return map[string]toolloop.Model{
		"Script":   looptest.Script(reply),
		"Always":   looptest.Always(reply),
		"NewModel": looptest.NewModel(t, looptest.Turn{Reply: reply}),
	}
}

func TestRawArgumentsAreDeliveredByteForByte(t *testing.T) {
	for name, args := range rawArguments() {
		t.Run(name, func(t *testing.T) {
			reply := looptest.Calls(looptest.Call("c1", "echo", args))
			for kind, m := range models(t, reply) {
				r, err := generate(m)
				require.NoError(t, err, kind)
				got := r.Message.ToolCalls[0].Arguments
				assert.True(t, bytes.Equal([]byte(args), got), "%s: got %.80q", kind, got)
				if len(got) > 0 {
					assert.NotSame(t, &reply.Message.ToolCalls[0].Arguments[0], &got[0], "%s: a copy", kind)
				}
			}
		})
	}
}

func TestRawTextIsDeliveredByteForByte(t *testing.T) {
	text := "caf\xe9 \xff <b>"
	reply := looptest.Text(text)
	reply.Message.Content = append(reply.Message.Content, toolloop.JSONContent(json.RawMessage(`{ "a":1, "a":2 }`)))
	for kind, m := range models(t, reply) {
		r, err := generate(m)
		require.NoError(t, err, kind)
		assert.Equal(t, text, r.Message.Content[0].Text, kind)
		assert.Equal(t, `{ "a":1, "a":2 }`, string(r.Message.Content[1].JSON), kind)
	}
}

// TestRawArgumentsReachTheLoop checks what the loop gets: the transcript
// keeps the model's bytes, and the tool sees the model's arguments.
func TestRawArgumentsReachTheLoop(t *testing.T) {
	args := "{ \"text\" : \"<b>\" }"
	var reg toolloop.ToolRegistry
	var seen json.RawMessage
	reg.MustRegister(toolloop.NewTool("echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (any, error) {
		return in.Text, nil
	}))
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "echo", args))},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	loop := &toolloop.AgentLoop{Model: model, Tools: &reg, Hooks: toolloop.Hooks{
		PreToolUse: []toolloop.PreToolUseHook{func(_ context.Context, c *toolloop.Call) (toolloop.PreToolUse, error) {
			seen = append(json.RawMessage(nil), c.Arguments...)
			return toolloop.PreToolUse{}, nil
		}},
	}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("echo")})
	require.NoError(t, err)
	assert.Equal(t, args, string(res.Messages[1].ToolCalls[0].Arguments))
	assert.Equal(t, args, string(seen))
	assert.Equal(t, "<b>", looptest.Results(res.Messages)["c1"].Text())
	// The model's second request carries the call as the loop sent it,
	// recorded without re-encoding.
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, args, string(reqs[1].Messages[1].ToolCalls[0].Arguments))
}

func TestRequestsAreRecordedByteForByte(t *testing.T) {
	m := looptest.NewModel(t, looptest.Turn{Reply: looptest.Text("ok")})
	args := rawArguments()["nesting past the limit"]
	req := &toolloop.Request{Messages: []toolloop.Message{
		{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{looptest.Call("c1", "echo", args)}},
	}}
	_, err := m.Generate(context.Background(), req)
	require.NoError(t, err)
	req.Messages[0].ToolCalls[0].Arguments[0] = 'X' // the loop reuses its buffers
	got := m.Requests()[0].Messages[0].ToolCalls[0].Arguments
	assert.True(t, bytes.Equal([]byte(args), got))
}
