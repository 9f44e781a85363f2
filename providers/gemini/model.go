package gemini

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// DefaultModel is the model used when Config.Model is empty: Gemini 3.8
// Flash, which the SDK in go.mod lists as Google's most intelligent Flash
// model, with no shutdown announced. It replaces gemini-2.5-flash, which
// Google retires from the Gemini API on December 1, 2026. (The SDK marks
// none of its models deprecated, so that its listing the model, without
// a deprecation notice, is what the test of the default can check.)
const DefaultModel = "gemini-3.8-flash"

// ProviderName is the name this package writes in Reasoning.Provider, and
// in providers.Error.Provider.
const ProviderName = "gemini"

// defaultRetries is how many times a failed request is retried when
// Config.MaxRetries is 0, as the other providers' SDKs do by default.
const defaultRetries = 2

// Config configures a [Model]. The zero value talks to the Gemini API with
// DefaultModel, the key in GEMINI_API_KEY (or GOOGLE_API_KEY), the model's
// own thinking defaults and two retries.
type Config struct {
	// Model names the model, such as "gemini-3.5-flash" or
	// "gemini-3.1-pro-preview"; empty means DefaultModel.
	Model string
	// APIKey authenticates the requests; empty means the SDK's default,
	// the GOOGLE_API_KEY or GEMINI_API_KEY environment variable (the
	// first if both are set). The Gemini API needs one, with a BaseURL
	// too (the SDK makes no client without): with none, New fails at
	// once. Vertex AI (see Backend) takes its credentials from
	// Application Default Credentials instead, or a key in express mode.
	APIKey string
	// BaseURL is the API's base URL, for a proxy or gateway; empty means
	// the SDK's default: GOOGLE_GEMINI_BASE_URL if set, else
	// https://generativelanguage.googleapis.com/.
	BaseURL string
	// Backend chooses the API: the zero value lets the SDK decide, which
	// is the Gemini API unless GOOGLE_GENAI_USE_VERTEXAI is set. With
	// genai.BackendVertexAI the project and location come from
	// GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION and the credentials
	// from Application Default Credentials; the mapping is the same.
	Backend genai.Backend

	// MaxTokens bounds each turn's output (maxOutputTokens), thinking
	// included; 0 leaves it to the model.
	MaxTokens int64
	// Temperature, if set, is the sampling temperature.
	Temperature *float64
	// ThinkingBudget, if set, is the number of tokens the model may spend
	// thinking (Gemini 2.5): 0 turns thinking off where the model allows
	// it, -1 lets the model decide. Nil leaves it to the model.
	ThinkingBudget *int64
	// ThinkingLevel, if set, tells a Gemini 3 model how hard to think:
	// "minimal", "low", "medium" or "high", as the model accepts. The API
	// refuses a request that sets both ThinkingLevel and ThinkingBudget.
	ThinkingLevel string
	// IncludeThoughts asks for summaries of the model's thoughts. They
	// arrive as reasoning deltas and as reasoning blocks with Summary set.
	IncludeThoughts bool

	// CachedContent, if set, names a cached content ("cachedContents/...")
	// that every request starts with, sent as cachedContent: an explicit
	// cache, made for this model, holding the system instruction and the
	// tools of the requests (CreateCache makes one from a request). The
	// API takes no system instruction, tools or tool config beside a
	// cache, so requests leave them out, tool choice included (logged at
	// debug level when it asked for more than auto). Cached tokens are
	// billed at a fraction of the input price (a tenth on Gemini 2.5 and
	// later), and the cache's storage by the hour, per token, for as long
	// as it lives; a cache holds at least the model's minimum (1,024 to
	// 4,096 tokens). Empty sends none: implicit caching (see the package
	// documentation) needs nothing set.
	CachedContent string

	// MaxRetries is how many times the SDK retries a request that failed
	// with a connection error, 408, 429, 500, 502, 503 or 504, backing off
	// exponentially from one second (the SDK does not read Retry-After).
	// 0 means two retries; negative means none. HTTPOptions.RetryOptions
	// sets the delays and status codes.
	MaxRetries int
	// HTTPClient, if set, sends the requests. For Vertex AI it must add
	// the credentials itself.
	HTTPClient *http.Client
	// Logger, if set, receives debug logs: schema keywords dropped,
	// arguments sent wrapped, reasoning left out, unknown finish reasons.
	Logger *slog.Logger
	// HTTPOptions are the SDK's HTTP options, for what Config does not
	// cover: headers, the API version, a timeout, retry delays, extra
	// fields in every request body. BaseURL and MaxRetries above, when
	// set, take precedence over the same settings here.
	HTTPOptions genai.HTTPOptions
	// EditRequest, if set, is called with the SDK's configuration of each
	// request once the transcript and tools are mapped, to set what
	// Config does not cover, such as safety settings or a cached content.
	EditRequest RequestFunc
}

// RequestFunc edits the configuration of one request. It runs on every
// turn, possibly concurrently, and must not keep cfg.
type RequestFunc func(cfg *genai.GenerateContentConfig)

