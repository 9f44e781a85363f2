package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// cacheRequest is a loop's third request: a system prompt of two blocks,
// a question, two tool rounds (three user turns in the API's terms), and
// two tools.
func cacheRequest() *toolloop.Request {
	result := func(id, text string) toolloop.Message {
		return toolloop.ToolMessage(&toolloop.ToolResult{CallID: id, Name: "get_weather", Status: toolloop.StatusOK,
			Content: []toolloop.Content{toolloop.TextContent(text)}})
	}
	call := func(id, city string) toolloop.Message {
		return toolloop.Message{Role: toolloop.RoleAssistant, StopReason: toolloop.StopToolUse,
			ToolCalls: []toolloop.ToolCall{{ID: id, Name: "get_weather", Arguments: json.RawMessage(`{"city":"` + city + `"}`)}}}
	}
	return &toolloop.Request{
		Messages: []toolloop.Message{
			{Role: toolloop.RoleSystem, Content: []toolloop.Content{
				toolloop.TextContent("You are a weather assistant."), toolloop.TextContent("Answer in one sentence.")}},
			toolloop.UserMessage("Compare Paris and Tokyo."),
			call("toolu_1", "Paris"),
			result("toolu_1", `{"temp_c":18}`),
			call("toolu_2", "Tokyo"),
			result("toolu_2", `{"temp_c":24}`),
		},
		Tools: []toolloop.ToolSpec{replay.WeatherTool, {Name: "to_fahrenheit", Description: "Convert Celsius to Fahrenheit.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"celsius":{"type":"number"}},"required":["celsius"]}`)}},
	}
}

func TestCacheBreakpoints(t *testing.T) {
	tests := []struct {
		golden string
		cfg    Config
		marks  int
	}{
		{"cache_none", Config{PromptCache: PromptCache{Off: true}}, 0},
		{"cache_default", Config{}, 4},
		{"cache_default_1h", Config{PromptCache: PromptCache{TTL: "1h"}}, 4},
		{"cache_prompt_alone", Config{CachePrompt: true}, 0},
		{"cache_tools_system", Config{PromptCache: PromptCache{Tools: true, System: true}}, 2},
		{"cache_turns", Config{PromptCache: PromptCache{Turns: 2}}, 2},
		{"cache_all_1h", Config{PromptCache: PromptCache{Tools: true, System: true, Turns: 2, TTL: "1h"}}, 4},
		{"cache_more_turns_than_there_are", Config{PromptCache: PromptCache{Turns: 4}}, 3},
		{"cache_prompt_and_turns", Config{CachePrompt: true, PromptCache: PromptCache{Turns: 3}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			srv := serve(t, replay.Step{Golden: tt.golden, Response: "cached_usage.json"})
			resp, err := modelFor(t, srv, tt.cfg).Generate(context.Background(), cacheRequest())
			require.NoError(t, err)
			assert.Equal(t, toolloop.Usage{InputTokens: 21 + 1500 + 3000, OutputTokens: 5, CacheReadTokens: 3000, CacheWriteTokens: 1500}, resp.Usage)
			var body map[string]any
			require.NoError(t, json.Unmarshal(srv.Bodies()[0], &body))
			delete(body, "cache_control")
			assert.Equal(t, tt.marks, countMarks(body), "block-level cache_control markers")
		})
	}
}

// countMarks counts the cache_control markers in a request body, less
// the top-level one.
func countMarks(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "cache_control" {
				n++
			}
			n += countMarks(x)
		}
	case []any:
		for _, x := range v {
			n += countMarks(x)
		}
	}
	return n
}

func TestTopLevelCacheControlNotCounted(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused", CachePrompt: true})
	p, err := m.params(cacheRequest())
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(replay.JSON(t, p)), &body))
	assert.Equal(t, 1, countMarks(body))
	delete(body, "cache_control")
	assert.Equal(t, 0, countMarks(body))
}

