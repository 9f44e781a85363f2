// Package gemini is a [toolloop.Model] for Google's Gemini API. It uses
// the official SDK, google.golang.org/genai, for transport, retries and
// types; this package is the mapping.
//
//	model, err := gemini.New(gemini.Config{}) // DefaultModel, key from GEMINI_API_KEY
//	if err != nil {
//		return err // no key: the error says which variables to set
//	}
//	loop := &toolloop.AgentLoop{Model: model, Tools: reg}
//
// Vertex AI takes the same requests: set Config.Backend to
// genai.BackendVertexAI (or GOOGLE_GENAI_USE_VERTEXAI=true), with the
// project and location in GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION.
//
// # Set-up errors
//
// [New] fails at once, before any request, with an error matching
// [providers.ErrConfig] when the SDK cannot make a client of the config.
// For the Gemini API (the default backend) that is when no key is set in
// Config.APIKey, GEMINI_API_KEY or GOOGLE_API_KEY, with a BaseURL or
// without (the SDK makes no Gemini API client without a key): the error
// names them, and matches [providers.ErrAuth] too. Vertex AI needs no
// key (it uses Application Default Credentials, or an HTTPClient that
// adds credentials itself); there New fails on what the SDK refuses,
// such as no project and location.
//
// # Transcript mapping
//
//   - System messages, wherever they stand, become the system instruction,
//     in order: the API has no system role in contents.
//   - User content: text as text parts; PNG, JPEG, WebP, HEIC and HEIF
//     images, audio and PDF resources as inline data (bytes) or file data
//     (a URI, with its MIME type); JSON and resources as text; anything
//     else as a short text note saying what was left out.
//   - Assistant messages become model contents: their content in order,
//     then a functionCall part per tool call. The API takes arguments only
//     as a JSON object, so empty arguments are sent as none and arguments
//     that are not a JSON object as {"raw_arguments": "<the arguments as
//     the model wrote them>"}.
//   - Tool results become functionResponse parts with the call's name and
//     ID, all the results of a turn in one user content as the API
//     requires: {"output": ...} for a result, {"error": ...} for a failed
//     one, holding the value of a result that is one JSON block and the
//     text of anything else. Images of a result go in the same content as
//     inline data, each after a text part naming its call.
//   - Consecutive contents of the same role are merged, and messages left
//     with no parts are left out: the API refuses empty contents. A user
//     content keeps its function responses last, after its other parts
//     (images of results, a user message that follows the results, such
//     as the loop's wrap-up message): newer models (Gemini 3.6 Flash and
//     later, as users report) refuse a content whose function responses
//     are followed by anything, while text before them is taken by every
//     model.
//   - Reasoning blocks outside assistant messages are left out.
//
// The SDK carries arguments and responses as decoded JSON (map[string]any):
// keys come back sorted and numbers as float64, so integers beyond 2^53
// lose precision on the way.
//
// Gemini often sends function calls without an ID. Such a call gets an
// ID made of "gemini-call-", the response's ID and its position, so that
// results can answer it; that ID is never sent back, and its result is
// matched by name and position, as the API expects.
//
// # Thinking and thought signatures
//
// Config.ThinkingBudget (Gemini 2.5) or Config.ThinkingLevel (Gemini 3)
// set how hard the model thinks, and Config.IncludeThoughts asks for
// summaries of its thoughts. Gemini 2.5 and 3 sign their reasoning with
// thought signatures, opaque bytes on the parts of an answer that must
// come back on the same parts in the next request (Gemini 3 refuses a
// function-calling turn whose signatures are missing). This package keeps
// them as reasoning blocks whose Provider is "gemini" and whose Signature
// is the base64 of the bytes:
//
//   - a thought summary (a part with thought: true) is a reasoning block
//     with its text, Summary set and the part's signature, if any;
//   - the signature of a function call is a reasoning block with no text
//     whose CallID names the call; it goes back on that call's part;
//   - the signature of a text part is a reasoning block with no text right
//     after the text block; it goes back on that text part (or, when no
//     text precedes it, on a part of its own).
//
// Reasoning blocks are never part of the message's text. Every other
// provider's reasoning blocks are dropped: never sent, never rendered as
// text. When streaming, consecutive text (or thought) pieces are joined
// into one block, closed by the piece that brings a signature: the
// signature of the last, often empty, piece of a streamed answer goes back
// on the whole text.
//
// # Stop reasons and usage
//
// STOP is [toolloop.StopEnd], or StopToolUse when the turn has function
// calls; MAX_TOKENS is StopLength. SAFETY, RECITATION, PROHIBITED_CONTENT,
// BLOCKLIST, SPII, LANGUAGE and the image filters are StopRefusal, as is a
// prompt blocked by promptFeedback.blockReason; a refusal's text says so,
// with the API's message when it sent one, and its function calls are
// dropped. MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL and
// TOO_MANY_TOOL_CALLS are the model's mistakes, not the caller's, and no
// HTTP error: they are a Response with StopError and no tool calls, whose
// text says what went wrong (with the finishMessage quoting the bad call,
// which the SDK passes on from Vertex AI only), so the run ends and the
// caller may ask again.
//
// Usage: InputTokens is promptTokenCount plus toolUsePromptTokenCount;
// OutputTokens is candidatesTokenCount plus thoughtsTokenCount, which the
// API reports apart, and ReasoningTokens is thoughtsTokenCount;
// CacheReadTokens is cachedContentTokenCount. Input and output add up to
// totalTokenCount.
//
// # Prompt caching
//
// Gemini 2.5 and later models cache on their own (implicit caching): a
// request whose start, the system instruction, the tools and the first
// contents, is the same as a recent request's is billed at a fraction of
// the input price for that prefix (a tenth on Gemini 2.5 and later;
// Usage.CacheReadTokens), with nothing to set and nothing to pay for
// storage. What makes it hit is a stable prefix, so the same transcript
// and tools always give the same request: the tools in the order the
// request lists them (the loop sorts them by name), schemas, arguments
// and results encoded with their keys sorted.
//
// Explicit caching is an option: [Model.CreateCache] stores a request's
// system instruction and tools in a cache of its own, billed for storage
// by the hour, and Config.CachedContent sends its name with every request,
// which then leaves those out, as the API requires.
//
// # Tools
//
// Each tool is a function declaration whose parametersJsonSchema is its
// input schema (JSON Schema, not the OpenAPI subset of parameters), less
// the keywords the API refuses at the root and the keywords it does not
// take anywhere (such as $schema, allOf, not, patternProperties), and
// with const sent as a one-value enum; the changes are logged at debug
// level. The loop still validates the arguments against the full schema.
//
// # Tool choice
//
// [toolloop.Request].ToolChoice is sent as the function calling config:
// none as mode NONE, required as ANY, and required with a Name as ANY
// with that name alone in allowedFunctionNames. Auto sets nothing, the
// API's default. A request without tools (a compactor's, say) sends no
// tool config whatever its mode. A choice no request can honour is an
// error before anything is sent: a Name that is not among the request's
// tools, required without tools, a Name with another mode, an unknown
// mode. Config.EditRequest runs after, and may change it.
//
// # Structured output
//
// [toolloop.Request].Output is sent as responseMimeType
// "application/json" with responseJsonSchema: the schema, less the
// keywords the API refuses at the root and those it does not take
// anywhere, with const as a one-value enum, as for tools; the format's
// Description becomes the schema's description when the schema has none
// (the API takes no name or description). The answer comes back as the
// text, the JSON itself (a thought signature on it is kept as a
// reasoning block, out of the text); a blocked answer is StopRefusal as
// above. Config.EditRequest runs after, and may change it.
//
// [Model.NativeOutput] reports true for Gemini 2.5 and later without
// tools, and, beside function declarations, for Gemini 3 and later only:
// the structured output documentation offers structured outputs with
// tools for the Gemini 3 series alone. The version is read from the
// model's name ("gemini-2.5-flash", "gemini-3-pro-preview", after any
// "models/" or Vertex AI "publishers/google/models/" prefix); for other
// names (aliases such as "gemini-flash-latest", tuned models, Gemma) it
// is false, and the loop asks for the answer through a tool of its own.
// A request with Output that the model cannot take (Gemini 2.5 with
// tools, say) fails with an error wrapping [ErrConfig] before anything
// is sent; so does (without ErrConfig) one whose format has no schema or
// a schema that is not a JSON object.
//
// # Streaming, retries and errors
//
// [Model.Stream] yields text deltas (Chunk.Text) and thought deltas
// (Chunk.Reasoning) as they arrive, and a final chunk with the whole turn;
// function calls arrive whole. The SDK retries connection errors, 408,
// 429 and 5xx answers with exponential backoff (Config.MaxRetries; it does
// not read Retry-After). Errors the API returns after that are
// *[providers.Error] with Provider "gemini", matching
// [providers.ErrContextLength], [providers.ErrRateLimit],
// [providers.ErrOverloaded] or [providers.ErrAuth] with errors.Is, and
// unwrapping to genai.APIError. Their message names the request's method
// and URL (without its query), the status, and the body's first 512
// bytes when it holds no error message; the API key never shows. The SDK
// adds the API version (v1beta) to the base URL itself: a 404 from a
// base URL that ends with a version too says so, and suggests it
// without. To know the request, the model wraps the transport of
// Config.HTTPClient (a copy; the caller's client is left alone) or of
// the client the SDK makes. The SDK itself may log to the standard
// logger when a stream breaks off.
package gemini
