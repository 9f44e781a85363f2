package anthropic

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"os"

	sdk "github.com/anthropics/anthropic-sdk-go"
	sdkconfig "github.com/anthropics/anthropic-sdk-go/config"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// Defaults for the zero fields of a [Config].
const (
	// DefaultModel is Claude Sonnet 5.5, the model the SDK in go.mod
	// names to migrate to from claude-sonnet-4-5 (the previous default,
	// at end of life on November 30, 2026). It thinks adaptively by
	// default, and Anthropic's API refuses it a Temperature, a
	// Thinking.Budget and a request that forces a tool call: set Model
	// for a model that takes them.
	DefaultModel = "claude-sonnet-5-5"
	// DefaultMaxTokens is small enough for every current model's output
	// limit; raise it for long answers.
	DefaultMaxTokens = 4096
)

// Config configures a [Model]. The zero value talks to Anthropic's API
// with DefaultModel, the SDK's default credentials (ANTHROPIC_API_KEY) and
// the SDK's retries.
type Config struct {
	// Model names the model; empty means DefaultModel.
	Model string
	// APIKey authenticates the requests; empty means the SDK's default
	// credentials: the ANTHROPIC_API_KEY environment variable, else
	// ANTHROPIC_AUTH_TOKEN (a bearer token), else the SDK's profiles
	// (ANTHROPIC_PROFILE, or the config `ant auth login` writes) and
	// workload identity federation (ANTHROPIC_FEDERATION_RULE_ID and the
	// variables that go with it). With none of them, and no
	// RequestOptions (which may carry credentials), New fails at once:
	// the SDK would send no request, whatever the BaseURL. For a gateway
	// that adds its own credentials, pass a placeholder key.
	APIKey string
	// BaseURL is the API's base URL, for a proxy or gateway; empty means
	// the SDK's default: ANTHROPIC_BASE_URL if set, else Anthropic's API.
	BaseURL string

	// MaxTokens bounds each turn's output, thinking included; 0 means
	// DefaultMaxTokens, plus Thinking.Budget when thinking has a budget.
	// (The SDK insists on streaming when it is large, so a loop, which
	// streams, may raise it freely; Generate may not.)
	MaxTokens int64
	// Temperature, if set, is the sampling temperature. The API refuses
	// it with thinking on.
	Temperature *float64
	// Thinking turns on extended or adaptive thinking; the zero value
	// leaves it off.
	Thinking Thinking
	// Effort, if set, tells the model how much effort to spend (thinking
	// included, under adaptive thinking): "low", "medium", "high",
	// "xhigh" or "max", as the model accepts. Sent as output_config.effort.
	Effort string
	// PromptCache places prompt-cache breakpoints on the tools, the system
	// prompt and the latest turns; the zero value places them where they
	// pay in a loop (see [PromptCache] for where, and what they cost).
	PromptCache PromptCache
	// CachePrompt asks the API to cache the prompt (a top-level
	// cache_control, which the API applies to the request's last block,
	// and which counts as one of its four breakpoints), so that each turn
	// of a loop reads the transcript so far from the cache instead of
	// paying for it again. Cache writes cost more than plain input, and
	// reads much less; Usage reports both.
	//
	// Deprecated: Use PromptCache, which says where the breakpoints go:
	// PromptCache{Turns: 1} marks the last turn as CachePrompt does, and
	// PromptCache{Tools: true, System: true, Turns: 2} keeps the tools and
	// system prompt cached as the transcript changes. CachePrompt still
	// works as before, and may be combined with it.
	CachePrompt bool

	// MaxRetries is how many times the SDK retries a request that failed
	// with a connection error, 408, 409, 429 or 5xx, waiting as Retry-After
	// says or backing off. 0 means the SDK's default (2); negative means no
	// retries.
	MaxRetries int
	// HTTPClient, if set, sends the requests.
	HTTPClient *http.Client
	// Logger, if set, receives debug logs: schema keywords dropped,
	// arguments sent wrapped, blocks and stop reasons left out.
	Logger *slog.Logger
	// RequestOptions are extra SDK options, applied after those above, for
	// what Config does not cover (headers, beta flags, a JSON field set on
	// every request with option.WithJSONSet).
	RequestOptions []option.RequestOption
}

// Model is a [toolloop.Model] and [toolloop.Streamer] backed by the
// Messages API. It is safe for concurrent use. To make the loop call
// Generate instead of Stream, wrap it: toolloop.ModelFunc(m.Generate).
type Model struct {
	client sdk.Client
	cfg    Config
	log    *slog.Logger
	tools  wire.Cache[convertedTool]
	// outputs holds the converted output formats.
	outputs wire.Cache[convertedOutput]
}

