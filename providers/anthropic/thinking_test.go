package anthropic

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// reasoning returns an Anthropic reasoning block.
func reasoning(text string, r toolloop.Reasoning) toolloop.Content {
	r.Provider = "anthropic"
	return toolloop.ReasoningContent(text, r)
}

func TestGenerateThinking(t *testing.T) {
	tests := []struct {
		name     string
		response string
		want     toolloop.Response
	}{{
		name:     "thinking before a tool call",
		response: "thinking_tool_use.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
				reasoning("The user wants to know the current weather in Paris. I have access to a function `get_weather` that can provide this information. The city is clearly Paris, so I can call it directly.",
					toolloop.Reasoning{Signature: "BDaL4VrbR2Oj0hO4XpJxT28J5TILnCrrUXoKiiNBZW9P+nr8XSj1zuZzAl4egiCCpQNvfyUuFFJP5CncdYZEQPPmLxYsNrcsQ3VtZmiR0f4c2k8ZWq1Y3pX7mJ9s0TQ5d1yH2Lw=="}),
				toolloop.TextContent("I can help you get the current weather information for Paris. Let me check that for you"),
			}, ToolCalls: []toolloop.ToolCall{
				{ID: "toolu_01CswdEQBMshySk6Y9DFKrfq", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}},
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 12 + 410, OutputTokens: 133, CacheReadTokens: 410, ReasoningTokens: 52},
		},
	}, {
		name:     "redacted thinking",
		response: "redacted_thinking.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
				reasoning("Let me analyze this step by step...",
					toolloop.Reasoning{Signature: "WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavLq5vQm3dKpT8xwE1aF0rNcHy2Ls=="}),
				reasoning("", toolloop.Reasoning{Redacted: true,
					Encrypted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB9URj2pLmN3kF8/dW5hR7xJ0aP1oLs9yTcMnKVf2wRpEGjH9XZaBt4UvDcPrQ=="}),
				toolloop.TextContent("Based on my analysis, it will stay light rain in Paris until the evening."),
			}},
			StopReason: toolloop.StopEnd,
			Usage:      toolloop.Usage{InputTokens: 96 + 1500 + 3000, OutputTokens: 210, CacheReadTokens: 3000, CacheWriteTokens: 1500, ReasoningTokens: 180},
		},
	}, {
		name:     "interleaved thinking between tool calls",
		response: "interleaved_tool_calls.json",
		want: toolloop.Response{
			Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{
				reasoning("I need the weather in both cities. Paris first.",
					toolloop.Reasoning{Signature: "EuYBCkQYAiJAjz5vKMd0lJ8bXq3R1cTnW6ZfO2hPyA9gLs4tUe7VkxB0mNi5wQjC8rD3aHpGzS1oYv6uFEk2ITJbn9XcLW=="}),
				reasoning("Now Tokyo, so I can compare the two.",
					toolloop.Reasoning{Signature: "EpQCCkQYAiJAs7dQ1wLk4XnP9bV2yTmR6cZfA0hGoE3jUi8tKqB5lNv1xWpC7rS4aMeYzD2oHu9gFEk6ITJbn3XcLQ==", CallID: "toolu_01ToK7yo3pLm9Vb4Xn2Wq6Rc"}),
				reasoning("", toolloop.Reasoning{Redacted: true, CallID: "toolu_01ToK7yo3pLm9Vb4Xn2Wq6Rc",
					Encrypted: "EmwKAhgBEgyXk2Lm7VbT3yZPaR1s5wQ8nX/aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ=="}),
			}, ToolCalls: []toolloop.ToolCall{
				{ID: "toolu_01PaR1s5wQ8nXk2Lm7VbT3yZ", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "toolu_01ToK7yo3pLm9Vb4Xn2Wq6Rc", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo"}`)},
			}},
			StopReason: toolloop.StopToolUse,
			Usage:      toolloop.Usage{InputTokens: 402, OutputTokens: 171, ReasoningTokens: 64},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: "generate_thinking", Response: tt.response})
			got, err := modelFor(t, srv, Config{Thinking: Thinking{Budget: 2048}}).Generate(context.Background(), replay.WeatherRequest())
			require.NoError(t, err)
			tt.want.Model = "claude-sonnet-4-5-20250929"
			assert.JSONEq(t, replay.JSON(t, tt.want), replay.JSON(t, got))
		})
	}
}

