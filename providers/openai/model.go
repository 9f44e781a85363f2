package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"os"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// DefaultModel is the model used when Config.Model is empty: GPT-6.1
// Sol, OpenAI's everyday model for agentic work (1,050,000 tokens of
// context), which the SDK in go.mod lists without a deprecation notice.
// It reasons by default, so it takes no Temperature and no
// ReasoningEffort "none" or "minimal"; set Model for a model that does.
// It replaces gpt-4.1, whose shutdown OpenAI announced for 2027-01-14.
const DefaultModel = "gpt-6.1-sol"

// Config configures a [Model]. The zero value talks to OpenAI's API with
// DefaultModel, the key in OPENAI_API_KEY and the SDK's retries.
type Config struct {
	// Model names the model; empty means DefaultModel.
	Model string
	// APIKey authenticates the requests; empty means the SDK's default,
	// the OPENAI_API_KEY environment variable. OpenAI's API needs one:
	// with neither, a constructor talking to it fails at once (see
	// [New]). Another server (a BaseURL, or OPENAI_BASE_URL, not on
	// api.openai.com) may do without, as Ollama, vLLM and llama.cpp's
	// server do; so may a config with RequestOptions, which may carry
	// the credentials (the SDK's Azure options, say).
	APIKey string
	// BaseURL is the API's base URL, for any OpenAI-compatible server, such
	// as "http://localhost:11434/v1" for Ollama. Empty means the SDK's
	// default: OPENAI_BASE_URL if set, else OpenAI's API.
	BaseURL string

	// MaxTokens bounds each turn's output, sent as max_completion_tokens;
	// 0 leaves it to the server. (For a server that knows only
	// max_tokens, leave this 0 and pass option.WithJSONSet("max_tokens", n)
	// in RequestOptions.)
	MaxTokens int64
	// Temperature, if set, is the sampling temperature.
	Temperature *float64
	// Strict sends each tool with strict: true when strict mode can express
	// its schema, and non-strict (logged at debug level) when it cannot.
	// Off by default, because not every OpenAI-compatible server accepts
	// the field.
	Strict bool
	// ReasoningEffort, if set, tells a reasoning model how hard to think:
	// "none", "minimal", "low", "medium", "high" or "xhigh", as the model
	// accepts. Sent as reasoning_effort (Chat Completions) or
	// reasoning.effort (Responses).
	ReasoningEffort string
	// ReasoningSummary, if set, asks the Responses API for a summary of
	// the model's reasoning: "auto", "concise" or "detailed". It arrives
	// as reasoning blocks and reasoning deltas. Chat Completions ignores it.
	ReasoningSummary string
	// Store lets the Responses API keep responses on OpenAI's side. Off
	// by default: every request is stateless and carries the whole
	// transcript, with the model's earlier reasoning as encrypted content.
	// Chat Completions ignores it.
	Store bool
	// PromptCacheKey returns each request's prompt_cache_key, which
	// OpenAI combines with the request's first tokens to send it to the
	// machine that holds its cached prefix: requests of one conversation
	// under one key find the turns before them cached. Nil means
	// [ConversationKey] (one key per conversation) on OpenAI's own API
	// (no BaseURL, or one on api.openai.com, and no RequestOptions, which
	// may point elsewhere), and none on other servers, not all of which
	// take the field. A func that returns "" sends none; ConversationKey
	// itself sends the default key to any server.
	//
	// OpenAI caches prompts of 1,024 tokens or more on its own, charging
	// nothing to write the cache, and bills cached input at a fraction of
	// the input price (a tenth for the GPT-5 family, a quarter for
	// GPT-4.1, half for GPT-4o); Usage reports it as CacheReadTokens. A
	// key sent by more than about 15 requests a minute spills over to
	// other machines and hits less.
	PromptCacheKey CacheKeyFunc
	// PromptCacheRetention, if set, is sent as prompt_cache_retention:
	// "in_memory" keeps a cached prefix for minutes of inactivity (an hour
	// at most), "24h" (extended caching) up to a day, at no extra price
	// per token. Empty leaves it to the API, whose default depends on the
	// model and the organization's data retention (recent models take
	// only "24h").
	PromptCacheRetention string
	// NoNativeOutput makes NativeOutput report false, for a server that
	// does not take a json_schema response_format (or text.format): the
	// loop then asks for a typed answer through a tool it adds.
	NoNativeOutput bool

	// MaxRetries is how many times the SDK retries a request that failed
	// with a connection error, 408, 409, 429 or 5xx, waiting as Retry-After
	// says or backing off. 0 means the SDK's default (2); negative means no
	// retries.
	MaxRetries int
	// HTTPClient, if set, sends the requests.
	HTTPClient *http.Client
	// Logger, if set, receives debug logs: tools sent non-strict and why,
	// schema keywords dropped, unknown finish reasons, dropped tool calls.
	Logger *slog.Logger
	// RequestOptions are extra SDK options, applied after those above, for
	// what Config does not cover (headers, organization, a JSON field set
	// on every request with option.WithJSONSet).
	RequestOptions []option.RequestOption
}

// Model is a [toolloop.Model] and [toolloop.Streamer] backed by the Chat
// Completions API. It is safe for concurrent use. To make the loop call
// Generate instead of Stream, wrap it: toolloop.ModelFunc(m.Generate).
type Model struct {
	client oai.Client
	cfg    Config
	log    *slog.Logger
	tools  wire.Cache[convertedTool]
	// outputs holds the converted output formats.
	outputs wire.Cache[convertedOutput]
	// server names the server, for the reasoning blocks it writes;
	// serverExtra is their usual Extra.
	server      string
	serverExtra []byte
}