// Model is a [toolloop.Model] and [toolloop.Streamer] backed by the Gemini
// API's generateContent and streamGenerateContent methods. It is safe for
// concurrent use. To make the loop call Generate instead of Stream, wrap
// it: toolloop.ModelFunc(m.Generate).
type Model struct {
	client *genai.Client
	cfg    Config
	log    *slog.Logger
	tools  wire.Cache[convertedTool]
	// outputs holds the converted output formats.
	outputs wire.Cache[convertedOutput]
}

// New returns a model configured by cfg. It does not contact the Gemini
// API (for Vertex AI, the SDK may look for Application Default
// Credentials).
//
// It fails at once with an error matching [providers.ErrConfig] when the
// SDK cannot make a client of cfg: for the Gemini API, without a key in
// Config.APIKey, GEMINI_API_KEY or GOOGLE_API_KEY (that error names them
// and matches [providers.ErrAuth] too; see [Config.APIKey]); for Vertex
// AI, without a project and location, or credentials. A bad URL, or a
// key the API refuses, shows up as the error of the first call.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if geminiAPI(&cfg) && cfg.APIKey == "" && os.Getenv("GEMINI_API_KEY") == "" && os.Getenv("GOOGLE_API_KEY") == "" {
		return nil, wire.MissingKey("gemini: no API key for the Gemini API: set Config.APIKey or the GEMINI_API_KEY (or GOOGLE_API_KEY) environment variable (for Vertex AI, set Config.Backend or GOOGLE_GENAI_USE_VERTEXAI)")
	}
	opts := cfg.HTTPOptions
	if cfg.BaseURL != "" {
		opts.BaseURL = cfg.BaseURL
	}
	retry := genai.HTTPRetryOptions{}
	if opts.RetryOptions != nil {
		retry = *opts.RetryOptions
	}
	switch {
	case cfg.MaxRetries > 0:
		retry.Attempts = genai.Ptr(int32(min(cfg.MaxRetries, 100) + 1))
	case cfg.MaxRetries < 0:
		retry.Attempts = genai.Ptr[int32](1)
	case retry.Attempts == nil:
		retry.Attempts = genai.Ptr[int32](defaultRetries + 1)
	}
	opts.RetryOptions = &retry
	hc := cfg.HTTPClient
	if hc != nil {
		hc = recording(hc)
	}
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     cfg.Backend,
		HTTPClient:  hc,
		HTTPOptions: opts,
	})
	if err != nil {
		return nil, wire.ConfigError("gemini: "+err.Error(), err)
	}
	if own := client.ClientConfig().HTTPClient; hc == nil && own != nil {
		// The SDK made this client (with Vertex AI's credentials, say)
		// and no one else holds it.
		own.Transport = recorder{next: own.Transport}
	}
	return &Model{client: client, cfg: cfg, log: wire.Logger(cfg.Logger)}, nil
}

// geminiAPI reports whether cfg talks to the Gemini API rather than
// Vertex AI, as the SDK decides it: by Config.Backend, else by
// GOOGLE_GENAI_USE_ENTERPRISE, else by GOOGLE_GENAI_USE_VERTEXAI ("1" or
// "true" meaning Vertex AI).
func geminiAPI(cfg *Config) bool {
	switch cfg.Backend {
	case genai.BackendGeminiAPI:
		return true
	case genai.BackendUnspecified:
	default:
		return false
	}
	for _, v := range [...]string{"GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI"} {
		if s, ok := os.LookupEnv(v); ok {
			s = strings.ToLower(s)
			return s != "1" && s != "true"
		}
	}
	return true
}

// Generate implements [toolloop.Model]: one generateContent request.
func (m *Model) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	contents, config, err := m.params(req)
	if err != nil {
		return nil, err
	}
	ctx, x := withExchange(ctx)
	resp, err := m.client.Models.GenerateContent(ctx, m.cfg.Model, contents, config)
	if err != nil {
		return nil, mapError(err, x)
	}
	t := m.newTurn(false)
	t.add(resp, nil)
	return t.response(), nil
}

// Stream implements [toolloop.Streamer]: one streamGenerateContent
// request. It yields text and thought deltas as they arrive, then a final
// chunk with the whole turn. A stream that ends before the API says why
// the turn finished yields an error wrapping io.ErrUnexpectedEOF.
func (m *Model) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	contents, config, err := m.params(req)
	return func(yield func(toolloop.Chunk, error) bool) {
		if err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		t := m.newTurn(true)
		emit := func(ch toolloop.Chunk) bool { return yield(ch, nil) }
		ctx, x := withExchange(ctx)
		for resp, err := range m.client.Models.GenerateContentStream(ctx, m.cfg.Model, contents, config) {
			if err != nil {
				yield(toolloop.Chunk{}, mapError(err, x))
				return
			}
			if !t.add(resp, emit) {
				return
			}
		}
		if !t.finished() {
			err := ctx.Err()
			if err == nil {
				err = fmt.Errorf("gemini: the stream ended before the turn finished: %w", io.ErrUnexpectedEOF)
			}
			yield(toolloop.Chunk{}, err)
			return
		}
		yield(toolloop.Chunk{Response: t.response()}, nil)
	}
}
