package openai

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"sync/atomic"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// ResponsesProvider is the name the Responses model writes in
// [toolloop.Reasoning.Provider]: it sends back only the reasoning blocks
// that carry it.
const ResponsesProvider = "openai.responses"

// ResponsesModel is a [toolloop.Model] and [toolloop.Streamer] backed by
// OpenAI's Responses API. It is safe for concurrent use. To make the loop
// call Generate instead of Stream, wrap it: toolloop.ModelFunc(m.Generate).
type ResponsesModel struct {
	client oai.Client
	cfg    Config
	log    *slog.Logger
	// chat converts tool specs and output formats (and words refusals)
	// exactly as the Chat Completions model does, with its caches; it
	// never sends a request.
	chat *Model
	// noEncrypted is set once the server has said that the model cannot
	// return encrypted reasoning: later requests stop asking for it.
	noEncrypted atomic.Bool
}

// NewResponses returns a model that talks to the Responses API
// (POST /responses), configured by cfg like [New]. It does not contact the
// server, and fails at once as New does without a key for OpenAI's API.
//
// It is a constructor of its own, not an option of [New], because the two
// APIs differ in more than their wire format: the Responses API returns
// the model's reasoning as items to send back on the next turn (encrypted,
// since requests are stateless by default), while most OpenAI-compatible
// servers speak Chat Completions only. Choosing the type chooses the API,
// visibly, with the same Config.
func NewResponses(cfg Config) (*ResponsesModel, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if err := checkKey(&cfg); err != nil {
		return nil, err
	}
	log := wire.Logger(cfg.Logger)
	return &ResponsesModel{
		client: newClient(cfg),
		cfg:    cfg,
		log:    log,
		chat:   &Model{cfg: cfg, log: log, server: serverOf(cfg.BaseURL)},
	}, nil
}

// Generate implements [toolloop.Model]: one Responses request.
func (m *ResponsesModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	r, err := m.client.Responses.New(ctx, params)
	if m.retryWithoutEncrypted(err, &params) {
		r, err = m.client.Responses.New(ctx, params)
	}
	if err != nil {
		return nil, mapError(err)
	}
	return m.response(r, nil)
}

// Stream implements [toolloop.Streamer]: one streamed Responses request.
// It yields output text and refusal deltas as Chunk.Text, reasoning
// summary deltas as Chunk.Reasoning, then a final chunk with the whole
// turn. A stream that ends before the server says how the turn ended
// yields an error wrapping io.ErrUnexpectedEOF.
func (m *ResponsesModel) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	params, err := m.params(req)
	return func(yield func(toolloop.Chunk, error) bool) {
		if err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		m.stream(ctx, params, yield)
	}
}

// retryWithoutEncrypted reports whether err says that the model cannot
// return encrypted reasoning (a 400 about the include parameter, as
// OpenAI's non-reasoning models answer), and if so drops the include from
// params and from every later request, so that the call can be retried.
func (m *ResponsesModel) retryWithoutEncrypted(err error, params *responses.ResponseNewParams) bool {
	var ae *oai.Error
	if len(params.Include) == 0 || !errors.As(err, &ae) ||
		ae.StatusCode != http.StatusBadRequest || ae.Param != "include" {
		return false
	}
	m.noEncrypted.Store(true)
	params.Include = nil
	m.log.Debug("openai: the model does not return encrypted reasoning; no longer asking for it",
		"model", m.cfg.Model, "message", ae.Message)
	return true
}