// New returns a model configured by cfg. It does not contact the server.
//
// For OpenAI's own API a key is required: without Config.APIKey or
// OPENAI_API_KEY, New fails at once with an error that matches
// [providers.ErrConfig] and [providers.ErrAuth] (see [Config.APIKey]). A
// bad URL, or a key the server refuses, shows up as the error of the
// first call.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if err := checkKey(&cfg); err != nil {
		return nil, err
	}
	m := &Model{client: newClient(cfg), cfg: cfg, log: wire.Logger(cfg.Logger), server: serverOf(cfg.BaseURL)}
	m.serverExtra, _ = json.Marshal(chatExtra{Server: m.server})
	return m, nil
}

// openAIHost is the host of OpenAI's own API.
const openAIHost = "api.openai.com"

// checkKey returns an error if cfg sends requests to OpenAI's API (no
// BaseURL, no OPENAI_BASE_URL, or one on OpenAI's host) without a key:
// none in cfg, none in OPENAI_API_KEY. Other servers often take none.
// RequestOptions may carry a key or another endpoint (option.WithAPIKey,
// option.WithBaseURL, the SDK's Azure options) that cannot be seen from
// here, so with any of them the key is left to the server.
func checkKey(cfg *Config) error {
	if cfg.APIKey != "" || os.Getenv("OPENAI_API_KEY") != "" || len(cfg.RequestOptions) > 0 {
		return nil
	}
	if !isOpenAI(serverOf(cfg.BaseURL)) {
		return nil
	}
	return wire.MissingKey("openai: no API key for OpenAI's API: set Config.APIKey or the OPENAI_API_KEY environment variable (for another server, set Config.BaseURL)")
}

// newClient returns the SDK client both APIs' models use: the key, base
// URL, retries and HTTP client of cfg, the errorBodies middleware, then
// the caller's own options.
func newClient(cfg Config) oai.Client {
	var opts []option.RequestOption
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.MaxRetries != 0 {
		opts = append(opts, option.WithMaxRetries(max(cfg.MaxRetries, 0)))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	opts = append(opts, option.WithMiddleware(errorBodies))
	opts = append(opts, cfg.RequestOptions...)
	return oai.NewClient(opts...)
}

// Generate implements [toolloop.Model]: one Chat Completions request.
func (m *Model) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	cc, err := m.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, mapError(err)
	}
	return m.response(cc, nil, nil)
}

// Stream implements [toolloop.Streamer]: one streamed Chat Completions
// request. It yields each text and reasoning delta as it arrives, then a
// final chunk with the whole turn. A stream that ends before the server
// says why the turn finished yields an error wrapping io.ErrUnexpectedEOF,
// unless it ended with data: [DONE]: then the turn ended normally.
func (m *Model) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	params, err := m.params(req)
	return func(yield func(toolloop.Chunk, error) bool) {
		if err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		params.StreamOptions.IncludeUsage = oai.Bool(true)
		var ended doneWatch
		stream := m.client.Chat.Completions.NewStreaming(ctx, params, option.WithMiddleware(ended.middleware))
		defer stream.Close()
		var acc oai.ChatCompletionAccumulator
		args := map[int]*wire.Fragments{}
		x := new(turnExtras)
		finished := false
		var thought []string // the reasoning of each choice's content chunks
		for stream.Next() {
			chunk := stream.Current()
			thought = thought[:0]
			for i := range chunk.Choices {
				r := ""
				if chunk.Choices[i].Index == 0 {
					r = m.unchunkDelta(&chunk.Choices[i].Delta, x)
				}
				thought = append(thought, r)
			}
			if !acc.AddChunk(chunk) {
				yield(toolloop.Chunk{}, errors.New("openai: the stream sent a chunk that does not fit the turn so far"))
				return
			}
			for i, ch := range chunk.Choices {
				if ch.Index != 0 {
					continue
				}
				finished = finished || ch.FinishReason != ""
				x.addSignature(ch.Delta.JSON.ExtraFields, -1)
				for _, tc := range ch.Delta.ToolCalls {
					i := max(int(tc.Index), 0)
					f := args[i]
					if f == nil {
						f = new(wire.Fragments)
						args[i] = f
					}
					f.Add(tc.Function.JSON.Arguments.Raw(), tc.Function.Arguments)
					x.addSignature(tc.JSON.ExtraFields, i)
				}
				if r := x.addReasoning(ch.Delta.JSON.ExtraFields) + thought[i]; r != "" {
					if !yield(toolloop.Chunk{Reasoning: r}, nil) {
						return
					}
				}
				if text := ch.Delta.Content + ch.Delta.Refusal; text != "" {
					if !yield(toolloop.Chunk{Text: text}, nil) {
						return
					}
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(toolloop.Chunk{}, mapError(err))
			return
		}
		if !finished {
			if !ended.done {
				yield(toolloop.Chunk{}, fmt.Errorf("openai: the stream ended before the turn finished: %w", io.ErrUnexpectedEOF))
				return
			}
			m.log.Debug("openai: the stream ended with [DONE] and no finish reason")
		}
		resp, err := m.response(&acc.ChatCompletion, args, x)
		if err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		yield(toolloop.Chunk{Response: resp}, nil)
	}
}
