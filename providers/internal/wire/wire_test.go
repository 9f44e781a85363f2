package wire

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
)

func TestFragments(t *testing.T) {
	tests := []struct {
		name   string
		pieces [][2]string // raw literal, decoded text
		want   string
	}{
		{"plain", [][2]string{{`"{\"a\":"`, `{"a":`}, {`"1}"`, `1}`}}, `{"a":1}`},
		{"surrogate pair split", [][2]string{{`"\ud83c"`, "\ufffd"}, {`"\udf27"`, "\ufffd"}}, "🌧"},
		{"bytes of one character split", [][2]string{{"\"\xe6\x9d\"", "\xe6\x9d"}, {"\"\xb1\"", "\xb1"}}, "東"},
		{"escape in the middle", [][2]string{{`"a\\"`, `a\`}, {`"n"`, `n`}}, `a\n`},
		{"no raw literal", [][2]string{{``, `{"a"`}, {`"\ud83c"`, "\ufffd"}}, "{\"a\"\ufffd"},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Fragments
			for _, p := range tt.pieces {
				f.Add(p[0], p[1])
			}
			assert.Equal(t, tt.want, f.String())
			assert.Equal(t, len(tt.pieces), f.Len())
		})
	}
}

func TestObjectSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string
		notes  int
	}{
		{"nil", ``, `{"type":"object","properties":{}}`, 0},
		{"plain", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`, 0},
		{"metadata dropped", `{"$schema":"x","$id":"y","type":"object"}`, `{"type":"object"}`, 0},
		{"root combinators dropped", `{"type":"object","properties":{"a":{}},"anyOf":[{"required":["a"]}],"oneOf":[{}]}`, `{"type":"object","properties":{"a":{}}}`, 2},
		{"type added", `{"properties":{}}`, `{"type":"object","properties":{}}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes, err := ObjectSchema(json.RawMessage(tt.schema))
			require.NoError(t, err)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
			assert.Len(t, notes, tt.notes)
		})
	}
	_, _, err := ObjectSchema(json.RawMessage(`[1]`))
	assert.Error(t, err)
}

func TestCache(t *testing.T) {
	var c Cache[int]
	calls := 0
	f := func() int { calls++; return calls }
	assert.Equal(t, 1, c.Get(Key("a", "b"), f))
	assert.Equal(t, 1, c.Get(Key("a", "b"), f))
	assert.Equal(t, 2, c.Get(Key("ab", ""), f), "keys do not run together")
}

func TestAsText(t *testing.T) {
	assert.Equal(t, "hi", AsText(toolloop.TextContent("hi")))
	assert.Equal(t, `{"a":1}`, AsText(toolloop.JSONContent(json.RawMessage(`{"a":1}`))))
	assert.Equal(t, "body", AsText(toolloop.Content{Type: toolloop.ContentResource, URI: "file:///a", Text: "body"}))
	assert.Contains(t, AsText(toolloop.Content{Type: toolloop.ContentAudio, MIMEType: "audio/ogg", Data: []byte{1}}), "audio/ogg")
}

func TestImageType(t *testing.T) {
	for in, want := range map[string]string{"image/png": "image/png", "IMAGE/JPG": "image/jpeg", "image/webp; q=1": "image/webp"} {
		got, ok := ImageType(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got)
	}
	_, ok := ImageType("image/bmp")
	assert.False(t, ok)
}

func TestStatusKind(t *testing.T) {
	assert.Equal(t, providers.ErrRateLimit, StatusKind(http.StatusTooManyRequests))
	assert.Equal(t, providers.ErrOverloaded, StatusKind(529))
	assert.Equal(t, providers.ErrOverloaded, StatusKind(http.StatusServiceUnavailable))
	assert.Equal(t, providers.ErrAuth, StatusKind(http.StatusUnauthorized))
	assert.Equal(t, providers.ErrContextLength, StatusKind(http.StatusRequestEntityTooLarge))
	assert.Nil(t, StatusKind(http.StatusBadRequest))
}

func TestOwnReasoning(t *testing.T) {
	own := toolloop.ReasoningContent("x", toolloop.Reasoning{Provider: "anthropic", Signature: "s"})
	assert.True(t, OwnReasoning(own, "anthropic"))
	assert.False(t, OwnReasoning(own, "openai"))
	assert.False(t, OwnReasoning(toolloop.TextContent("x"), "anthropic"))
	assert.False(t, OwnReasoning(toolloop.Content{Type: toolloop.ContentReasoning}, "anthropic"), "a block without provider data is no one's")
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{nil, 0},
		{http.Header{}, 0},
		{http.Header{"Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"9"}}, 9 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(20 * time.Second).Format(http.TimeFormat)}}, 20 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"999999999"}}, time.Hour},
		{http.Header{"Retry-After-Ms": {"nan"}, "Retry-After": {"2"}}, 2 * time.Second},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, RetryAfter(tt.h, now), "%v", tt.h)
	}
}
