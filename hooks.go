package toolloop

import (
	"context"
	"encoding/json"
)

// Hooks are the user's automation around every tool call. Each list runs
// in order; the zero value has none. A hook that returns an error or panics
// fails that call (kind execution_failed, or panic), never the run.
type Hooks struct {
	// PreToolUse runs after the guard allowed the call and before it runs.
	// Each hook sees the arguments as the hooks before it left them; the
	// first deny ends the chain and the call.
	PreToolUse []PreToolUseHook
	// PostToolUse runs after the tool ran, on its result (success or a
	// failure the tool reported), before truncation. Each hook sees the
	// result the previous one returned.
	PostToolUse []PostToolUseHook
	// PostToolUseFailure runs on every failed result, whatever stage
	// failed, and may add guidance for the model.
	PostToolUseFailure []PostToolUseFailureHook
	// Middleware wraps the tool's execution, net/http style; the first is
	// outermost.
	Middleware []Middleware
	// BeforeModel runs before every model turn, in order, and may edit
	// the request (its tools, tool choice, messages or output format).
	BeforeModel []BeforeModelHook
	// AfterModel runs on every model response, in order, and may replace
	// or reject it.
	AfterModel []AfterModelHook
}

// PreToolUseHook inspects a call before it runs: it may deny it, rewrite
// its arguments, or add context for the model.
type PreToolUseHook func(ctx context.Context, call *Call) (PreToolUse, error)

// PreToolUse is what a [PreToolUseHook] decided. The zero value lets the
// call through unchanged.
type PreToolUse struct {
	// Deny refuses the call; Reason tells the model why.
	Deny   bool
	Reason string
	// Arguments, if not nil, replace the call's arguments. They are
	// validated against the tool's schema after the last pre-hook.
	Arguments json.RawMessage
	// Context is added to the result the model sees, after the output.
	Context string
}

// PostToolUseHook observes or changes a result before the model sees it:
// it may return res after changing it, a replacement, or nil to keep res.
// To reject the result, return an error; a *ToolError picks the kind
// (KindDenied to withhold output the model must not see).
type PostToolUseHook func(ctx context.Context, call *Call, res *ToolResult) (*ToolResult, error)

// PostToolUseFailureHook may add guidance to a failed result; a non-empty
// return is appended to what the model sees.
type PostToolUseFailureHook func(ctx context.Context, call *Call, res *ToolResult) (guidance string)

// Handler runs a call; it is what [Middleware] wraps. The innermost
// Handler calls the tool.
type Handler func(ctx context.Context, call *Call) (*ToolResult, error)

// Middleware wraps a Handler with behaviour around execution: logging,
// caching, rate limits, retries.
type Middleware func(next Handler) Handler

// chain wraps h in mw, the first outermost.
func chain(h Handler, mw []Middleware) Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}