// New returns a model configured by cfg. It does not contact the server.
//
// It fails at once, with an error matching [providers.ErrConfig], on a
// config the API would refuse every request of (see [ErrConfig]), and
// on one with no credentials (see [Config.APIKey]); that error matches
// [providers.ErrAuth] too and names the variables to set. A bad URL, or
// a key the API refuses, shows up as the error of the first call.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	explicit := cfg.MaxTokens > 0
	if !explicit {
		cfg.MaxTokens = DefaultMaxTokens + max(cfg.Thinking.Budget, 0)
	}
	cfg.PromptCache = cfg.PromptCache.resolve(cfg.CachePrompt)
	if err := check(&cfg, explicit); err != nil {
		return nil, err
	}
	if !hasCredentials(&cfg) {
		return nil, wire.MissingKey("anthropic: no API key: set Config.APIKey or the ANTHROPIC_API_KEY environment variable (or ANTHROPIC_AUTH_TOKEN, for a bearer token)")
	}
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
	if cfg.Thinking.Interleaved {
		opts = append(opts, option.WithHeaderAdd("anthropic-beta", interleavedBeta))
	}
	opts = append(opts, cfg.RequestOptions...)
	return &Model{client: sdk.NewClient(opts...), cfg: cfg, log: wire.Logger(cfg.Logger)}, nil
}

// credentialVars are the environment variables that give the SDK
// credentials, in the order it tries them: a key, a bearer token, a
// named profile, workload identity federation. Only the first two are
// named in the error; the others are there to be honoured.
var credentialVars = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE",
	"ANTHROPIC_FEDERATION_RULE_ID", "ANTHROPIC_ORGANIZATION_ID",
	"ANTHROPIC_IDENTITY_TOKEN_FILE", "ANTHROPIC_IDENTITY_TOKEN",
}

// hasCredentials reports whether the SDK may find credentials for cfg:
// a key in cfg; an environment variable of its credential chain (it
// reports a partial or broken one itself, naming what is wrong); its
// profile config file (from `ant auth login`); or RequestOptions, which
// may carry them (option.WithAuthToken, a header, a middleware) where
// they cannot be seen. Without any, the SDK sends no request at all, to
// any base URL, so a BaseURL does not change this.
func hasCredentials(cfg *Config) bool {
	if cfg.APIKey != "" || len(cfg.RequestOptions) > 0 {
		return true
	}
	for _, v := range credentialVars {
		if os.Getenv(v) != "" {
			return true
		}
	}
	_, err := sdkconfig.LoadConfig()
	return err == nil
}

// Generate implements [toolloop.Model]: one Messages request.
func (m *Model) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	msg, err := m.client.Messages.New(ctx, params)
	if err != nil {
		return nil, mapError(err)
	}
	return m.response(msg, nil), nil
}

// Stream implements [toolloop.Streamer]: one streamed Messages request. It
// yields each text and thinking delta as it arrives, then a final chunk
// with the whole turn. A stream that ends before message_stop yields an error wrapping
// io.ErrUnexpectedEOF.
func (m *Model) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	params, err := m.params(req)
	return func(yield func(toolloop.Chunk, error) bool) {
		if err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		stream := m.client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		var msg sdk.Message
		inputs := map[int64]*wire.Fragments{}
		stopped := false
		for stream.Next() {
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				yield(toolloop.Chunk{}, fmt.Errorf("anthropic: %w", err))
				return
			}
			switch ev.Type {
			case "message_stop":
				stopped = true
			case "content_block_delta":
				switch ev.Delta.Type {
				case "text_delta":
					if ev.Delta.Text != "" && !yield(toolloop.Chunk{Text: ev.Delta.Text}, nil) {
						return
					}
				case "thinking_delta":
					if ev.Delta.Thinking != "" && !yield(toolloop.Chunk{Reasoning: ev.Delta.Thinking}, nil) {
						return
					}
				case "input_json_delta":
					f := inputs[ev.Index]
					if f == nil {
						f = new(wire.Fragments)
						inputs[ev.Index] = f
					}
					f.Add(ev.Delta.JSON.PartialJSON.Raw(), ev.Delta.PartialJSON)
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(toolloop.Chunk{}, mapError(err))
			return
		}
		if !stopped {
			yield(toolloop.Chunk{}, fmt.Errorf("anthropic: the stream ended before the message did: %w", io.ErrUnexpectedEOF))
			return
		}
		yield(toolloop.Chunk{Response: m.response(&msg, inputs)}, nil)
	}
}