func TestCacheBreakpointLimit(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"four", Config{PromptCache: PromptCache{Tools: true, System: true, Turns: 2}}, true},
		{"four with CachePrompt", Config{CachePrompt: true, PromptCache: PromptCache{System: true, Turns: 2}}, true},
		{"five", Config{PromptCache: PromptCache{Tools: true, System: true, Turns: 3}}, false},
		{"five with CachePrompt", Config{CachePrompt: true, PromptCache: PromptCache{Tools: true, System: true, Turns: 2}}, false},
		{"many turns", Config{PromptCache: PromptCache{Turns: 10}}, false},
		{"negative turns", Config{PromptCache: PromptCache{Turns: -1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				cfg := tt.cfg
				cfg.APIKey = "unused"
				_, err := New(cfg)
				require.ErrorIs(t, err, ErrConfig, "a config the API refuses fails at once")
				return
			}
			srv := serve(t, replay.Step{Response: "plain.json"})
			_, err := modelFor(t, srv, tt.cfg).Generate(context.Background(), cacheRequest())
			require.NoError(t, err)
		})
	}
}

// TestCachedToolsUnmarked checks that marking the last tool leaves the
// tool conversions the model caches across requests untouched.
func TestCachedToolsUnmarked(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused", PromptCache: PromptCache{Tools: true}})
	req := cacheRequest()
	for range 2 {
		p, err := m.params(req)
		require.NoError(t, err)
		require.Len(t, p.Tools, 2)
		assert.Equal(t, 0, countMarks(mustDecode(t, replay.JSON(t, p.Tools[0]))))
		assert.Equal(t, 1, countMarks(mustDecode(t, replay.JSON(t, p.Tools[1]))))
	}
	for _, spec := range req.Tools {
		assert.Equal(t, 0, countMarks(mustDecode(t, replay.JSON(t, m.tool(spec).param))), spec.Name)
	}
	other := mustNew(t, Config{APIKey: "unused", PromptCache: PromptCache{Off: true}})
	p, err := other.params(req)
	require.NoError(t, err)
	assert.Equal(t, 0, countMarks(mustDecode(t, replay.JSON(t, p))))
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func TestDefaultPromptCache(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want PromptCache
	}{
		{"zero", Config{}, PromptCache{Tools: true, System: true, Turns: 2}},
		{"TTL only", Config{PromptCache: PromptCache{TTL: "1h"}}, PromptCache{Tools: true, System: true, Turns: 2, TTL: "1h"}},
		{"off", Config{PromptCache: PromptCache{Off: true}}, PromptCache{Off: true}},
		{"off wins", Config{PromptCache: PromptCache{Off: true, Turns: 2}}, PromptCache{Off: true, Turns: 2}},
		{"explicit", Config{PromptCache: PromptCache{System: true}}, PromptCache{System: true}},
		{"CachePrompt keeps its one breakpoint", Config{CachePrompt: true}, PromptCache{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.APIKey = "unused"
			m := mustNew(t, cfg)
			assert.Equal(t, tt.want, m.cfg.PromptCache)
			p, err := m.params(cacheRequest())
			require.NoError(t, err)
			body := mustDecode(t, replay.JSON(t, p)).(map[string]any)
			delete(body, "cache_control")
			assert.Equal(t, tt.want.breakpoints(), countMarks(body))
		})
	}
}

// TestDefaultBreakpointsFollowTheLoop checks that, with the default
// placement, each request of a loop carries a breakpoint where the
// previous request put its last one, so that it reads what that one
// wrote.
func TestDefaultBreakpointsFollowTheLoop(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused"})
	full := cacheRequest()
	var prev string
	for _, n := range []int{2, 4, 6} { // the question, then each tool round
		req := *full
		req.Messages = full.Messages[:n]
		p, err := m.params(&req)
		require.NoError(t, err)
		last := p.Messages[len(p.Messages)-1]
		mark := replay.JSON(t, last.Content[len(last.Content)-1])
		require.Contains(t, mark, "cache_control", "the last turn is marked")
		if prev != "" {
			var found bool
			for _, msg := range p.Messages {
				for _, b := range msg.Content {
					found = found || replay.JSON(t, b) == prev
				}
			}
			assert.True(t, found, "the block the previous request marked last is marked in this one too: %s", prev)
		}
		prev = mark
	}
}