// TestInterleavedThinkingSentBackInPlace sends an answer with thinking
// between two tool calls back: each thinking block must come back just
// before the tool_use it preceded.
func TestInterleavedThinkingSentBackInPlace(t *testing.T) {
	srv := serve(t,
		replay.Step{Response: "interleaved_tool_calls.json"},
		replay.Step{Golden: "interleaved_turn2", Response: "plain.json"},
	)
	m := modelFor(t, srv, Config{Thinking: Thinking{Budget: 4096, Interleaved: true}, MaxTokens: 2048})
	req := replay.WeatherRequest()
	resp, err := m.Generate(context.Background(), req)
	require.NoError(t, err)
	msgs := append(req.Messages, resp.Message)
	for _, tc := range resp.Message.ToolCalls {
		msgs = append(msgs, toolloop.ToolMessage(&toolloop.ToolResult{CallID: tc.ID, Name: tc.Name, Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.TextContent(`{"temp_c":18}`)}}))
	}
	_, err = m.Generate(context.Background(), &toolloop.Request{Messages: msgs, Tools: req.Tools})
	require.NoError(t, err)
	for _, r := range srv.Requests() {
		assert.Equal(t, []string{"interleaved-thinking-2025-05-14"}, r.Header.Values("Anthropic-Beta"))
	}
}

