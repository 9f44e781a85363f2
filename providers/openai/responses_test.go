package openai

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/replay"
)

// rapi names a file of testdata/responses_api for a replay step, whose
// responses are read from testdata/responses.
func rapi(name string) string { return "../responses_api/" + name }

// responsesFor returns a Responses model talking to srv with a fake key;
// cfg sets the rest.
func responsesFor(t testing.TB, srv *replay.Server, cfg Config) *ResponsesModel {
	t.Helper()
	cfg.BaseURL = srv.URL
	cfg.APIKey = "test-key"
	cfg.HTTPClient = srv.Client()
	if cfg.Model == "" {
		cfg.Model = "gpt-4.1"
	}
	return mustNewResponses(t, cfg)
}

// encrypted1 is the encrypted content of the reasoning in
// reasoning_tool_call.json and reasoning_turn1.sse.
const encrypted1 = "gAAAAABoR1x2c8lQ0pKz3nT7vWmY9sFh2Jd6eRq1UoXbA4iLgC5yNwE8tMZkPVr0HjSfDa7lOqB3uGxc9YnI2mTeW6vKzL1pRs4QdNh8JbFoC0gUiA5yXwE3tMlPVr7HjSkDa2lOqB9uGxc6YnI1mTeW4vKzL8pRs5QdNh3JbFoC7gUiA0yXwE=="

// TestResponsesWithoutEncryptedReasoning: a model that cannot return
// encrypted reasoning says so about the include parameter; the request is
// sent again without it, and so are the next ones.
func TestResponsesWithoutEncryptedReasoning(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "responses_generate", Status: http.StatusBadRequest, Response: rapi("error_include.json")},
		replay.Step{Golden: "responses_no_include", Response: rapi("text.json")},
		replay.Step{Golden: "responses_no_include_stream", Response: rapi("stream_text.sse")},
	)
	m := responsesFor(t, srv, Config{})
	resp, err := m.Generate(context.Background(), replay.WeatherRequest())
	require.NoError(t, err)
	assert.Equal(t, "Hello! How can I help you today?", resp.Message.Text())
	got := replay.Collect(m, replay.WeatherRequest())
	require.NoError(t, got.Err)
	assert.Equal(t, toolloop.StopEnd, got.Response.StopReason)
}

func TestResponsesStreamWithoutEncryptedReasoning(t *testing.T) {
	srv := serve(t,
		replay.Step{Golden: "responses_stream", Status: http.StatusBadRequest, Response: rapi("error_include.json")},
		replay.Step{Golden: "responses_no_include_stream", Response: rapi("stream_text.sse")},
	)
	got := replay.Collect(responsesFor(t, srv, Config{}), replay.WeatherRequest())
	require.NoError(t, got.Err)
	assert.Equal(t, toolloop.StopEnd, got.Response.StopReason)
}
