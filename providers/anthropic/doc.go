// Package anthropic is a [toolloop.Model] for Anthropic's Messages API. It
// uses the official SDK, github.com/anthropics/anthropic-sdk-go, for
// transport, retries and types; this package is the mapping.
//
//	model, err := anthropic.New(anthropic.Config{}) // DefaultModel, key from ANTHROPIC_API_KEY
//	if err != nil {
//		return err // no key, or a config the API refuses: the error says which
//	}
//	loop := &toolloop.AgentLoop{Model: model, Tools: reg}
//
// # Set-up errors
//
// [New] fails at once, before any request, with an error matching
// [providers.ErrConfig]: on a config the API would refuse every request
// of ([ErrConfig]: thinking with a temperature, too many cache
// breakpoints), and on one with no credentials. Credentials are
// Config.APIKey, or whatever the SDK reads: ANTHROPIC_API_KEY,
// ANTHROPIC_AUTH_TOKEN, its profiles (ANTHROPIC_PROFILE, or the config
// `ant auth login` writes) and workload identity federation; or options
// in Config.RequestOptions, which may carry them unseen. A BaseURL needs
// them too, since the SDK sends nothing without. The missing-key error
// names Config.APIKey, ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN, and
// matches [providers.ErrAuth] as well.
//
// # Transcript mapping
//
//   - System messages, wherever they stand, become the request's system
//     prompt, in order: the API has no system role in messages.
//   - User content: text as text blocks, images as image blocks (bytes of
//     a type the API takes as a base64 source, URLs as a url source); JSON
//     and resources as text; anything else as a short text note saying
//     what was left out, so nothing vanishes silently.
//   - Assistant messages: text blocks and this package's reasoning blocks
//     in order, then a tool_use block per call with its ID verbatim (see
//     [Thinking]). The API takes a tool call's input only as a JSON
//     object, so empty or null arguments are sent as {}, and arguments that
//     are not a JSON object (malformed JSON from the model, say) as
//     {"raw_arguments": "<the arguments exactly as the model wrote them>"},
//     which the API accepts and which shows the model what it sent.
//   - Tool results become tool_result blocks answering their call ID, with
//     is_error set for a failed result; text and images go in as blocks,
//     JSON as its JSON text. All the results of a turn are grouped into one
//     user message, before any other user content, as the API requires.
//   - Consecutive messages of the same role are merged, and messages left
//     with no content (an assistant turn cut off before it said anything)
//     are left out: the API refuses empty messages.
//
// In answers, end_turn and stop_sequence are [toolloop.StopEnd], tool_use
// is StopToolUse, max_tokens and model_context_window_exceeded are
// StopLength, and refusal is StopRefusal with a text that says so (the
// model's own, or the refusal's explanation); tool calls of a refused turn
// are dropped. pause_turn, which only server tools cause, is StopEnd.
// Thinking and redacted_thinking blocks become reasoning blocks (see
// [Thinking]). Usage counts cache reads and writes as part
// of the input tokens, and reports them apart too.
//
// # Tools
//
// Each tool is sent with its input schema, less the keywords the API
// refuses at the root (anyOf, oneOf, allOf and the like, logged at debug
// level): the loop still validates the arguments against the full schema.
//
// # Tool choice
//
// [toolloop.Request].ToolChoice is sent as tool_choice: none as {"type":
// "none"}, required as {"type": "any"}, required with a Name as {"type":
// "tool", "name": ...}. Auto sends nothing, the API's default. A request
// without tools (a compactor's, say) sends no tool_choice whatever its
// mode. A choice no request can honour is an error before anything is
// sent: a Name that is not among the request's tools, required without
// tools, a Name with another mode, an unknown mode.
//
// With thinking on (Config.Thinking), the API takes only auto and none: a
// request that requires a tool call fails with an error wrapping
// [ErrConfig], before anything is sent, rather than quietly losing either
// the thinking or the requirement. A model that thinks by default with
// Config.Thinking unset is not known to this package; the API's own error
// comes back then.
//
// The loop's wrap-up turn sends none with the tools still listed (the
// API refuses tool_use blocks in a request without tools), and its
// wrap-up message goes in the same user turn as the last results, after
// them.
//
// # Structured output
//
// [toolloop.Request].Output is sent as output_config.format {"type":
// "json_schema", "schema": ...}; the format's Description becomes the
// schema's description when the schema has none (the API takes no name
// or description). The answer comes back as a text block holding the
// JSON; a refusal is StopRefusal as above, and an answer cut off by
// max_tokens StopLength. The schema is sent as a tool's is, less the
// keywords the API refuses at the root, then fitted to what structured
// outputs take, by the rules of the SDK's own transform
// (BetaJSONSchemaOutputFormat): keywords they do not take (minimum,
// maxLength, ...), unknown string formats and a minItems above 1 move
// into the description, where the model still reads them; oneOf becomes
// anyOf; every object with properties gets additionalProperties: false;
// $ref stands alone. Unlike the SDK's, this keeps type lists such as
// ["string", "null"], which the SDK's schema type cannot hold. The changes
// are logged at debug level; the loop validates the answer against the
// schema as written.
//
// [Model.NativeOutput] reports true, with tools or without (the API takes
// both together), for the models structured outputs are generally
// available on: Claude 4.5 and later (Haiku 4.5, Sonnet 4.5, Opus 4.5,
// Opus 4.6, Sonnet 4.6, ...), read from the model's name as the Claude
// API, Bedrock and Vertex AI spell it. For older models (Opus 4.1 and
// before) and names it cannot read, it is false, and the loop asks for
// the answer through a tool of its own. A request with Output that the
// model cannot take fails with an error wrapping [ErrConfig] before
// anything is sent; so does (without ErrConfig) one whose format has no
// schema or a schema that is not a JSON object.
//
// # Prompt caching
//
// By default ([PromptCache]'s zero value) each request carries four cache
// breakpoints: on the last tool, on the system prompt and on the last
// two user turns. Each turn of a loop then reads the transcript the turn
// before wrote, billed at 0.1 times the input price, and writes only
// what is new, at 1.25 times (2 times with a one-hour TTL); a prefix
// shorter than the model's minimum is not cached and costs nothing more.
// The breakpoints on the tools and the system prompt keep them cached
// when the transcript changes below them (compaction, a cleared result).
// PromptCache{Off: true} sends none. Usage reports cache reads and writes
// (CacheReadTokens, CacheWriteTokens).
//
// A cache hits only on a prefix byte for byte the same, so the same
// transcript and tools always give the same request bytes: the tools in
// the order the request lists them (the loop sorts them by name), each
// schema written with its keys sorted, whatever order they came in.
//
// # Streaming, retries and errors
//
// [Model.Stream] yields text and thinking deltas as they arrive and a
// final chunk with the whole turn, built by the SDK's Message.Accumulate
// (which joins signature_delta events into the thinking's signature);
// tool inputs split across input_json_delta events, even inside a
// character, are reassembled exactly, and kept verbatim when they are not
// valid JSON. The SDK retries
// 408, 409, 429, 5xx and 529 (overloaded) answers with backoff, honouring
// Retry-After (Config.MaxRetries). Errors the API returns after that are
// *[providers.Error], matching [providers.ErrContextLength] ("prompt is too
// long", or a request too large), [providers.ErrRateLimit],
// [providers.ErrOverloaded] or [providers.ErrAuth] with errors.Is, and
// unwrapping to *anthropic.Error. Their message names the request's
// method and URL (without its user info or query), the status, and the
// body's first 512 bytes when it holds no error message; the API key
// never shows. The SDK adds /v1 to the base URL itself: a 404 from a
// base URL that ends with /v1 too says so, and suggests it without.
package anthropic