func TestAssistantBlockOrder(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	sig := func(s string) toolloop.Content {
		return reasoning("thinking "+s, toolloop.Reasoning{Signature: "sig" + s})
	}
	tied := func(s, call string) toolloop.Content {
		return reasoning("thinking "+s, toolloop.Reasoning{Signature: "sig" + s, CallID: call})
	}
	calls := []toolloop.ToolCall{{ID: "A", Name: "t"}, {ID: "B", Name: "t"}, {ID: "C", Name: "t"}}
	tests := []struct {
		name    string
		content []toolloop.Content
		want    []string
	}{
		{"no reasoning", []toolloop.Content{toolloop.TextContent("x")}, []string{"text", "A", "B", "C"}},
		{"thinking first", []toolloop.Content{sig("1"), toolloop.TextContent("x")}, []string{"thinking 1", "text", "A", "B", "C"}},
		{"interleaved", []toolloop.Content{sig("1"), tied("2", "B"), tied("3", "C")},
			[]string{"thinking 1", "A", "thinking 2", "B", "thinking 3", "C"}},
		{"text after tied thinking", []toolloop.Content{tied("2", "B"), toolloop.TextContent("x")},
			[]string{"A", "thinking 2", "B", "text", "C"}},
		{"two blocks before one call", []toolloop.Content{tied("2", "C"), tied("3", "C")},
			[]string{"A", "B", "thinking 2", "thinking 3", "C"}},
		{"unknown call keeps its place", []toolloop.Content{tied("2", "Z"), toolloop.TextContent("x")},
			[]string{"thinking 2", "text", "A", "B", "C"}},
		{"omitted text, signature kept", []toolloop.Content{reasoning("", toolloop.Reasoning{Signature: "s"})},
			[]string{"", "A", "B", "C"}},
		{"cut off without a signature", []toolloop.Content{reasoning("half a thou", toolloop.Reasoning{}), toolloop.TextContent("x")},
			[]string{"text", "A", "B", "C"}},
		{"another provider's", []toolloop.Content{
			toolloop.ReasoningContent("theirs", toolloop.Reasoning{Provider: "openai.chat", Signature: "s", CallID: "B"}),
			toolloop.TextContent("x")}, []string{"text", "A", "B", "C"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks := m.assistantBlocks(&toolloop.Message{Role: toolloop.RoleAssistant, Content: tt.content, ToolCalls: calls})
			var got []string
			for _, b := range blocks {
				switch {
				case b.OfThinking != nil:
					got = append(got, b.OfThinking.Thinking)
				case b.OfToolUse != nil:
					got = append(got, b.OfToolUse.ID)
				case b.OfText != nil:
					got = append(got, "text")
				default:
					t.Fatalf("unexpected block %+v", b)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStreamThinking(t *testing.T) {
	for _, chunk := range []int{1, 7, 4096} {
		srv := serve(t, replay.Step{Golden: "stream_thinking", Response: "stream_thinking.sse", Chunk: chunk})
		m := modelFor(t, srv, Config{Thinking: Thinking{Budget: 10000, Display: "summarized"}})
		var thoughts, text []string
		var resp *toolloop.Response
		for ch, err := range m.Stream(context.Background(), replay.WeatherRequest()) {
			require.NoError(t, err)
			if ch.Reasoning != "" {
				thoughts = append(thoughts, ch.Reasoning)
			}
			if ch.Text != "" {
				text = append(text, ch.Text)
			}
			if ch.Response != nil {
				resp = ch.Response
			}
		}
		require.NotNil(t, resp)
		thinking := "I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0\n\nSo GCD(1071, 462) = 21"
		assert.Equal(t, thinking, strings.Join(thoughts, ""))
		assert.Len(t, thoughts, 2)
		assert.Equal(t, []toolloop.Content{
			reasoning(thinking, toolloop.Reasoning{Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+TkNTq4Tz3vWnS6PcZ1mQ8yXoL0aR2fJ5hG7uE9iK=="}),
			toolloop.TextContent("The greatest common divisor of 1071 and 462 is **21**."),
		}, resp.Message.Content)
		assert.Equal(t, strings.Join(text, ""), resp.Message.Text())
		assert.Equal(t, toolloop.Usage{InputTokens: 45, OutputTokens: 88, ReasoningTokens: 61}, resp.Usage)
	}
}

// TestThinkingAgentLoop runs a two-turn loop with extended thinking and a
// tool call: the second request must send the thinking block back, with
// its signature, before the tool_use.
func TestThinkingAgentLoop(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "thinking_loop_turn1", Response: "thinking_loop_turn1.sse"},
		replay.Step{Golden: "thinking_loop_turn2", Response: "thinking_loop_turn2.sse"},
	)
	var rec looptest.Recorder
	loop := &toolloop.AgentLoop{Model: modelFor(t, srv, Config{Thinking: Thinking{Budget: 2048}}), Tools: replay.WeatherTools(), OnEvent: rec.Record}
	res, err := loop.Run(context.Background(), []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant. Use the tools."),
		toolloop.UserMessage("What's the weather in Paris?"),
	})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, 2, res.Turns)
	assert.Equal(t, "It is 18°C in Paris, with light rain.", res.FinalText)
	assert.Equal(t, toolloop.Usage{InputTokens: 610 + 802, OutputTokens: 118 + 16, ReasoningTokens: 41}, res.Usage)
	var thoughts []string
	for _, e := range rec.Of(toolloop.EventModelReasoningDelta) {
		thoughts = append(thoughts, e.Text)
	}
	assert.Equal(t, "The user wants the weather in Paris. I should call get_weather with city Paris.", strings.Join(thoughts, ""))
	replay.AssertGoldenTranscript(t, filepath.Join("testdata", "transcripts", "thinking_loop.json"), res.Messages, *update)

	// The transcript survives JSON and is sent back the same.
	b, err := json.Marshal(res.Messages)
	require.NoError(t, err)
	var back []toolloop.Message
	require.NoError(t, json.Unmarshal(b, &back))
	m := mustNew(t, Config{APIKey: "unused", Thinking: Thinking{Budget: 2048}})
	before, err := m.params(&toolloop.Request{Messages: res.Messages})
	require.NoError(t, err)
	after, err := m.params(&toolloop.Request{Messages: back})
	require.NoError(t, err)
	assert.JSONEq(t, replay.JSON(t, before), replay.JSON(t, after))
	assert.Contains(t, replay.JSON(t, after), `"signature":"ErUBCkYIBRgCIkB1xQm7Zt2Lp9xWv3Ns8KbGc4dQ/oFjnW6ZfO2hPyA9gLs4tUe7VkxB0mNi5wQjC8rD3aHpGzS1oYv6uFEk2IT=="`)
}

// TestOtherProvidersReasoningDropped sends a transcript whose reasoning
// came from OpenAI: none of it reaches the request, as a block or as text.
func TestOtherProvidersReasoningDropped(t *testing.T) {
	srv := serve(t, replay.Step{Golden: "foreign_reasoning", Response: "plain.json"})
	foreign := func(text string) toolloop.Content {
		return toolloop.ReasoningContent(text, toolloop.Reasoning{Provider: "openai.chat", ID: "rs_1", Encrypted: "gAAAA-secret", Summary: true})
	}
	msgs := []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant."),
		toolloop.UserMessage("What's the weather in Paris?"),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{foreign("chain of thought about Paris"), toolloop.TextContent("Checking.")},
			ToolCalls: []toolloop.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
		toolloop.ToolMessage(&toolloop.ToolResult{CallID: "call_1", Name: "get_weather", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.TextContent(`{"temp_c":18}`), foreign("reasoning in a result")}}),
		{Role: toolloop.RoleAssistant, Content: []toolloop.Content{foreign("more thought")}},
		{Role: toolloop.RoleUser, Content: []toolloop.Content{toolloop.TextContent("Thanks!"), foreign("reasoning in a user turn")}},
	}
	_, err := modelFor(t, srv, Config{Thinking: Thinking{Adaptive: true}, Effort: "medium"}).Generate(context.Background(),
		&toolloop.Request{Messages: msgs, Tools: []toolloop.ToolSpec{replay.WeatherTool}})
	require.NoError(t, err)
	body := string(srv.Bodies()[0])
	for _, s := range []string{"thought", "reasoning", "secret", "rs_1", "not shown"} {
		assert.NotContains(t, body, s)
	}
}

func TestThinkingConfig(t *testing.T) {
	temp := 0.5
	tests := []struct {
		name      string
		cfg       Config
		ok        bool
		maxTokens int64
	}{
		{"off", Config{}, true, DefaultMaxTokens},
		{"budget raises the default max tokens", Config{Thinking: Thinking{Budget: 8000}}, true, 8000 + DefaultMaxTokens},
		{"max tokens above the budget", Config{Thinking: Thinking{Budget: 8000}, MaxTokens: 9000}, true, 9000},
		{"max tokens at the budget", Config{Thinking: Thinking{Budget: 8000}, MaxTokens: 8000}, false, 0},
		{"interleaved budget may exceed max tokens", Config{Thinking: Thinking{Budget: 8000, Interleaved: true}, MaxTokens: 4000}, true, 4000},
		{"adaptive", Config{Thinking: Thinking{Adaptive: true, Display: "omitted"}}, true, DefaultMaxTokens},
		{"budget and adaptive", Config{Thinking: Thinking{Budget: 2048, Adaptive: true}}, false, 0},
		{"negative budget", Config{Thinking: Thinking{Budget: -1}}, false, 0},
		{"temperature with thinking", Config{Thinking: Thinking{Budget: 2048}, Temperature: &temp}, false, 0},
		{"temperature with adaptive thinking", Config{Thinking: Thinking{Adaptive: true}, Temperature: &temp}, false, 0},
		{"temperature without thinking", Config{Temperature: &temp}, true, DefaultMaxTokens},
		{"display without thinking", Config{Thinking: Thinking{Display: "summarized"}}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.APIKey = "unused"
			m, err := New(cfg)
			if !tt.ok {
				require.ErrorIs(t, err, ErrConfig)
				require.ErrorIs(t, err, providers.ErrConfig)
				assert.NotErrorIs(t, err, providers.ErrAuth, "the key is there")
				assert.Nil(t, m)
				return
			}
			require.NoError(t, err)
			p, err := m.params(replay.WeatherRequest())
			require.NoError(t, err)
			assert.Equal(t, tt.maxTokens, p.MaxTokens)
		})
	}
}
