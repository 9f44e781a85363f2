package openai

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// conversation returns the transcript of a weather conversation about
// city after turns tool rounds.
func conversation(city string, turns int) []toolloop.Message {
	msgs := []toolloop.Message{
		toolloop.SystemMessage("You are a weather assistant."),
		toolloop.UserMessage("What's the weather in " + city + "?"),
	}
	for i := range turns {
		id := "call_" + string(rune('a'+i))
		msgs = append(msgs,
			toolloop.Message{Role: toolloop.RoleAssistant, StopReason: toolloop.StopToolUse,
				ToolCalls: []toolloop.ToolCall{{ID: id, Name: "get_weather", Arguments: json.RawMessage(`{"city":"` + city + `"}`)}}},
			toolloop.ToolMessage(&toolloop.ToolResult{CallID: id, Name: "get_weather", Status: toolloop.StatusOK,
				Content: []toolloop.Content{toolloop.TextContent(`{"temp_c":18}`)}}))
	}
	return msgs
}

func TestConversationKey(t *testing.T) {
	key := func(msgs []toolloop.Message) string {
		return ConversationKey(&toolloop.Request{Messages: msgs, Tools: []toolloop.ToolSpec{replay.WeatherTool}})
	}
	paris := key(conversation("Paris", 0))
	assert.Regexp(t, regexp.MustCompile(`^toolloop-[0-9a-f]{32}$`), paris)
	for turns := 1; turns <= 3; turns++ {
		assert.Equal(t, paris, key(conversation("Paris", turns)), "every turn of a conversation has its key")
	}
	noTools := ConversationKey(&toolloop.Request{Messages: conversation("Paris", 2)})
	assert.Equal(t, paris, noTools, "a change of tools keeps the key")
	assert.NotEqual(t, paris, key(conversation("Tokyo", 0)), "another task, another key")
	other := conversation("Paris", 1)
	other[0] = toolloop.SystemMessage("You are a travel agent.")
	assert.NotEqual(t, paris, key(other), "another system prompt, another key")
	assert.Empty(t, ConversationKey(&toolloop.Request{}))
}

func TestPromptCacheKeyDefault(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	req := &toolloop.Request{Messages: conversation("Paris", 1), Tools: []toolloop.ToolSpec{replay.WeatherTool}}
	fixed := func(*toolloop.Request) string { return "my-app" }
	none := func(*toolloop.Request) string { return "" }
	tests := []struct {
		name string
		cfg  Config
		want string // "" for no prompt_cache_key
	}{
		{"OpenAI: one key per conversation", Config{}, ConversationKey(req)},
		{"OpenAI on its host", Config{BaseURL: "https://api.openai.com/v1"}, ConversationKey(req)},
		{"another server: none", Config{BaseURL: "http://localhost:11434/v1"}, ""},
		{"RequestOptions may point elsewhere: none", Config{RequestOptions: []option.RequestOption{option.WithHeader("X-Test", "1")}}, ""},
		{"a fixed key", Config{PromptCacheKey: fixed}, "my-app"},
		{"a fixed key on another server", Config{BaseURL: "http://localhost:11434/v1", PromptCacheKey: fixed}, "my-app"},
		{"the default key on another server", Config{BaseURL: "http://localhost:11434/v1", PromptCacheKey: ConversationKey}, ConversationKey(req)},
		{"turned off", Config{PromptCacheKey: none}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.APIKey = "unused"
			chat, err := mustNew(t, cfg).params(req)
			require.NoError(t, err)
			resp, err := mustNewResponses(t, cfg).params(req)
			require.NoError(t, err)
			for api, body := range map[string]map[string]any{"chat": replay.Body(t, chat), "responses": replay.Body(t, resp)} {
				if tt.want == "" {
					assert.NotContains(t, body, "prompt_cache_key", api)
				} else {
					assert.Equal(t, tt.want, body["prompt_cache_key"], api)
				}
				assert.NotContains(t, body, "prompt_cache_retention", api)
			}
		})
	}
}

