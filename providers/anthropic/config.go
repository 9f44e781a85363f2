package anthropic

import (
	"fmt"

	"github.com/toolloop/toolloop/providers/internal/wire"
)

// ErrConfig is the error, wrapped, that [New] returns for a [Config] the
// API would refuse every request of (thinking with a temperature, say),
// so that a misconfiguration shows up before any request is sent. It is
// also the error of a call whose request the config rules out: with
// thinking on, one whose tool choice requires a tool call; with a model
// that takes no structured output (see [Model.NativeOutput]), one with
// an output format. It matches [providers.ErrConfig] too.
var ErrConfig = wire.ConfigError("anthropic: invalid config")

// Thinking configures Claude's thinking. The zero value leaves it off,
// sending no thinking parameter (models that think by default keep
// their default).
//
// Thinking comes back as reasoning blocks ([toolloop.ContentReasoning]
// written by "anthropic"), streamed as [toolloop.Chunk].Reasoning deltas,
// and is sent back verbatim, in its place, on the next turns: the API
// refuses a tool-use turn whose thinking is missing or altered.
//
// With thinking on, the API refuses a temperature: setting both is an
// error ([ErrConfig]). It also takes only tool choice auto and none then,
// so a request with [toolloop.ToolChoiceRequired] fails with ErrConfig
// before it is sent; the loop's wrap-up turn asks for none, which works.
type Thinking struct {
	// Budget, when positive, turns on extended thinking with that many
	// tokens to think with (thinking.type "enabled"; the API wants at
	// least 1024). Thinking counts toward max_tokens, which must be above
	// the budget: with Config.MaxTokens unset, max_tokens is Budget plus
	// DefaultMaxTokens; a MaxTokens set at or below Budget is an error,
	// unless Interleaved is set (the budget then spans the whole turn and
	// may exceed max_tokens). Models that deprecate budgets in favour of
	// adaptive thinking make the SDK print a warning to standard error
	// (claude-opus-4-6, for one): use Adaptive there.
	Budget int64
	// Adaptive turns on adaptive thinking (thinking.type "adaptive"): the
	// model decides whether and how much to think, steered by
	// Config.Effort, and thinks between tool calls on its own. Set Budget
	// or Adaptive, not both.
	Adaptive bool
	// Display says how thinking text comes back: "summarized", or
	// "omitted" (blocks with a signature but no text: less to stream, the
	// same to send back). Empty means the model's default.
	Display string
	// Interleaved lets the model think between tool calls, after it sees
	// their results, on models that need asking: it sends the
	// "interleaved-thinking-2025-05-14" beta header. Adaptive thinking
	// interleaves without it.
	Interleaved bool
}

// on reports whether thinking is turned on.
func (t Thinking) on() bool { return t.Budget > 0 || t.Adaptive }

// interleavedBeta is the beta that lets manual extended thinking happen
// between tool calls.
const interleavedBeta = "interleaved-thinking-2025-05-14"

// MaxBreakpoints is the most cache breakpoints the API takes in one
// request.
const MaxBreakpoints = 4

// PromptCache says where to put prompt-cache breakpoints (cache_control
// markers): the API caches the request up to each breakpoint, and the
// next request that starts the same way reads it from the cache.
//
// What it costs: the tokens a request writes to the cache cost 1.25 times
// the input price (2 times with TTL "1h"), and the tokens it reads 0.1
// times; Usage reports reads and writes apart. A prefix shorter than the
// model's minimum (1,024 tokens for most models, more for some) is
// neither written nor read, so a breakpoint on it costs nothing. In a
// loop, each request reads the transcript the previous one wrote and
// writes only the new turn: after the first turn, most of the input is
// billed at a tenth. A request that no other follows within the TTL pays
// a quarter more for the part it wrote; one-off requests may set Off.
//
// The zero value places the default breakpoints, where they pay in a
// loop: on the tools, on the system prompt and on the last two user
// turns ({Tools: true, System: true, Turns: 2}, all [MaxBreakpoints] of
// them), with the TTL said. A PromptCache with Tools, System or Turns set
// places those breakpoints only; Off places none. With the deprecated
// Config.CachePrompt set, the default is none (CachePrompt's own
// breakpoint stays as it was).
//
// The API takes at most [MaxBreakpoints] breakpoints, counting
// Config.CachePrompt as one: a PromptCache that could need more is an
// error ([ErrConfig]).
type PromptCache struct {
	// Tools marks the last tool, caching every tool definition: it
	// still hits when the system prompt changes (a system message added
	// mid-run, which this package moves into the system prompt).
	Tools bool
	// System marks the last block of the system prompt, caching the tools
	// and the system prompt: it still hits when the transcript changes
	// (compacted, or a result cleared).
	System bool
	// Turns marks the last block of each of the latest Turns user turns
	// (user messages and tool results, which the API sends as user
	// turns). In a loop, 2 is the usual choice: the latest turn writes the
	// cache, and the one before reads what the previous request wrote.
	Turns int
	// TTL is how long the cache lives: "5m" or "1h". Empty means the
	// API's default, five minutes.
	TTL string
	// Off places no breakpoints, whatever the fields above say.
	Off bool
}

// defaultPromptCache is where the zero PromptCache places breakpoints.
var defaultPromptCache = PromptCache{Tools: true, System: true, Turns: 2}

// resolve returns c with the default placement if it says none, unless
// Off or cachePrompt (the deprecated Config.CachePrompt) is set.
func (c PromptCache) resolve(cachePrompt bool) PromptCache {
	if c.Off || cachePrompt || c.Tools || c.System || c.Turns != 0 {
		return c
	}
	d := defaultPromptCache
	d.TTL = c.TTL
	return d
}

// breakpoints returns the most breakpoints c can set.
func (c PromptCache) breakpoints() int {
	if c.Off {
		return 0
	}
	n := c.Turns
	if c.Tools {
		n++
	}
	if c.System {
		n++
	}
	return n
}

// check returns an error wrapping ErrConfig if the API would refuse every
// request made with cfg, whose zero fields have their defaults.
// explicitMaxTokens says whether the user set MaxTokens.
func check(cfg *Config, explicitMaxTokens bool) error {
	t := cfg.Thinking
	switch {
	case t.Budget < 0:
		return fmt.Errorf("%w: Thinking.Budget is negative (%d)", ErrConfig, t.Budget)
	case t.Budget > 0 && t.Adaptive:
		return fmt.Errorf("%w: Thinking.Budget and Thinking.Adaptive are both set; choose one", ErrConfig)
	case !t.on() && t.Display != "":
		return fmt.Errorf("%w: Thinking.Display is set but thinking is off", ErrConfig)
	case t.on() && cfg.Temperature != nil:
		return fmt.Errorf("%w: the API refuses a temperature with thinking on", ErrConfig)
	case t.Budget > 0 && !t.Interleaved && explicitMaxTokens && cfg.MaxTokens <= t.Budget:
		return fmt.Errorf("%w: MaxTokens (%d) must be above Thinking.Budget (%d), which it includes", ErrConfig, cfg.MaxTokens, t.Budget)
	}
	c := cfg.PromptCache
	n := c.breakpoints()
	if cfg.CachePrompt {
		n++
	}
	switch {
	case c.Turns < 0:
		return fmt.Errorf("%w: PromptCache.Turns is negative (%d)", ErrConfig, c.Turns)
	case n > MaxBreakpoints:
		return fmt.Errorf("%w: PromptCache (with CachePrompt) sets up to %d cache breakpoints; the API takes %d", ErrConfig, n, MaxBreakpoints)
	}
	return nil
}
