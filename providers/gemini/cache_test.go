package gemini

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// cacheName is the name of the cache in cache_created.json.
const cacheName = "cachedContents/q4x7mzv2k9hd1rnb6ct0wy3lpe8s5fgj"

// TestCachedContent checks that a request with Config.CachedContent names
// the cache and leaves out what the API takes only inside it: the system
// instruction, the tools and the tool config.
func TestCachedContent(t *testing.T) {
	var logs replay.LogRecorder
	srv := serve(t,
		replay.Step{Golden: "cached_content", Response: "cached_usage.json"},
		replay.Step{Golden: "cached_content_tool_choice_none", Response: "cached_usage.json"},
	)
	m := modelFor(t, srv, Config{CachedContent: cacheName, Logger: slog.New(&logs)})
	resp, err := m.Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	assert.Equal(t, int64(3000), resp.Usage.CacheReadTokens)
	assert.Empty(t, logs.Attrs(slog.LevelDebug))

	req := replay.WeatherRequest()
	req.ToolChoice = toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}
	_, err = m.Generate(context.Background(), req)
	require.NoError(t, err)
	logged := logs.Attrs(slog.LevelDebug)
	require.Len(t, logged, 1, "a tool choice left out is logged")
	assert.Equal(t, cacheName, logged[0]["cache"])

	for _, b := range srv.Bodies() {
		var body map[string]any
		require.NoError(t, json.Unmarshal(b, &body))
		assert.Equal(t, cacheName, body["cachedContent"])
		for _, k := range []string{"systemInstruction", "tools", "toolConfig"} {
			assert.NotContains(t, body, k)
		}
		assert.NotEmpty(t, body["contents"])
	}
}

// TestCachedContentEditable checks that EditRequest sees the request as
// it will be sent, cache included, and may change it.
func TestCachedContentEditable(t *testing.T) {
	m := mustNew(t, Config{APIKey: "unused", CachedContent: cacheName})
	_, config, err := m.params(replay.WeatherRequest())
	require.NoError(t, err)
	assert.Equal(t, cacheName, config.CachedContent)
	assert.Nil(t, config.SystemInstruction)

	plain := mustNew(t, Config{APIKey: "unused"})
	_, config, err = plain.params(replay.WeatherRequest())
	require.NoError(t, err)
	assert.Empty(t, config.CachedContent, "no cache unless asked")
	assert.NotNil(t, config.SystemInstruction)
	assert.Len(t, config.Tools, 1)
}

// TestCreateCache creates a cache from a request, then sends the request
// with it.
func TestCreateCache(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "create_cache", Response: "cache_created.json"},
		replay.Step{Golden: "cached_content", Response: "cached_usage.json"},
	)
	m := modelFor(t, srv, Config{})
	name, err := m.CreateCache(context.Background(), replay.WeatherRequest(), time.Hour)
	require.NoError(t, err)
	assert.Equal(t, cacheName, name)
	assert.Equal(t, "/v1beta/cachedContents", srv.Requests()[0].URL.Path)

	var body map[string]any
	require.NoError(t, json.Unmarshal(srv.Bodies()[0], &body))
	assert.Equal(t, "3600s", body["ttl"])
	assert.NotContains(t, body, "contents", "only the system instruction and tools are cached")

	cached := modelFor(t, srv, Config{CachedContent: name})
	_, err = cached.Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
}

// TestCreateCacheError checks that an error of the API comes back as the
// package's errors do.
func TestCreateCacheError(t *testing.T) {
	srv := serve(t, replay.Step{Status: 400, Response: "error_bad_request.json"})
	_, err := modelFor(t, srv, Config{}).CreateCache(context.Background(), replay.WeatherRequest(), 0)
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 400, pe.StatusCode)
	assert.Equal(t, ProviderName, pe.Provider)
}

// TestRequestByteStable checks that the same transcript and tools give
// the same request bytes, whatever order the tools were registered in and
// their schemas' keys were written in, from one request to the next and
// from one Model to another: what implicit caching needs to hit.
func TestRequestByteStable(t *testing.T) {
	const models, rounds = 2, 8
	steps := make([]replay.Step, models*rounds)
	for i := range steps {
		steps[i] = replay.Step{Response: "plain.json"}
	}
	srv := serve(t, steps...)
	for range models { // a new Model converts the tools afresh
		m := modelFor(t, srv, Config{})
		for i := range rounds {
			_, err := m.Generate(context.Background(), replay.StableRequest(t, i))
			require.NoError(t, err)
		}
	}
	replay.AssertSameBytes(t, srv.Bodies())
}