// TestPromptCacheOnTheWire runs two conversations of three turns through
// each API and checks what the server receives: one prompt_cache_key per
// conversation, the same on each of its turns, and the retention.
func TestPromptCacheOnTheWire(t *testing.T) {
	apis := []struct {
		name  string
		model func(*replay.Server, Config) toolloop.Model
		turn  func(int) string
	}{
		{"chat", func(s *replay.Server, c Config) toolloop.Model { return modelFor(t, s, c) },
			func(i int) string { return []string{"loop_turn1.sse", "loop_turn2.sse", "loop_turn3.sse"}[i] }},
		{"responses", func(s *replay.Server, c Config) toolloop.Model { return responsesFor(t, s, c) },
			func(i int) string { return rapi([]string{"loop_turn1.sse", "loop_turn2.sse", "loop_turn3.sse"}[i]) }},
	}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			var steps []replay.Step
			for range 2 {
				for i := range 3 {
					steps = append(steps, replay.Step{Response: api.turn(i)})
				}
			}
			srv := serve(t, steps...)
			cfg := Config{PromptCacheKey: ConversationKey, PromptCacheRetention: "24h"}
			for _, city := range []string{"Paris", "Tokyo"} {
				loop := &toolloop.AgentLoop{Model: api.model(srv, cfg), Tools: replay.WeatherTools()}
				_, err := loop.Run(context.Background(), []toolloop.Message{
					toolloop.SystemMessage("You are a weather assistant. Use the tools."),
					toolloop.UserMessage("Compare the weather in " + city + " and elsewhere."),
				})
				require.NoError(t, err)
			}
			bodies := srv.Bodies()
			require.Len(t, bodies, 6)
			keys := make([]any, len(bodies))
			for i, b := range bodies {
				var body map[string]any
				require.NoError(t, json.Unmarshal(b, &body))
				keys[i] = body["prompt_cache_key"]
				assert.Equal(t, "24h", body["prompt_cache_retention"])
			}
			assert.NotEmpty(t, keys[0])
			assert.Equal(t, []any{keys[0], keys[0], keys[0]}, keys[:3], "one key for every turn of a conversation")
			assert.Equal(t, []any{keys[3], keys[3], keys[3]}, keys[3:], "one key for every turn of a conversation")
			assert.NotEqual(t, keys[0], keys[3], "another conversation, another key")
		})
	}
}

// TestRequestByteStable checks that the same transcript and tools give
// the same request bytes on both APIs, whatever order the tools were
// registered in and their schemas' keys were written in, from one request
// to the next and from one Model to another.
func TestRequestByteStable(t *testing.T) {
	const models, rounds = 2, 8
	cfg := Config{Strict: true, PromptCacheKey: ConversationKey, PromptCacheRetention: "24h"}
	t.Run("chat", func(t *testing.T) {
		steps := make([]replay.Step, models*rounds)
		for i := range steps {
			steps[i] = replay.Step{Response: "plain.json"}
		}
		srv := serve(t, steps...)
		for range models {
			m := modelFor(t, srv, cfg)
			for i := range rounds {
				_, err := m.Generate(context.Background(), replay.StableRequest(t, i))
				require.NoError(t, err)
			}
		}
		replay.AssertSameBytes(t, srv.Bodies())
	})
	t.Run("responses", func(t *testing.T) {
		steps := make([]replay.Step, models*rounds)
		for i := range steps {
			steps[i] = replay.Step{Response: rapi("text.json")}
		}
		srv := serve(t, steps...)
		for range models {
			m := responsesFor(t, srv, cfg)
			for i := range rounds {
				_, err := m.Generate(context.Background(), replay.StableRequest(t, i))
				require.NoError(t, err)
			}
		}
		replay.AssertSameBytes(t, srv.Bodies())
	})
}
