// Package openai is a [toolloop.Model] for OpenAI's Chat Completions API,
// and for any server that speaks it: Ollama, vLLM, llama.cpp's server,
// gateways. It uses the official SDK, github.com/openai/openai-go/v3, for
// transport, retries and types; this package is the mapping.
//
//	model, err := openai.New(openai.Config{}) // DefaultModel, key from OPENAI_API_KEY
//	if err != nil {
//		return err // no key: the error says which variable to set
//	}
//	loop := &toolloop.AgentLoop{Model: model, Tools: reg}
//
// For another server, set BaseURL (or OPENAI_BASE_URL); a key is then
// optional, as many local servers take none:
//
//	model, err := openai.New(openai.Config{Model: "qwen3", BaseURL: "http://localhost:11434/v1"})
//
// # Set-up errors
//
// [New] and [NewResponses] fail at once, before any request, when the
// requests would go to OpenAI's API (no BaseURL, no OPENAI_BASE_URL, or
// one on api.openai.com) without a key in Config.APIKey or
// OPENAI_API_KEY. The error names both, and matches
// [providers.ErrConfig] and [providers.ErrAuth] with errors.Is. Options
// in Config.RequestOptions may carry a key or another endpoint (the
// SDK's Azure options, option.WithAPIKey, option.WithBaseURL) that this
// package cannot see, so with any of them the key is left to the server.
//
// # Transcript mapping
//
//   - System messages become system messages, in place.
//   - User content: text as text, images as image_url parts (bytes as a
//     base64 data URL, URLs as they are), wav and mp3 audio as input_audio;
//     JSON and resources as text; anything else as a short text note
//     saying what was left out, so nothing vanishes silently.
//   - Assistant messages: text as content, tool calls with their IDs
//     verbatim and their arguments as the string the API takes. Arguments
//     that are not valid JSON are sent exactly as the model wrote them (the
//     API takes any string); empty arguments are sent as {}.
//   - Tool results become tool messages answering their call ID. The API
//     takes only text there, so JSON content is sent as its JSON, a failed
//     result's text is prefixed with "Error: " (the API has no error flag),
//     and an empty successful result reads "(no output)". Images in tool
//     results travel in one user message right after the turn's tool
//     messages, each labelled with the call it belongs to.
//   - Consecutive user messages (a compacted transcript's summary after
//     the task, the loop's wrap-up message after the images of results)
//     go out as one user message, plain texts joined by a blank line:
//     many OpenAI-compatible servers' chat templates want user and
//     assistant turns to alternate. The Responses API sends them as they
//     are.
//
// In answers, finish_reason stop is [toolloop.StopEnd] (or StopToolUse
// when the message has tool calls, as some servers say stop then),
// tool_calls is StopToolUse, length is StopLength, and content_filter or a
// refusal is StopRefusal, with a text that says so; tool calls of a refused
// turn are dropped. Arguments are kept verbatim, malformed or not: the loop
// validates them.
//
// # Usage
//
// Usage maps prompt, completion, cached and cache-written prompt tokens,
// and reasoning tokens. OutputTokens is every token billed as output,
// reasoning included, and ReasoningTokens the part of it spent
// reasoning. Servers disagree on whether completion_tokens holds the
// reasoning; total_tokens decides, server family by server family:
//
//   - OpenAI, DeepSeek, Mistral, vLLM, Ollama: total_tokens is
//     prompt_tokens + completion_tokens, and reasoning_tokens (in
//     completion_tokens_details, when sent) is a part of
//     completion_tokens, as OpenAI documents it. OutputTokens is
//     completion_tokens; nothing is counted twice.
//   - xAI, and Gemini's OpenAI-compatible endpoint: completion_tokens
//     leaves the reasoning out, and total_tokens counts it. Where
//     prompt_tokens + completion_tokens falls short of total_tokens, the
//     difference is output: OutputTokens is total_tokens -
//     prompt_tokens, and ReasoningTokens the difference (or
//     reasoning_tokens, if the server reports more). Gemini's endpoint
//     sometimes reports no reasoning_tokens at all; the difference is
//     counted all the same.
//   - A server that sends no total_tokens: completion_tokens is taken as
//     it is.
//
// # Prompt caching
//
// OpenAI caches the prefix of every prompt of 1,024 tokens or more on its
// own, free to write, and bills cached input at a fraction of the input
// price (Usage.CacheReadTokens). What decides whether a request hits is
// its start, byte for byte, and the machine it lands on: both APIs send
// the same transcript and tools as the same bytes (tools in the order the
// request lists them, which the loop sorts by name; schemas with their
// keys sorted), and on OpenAI's own API each request carries a
// prompt_cache_key, one per conversation ([ConversationKey]), so that the
// turns of a conversation land where the turns before them are cached.
// Config.PromptCacheKey sets another key, or none;
// Config.PromptCacheRetention asks for extended ("24h") or in-memory
// retention.
//
// # Reasoning
//
// Reasoning that servers send beyond OpenAI's types is kept as reasoning
// blocks (Reasoning.Provider "openai.chat"), before the turn's text, and
// sent back where it came from: reasoning_content (DeepSeek, vLLM, xAI;
// or reasoning, as newer vLLM and OpenRouter name it) on the assistant
// message, streamed as Chunk.Reasoning deltas; and Gemini's thought
// signatures, from extra_content.google.thought_signature on a tool call
// (a block with CallID set to the call's ID) or on the message. DeepSeek
// rejects a tool-call turn without its reasoning_content, Gemini a
// function call without its signature. Config.ReasoningEffort is sent as
// reasoning_effort.
//
// Content may also come as a list of typed chunks instead of a string,
// in answers and in streamed deltas alike, as Mistral's reasoning models
// (magistral) send it: text chunks are the text, refusal chunks a
// refusal, and thinking chunks (Mistral's, their text in a list of text
// chunks) and reasoning or reasoning_text chunks are reasoning, streamed
// as Chunk.Reasoning deltas and kept as a block, never as text. Mistral's
// thinking goes back as a thinking chunk at the head of the assistant
// message's content, which then is a list; reasoning that came in other
// chunks is kept but not sent back, as no server is known to take it.
// Chunks of any other type (Mistral's references, say) are skipped and
// logged at debug level.
//
// One package talks to many servers, so a block goes back only to the
// server that wrote it: each records the host and path of the model's
// base URL (Config.BaseURL, else OPENAI_BASE_URL, else OpenAI's) in its
// Extra, and a model with another base URL drops it. Every other
// provider's reasoning block is dropped too, never sent as text.
//
// # Tools and strict mode
//
// Each tool is a function tool whose parameters are its input schema, less
// the keywords the API refuses at the root (anyOf, oneOf, allOf and the
// like, logged at debug level): the loop still validates the arguments
// against the full schema. With Config.Strict,
// a tool is sent with strict: true when strict mode can express its
// schema: every object has additionalProperties: false and lists all its
// properties as required, only keywords strict mode supports appear, and
// nesting stays within its limits. Any other tool is sent non-strict, and
// Config.Logger hears why at debug level.
//
// # Tool choice
//
// [toolloop.Request].ToolChoice is sent as tool_choice: none as "none",
// required as "required", and required with a Name as the named function
// ({"type": "function", "function": {"name": ...}}, and {"type":
// "function", "name": ...} in the Responses API). Auto sends nothing: it
// is the APIs' default when there are tools. A request without tools (a
// compactor's, say) sends no tool_choice whatever its mode, since servers
// refuse one without tools. A choice no request can honour is an error
// before anything is sent: a Name that is not among the request's tools,
// required without tools, a Name with another mode, an unknown mode.
//
// The loop's wrap-up turn sends none with the tools still listed, after
// the last results and a user message; both APIs take a user message
// right after tool results, but some servers do not (Mistral's API, and
// vLLM serving Mistral models, want an assistant message between tool
// results and a user message). For an OpenAI-compatible server that
// refuses tool_choice, pass option.WithJSONDel("tool_choice") in
// Config.RequestOptions: the wrap-up message still asks for a final
// answer, but nothing then stops the model from calling a tool, and the
// loop does not run calls made in that turn.
//
// # Structured output
//
// [toolloop.Request].Output is sent as response_format {"type":
// "json_schema", "json_schema": {name, description, schema, strict}}, and
// in the Responses API as text.format {"type": "json_schema", name,
// description, schema, strict}; the name defaults to "final_answer". The
// answer comes back as the assistant's text, the JSON itself; a refusal,
// which Structured Outputs sends instead of JSON, is StopRefusal as
// above. The schema is sent as a tool's is, less the keywords the API
// refuses at the root. strict is true only when strict mode can take the
// schema as it is written (the rules of strict tools, above), whether
// Config.Strict is set or not: the schema is never rewritten to fit,
// since making an optional property required would change what the model
// may answer, so any other schema goes with strict false (why is logged
// at debug level), and the loop's validation of the answer is then what
// holds the model to it.
//
// [Model.NativeOutput] and [ResponsesModel.NativeOutput] report true, with
// tools or without (OpenAI's API takes both together), except with
// Config.NoNativeOutput, for models that predate Structured Outputs
// (gpt-3.5, gpt-4 and gpt-4-turbo, the first gpt-4o snapshot
// gpt-4o-2024-05-13, o1-mini, o1-preview), and for DeepSeek's API, which
// takes response_format json_object only. The loop then asks for the
// answer through a tool of its own. A request with Output that the model
// cannot take fails with an error wrapping [ErrConfig] before anything
// is sent; so does (without ErrConfig) one whose format has no schema, a
// schema that is not a JSON object, or a name that is not 1 to 64 of
// a-z, A-Z, 0-9, _ and -. Set Config.NoNativeOutput for an
// OpenAI-compatible server that does not take json_schema.
//
// # Streaming, retries and errors
//
// [Model.Stream] yields text deltas as they arrive and a final chunk with
// the whole turn, built by the SDK's ChatCompletionAccumulator; tool call
// arguments split across chunks, even inside a character, are reassembled
// exactly. A stream that ends with data: [DONE] but no finish reason, as
// some servers send, ends the turn normally (tool_use if tool calls
// arrived, else end); one that ends without [DONE] was cut off.
// Streamed requests ask for usage with stream_options; for a
// server that refuses the field, pass option.WithJSONDel("stream_options")
// in Config.RequestOptions. The SDK retries 408, 409, 429 and 5xx answers with backoff,
// honouring Retry-After (Config.MaxRetries). Errors the API returns after
// that are *[providers.Error], matching [providers.ErrContextLength],
// [providers.ErrRateLimit], [providers.ErrOverloaded] or
// [providers.ErrAuth] with errors.Is, and unwrapping to *openai.Error.
// Their message names the request's method and URL (without its user
// info or query), the status, and the body's first 512 bytes when it
// holds no error message; the API key never shows. A 404 from a base
// URL with no version in its path says what to try:
//
//	openai: POST "http://localhost:11434/chat/completions": 404 Not Found: 404 page not found; did you mean BaseURL "http://localhost:11434/v1"?
//
// Error bodies in other envelopes (vLLM's older top-level {"object":
// "error", ...}, Ollama's {"error": "..."}) are rewritten into OpenAI's
// before the SDK reads them, so they keep their message and a context
// overflow is recognised. A 429 that says the request alone is over the
// rate limit ("Request too large ... Limit 30000, Requested 45000") is
// not retried, since no wait makes it fit, and matches
// [providers.ErrContextLength]: like an overflow, only a smaller request
// can succeed.
//
// # Responses API
//
// [NewResponses] returns a [ResponsesModel], the same kind of model backed
// by OpenAI's Responses API (POST /responses), configured by the same
// Config. Use it for OpenAI's reasoning models, whose reasoning survives
// between turns only there:
//
//	model, err := openai.NewResponses(openai.Config{ReasoningEffort: "medium", ReasoningSummary: "auto"}) // DefaultModel reasons
//
// Requests are stateless: store is false (unless Config.Store) and the
// whole transcript is sent every turn, with include:
// ["reasoning.encrypted_content"]. A model that cannot return encrypted
// reasoning (OpenAI's non-reasoning models answer 400 about include) is
// asked again without it, once; the model then stops asking. The
// transcript maps to input items: the system messages a transcript starts
// with become the instructions, later ones system messages in place; user
// text and images as input_text and input_image; assistant text as
// assistant messages; tool calls as function_call items with their call
// IDs; results as function_call_output items, their text prefixed
// "Error: " when they failed, images as input_image parts of the output.
// Function tools are sent like those of Chat Completions, with strict
// always said (the API's default is strict).
//
// Each reasoning item of an answer becomes a reasoning block: its summary
// parts, joined by blank lines, as the text (Reasoning.Summary set); its
// ID, encrypted content, and summary and content parts as received (in
// Reasoning.Extra, {"summary": [...], "content": [...]}); and, when a
// function call came right after it, that call's ID in Reasoning.CallID.
// On the next turn the block goes back verbatim as a reasoning input item,
// in its place: just before its function call, or among the message's
// text in content order. Without Config.Store, a block with no encrypted
// content cannot be sent back (the API would look its ID up, and fail),
// and is dropped; with Store it goes back by ID with its summary.
// Reasoning blocks of every other provider are dropped.
//
// Streams yield output text and refusal deltas as Chunk.Text and
// reasoning summary deltas as Chunk.Reasoning (parts separated by a blank
// line, as in the block). The last chunk's Response is built from the
// terminal event's response, with the encrypted content of the finished
// items; function call arguments are those of the finished call, or their
// deltas reassembled from servers that leave them out. A completed
// response is StopEnd, or StopToolUse with function calls; an incomplete
// one is StopLength (max_output_tokens; a function call cut off is
// dropped) or StopRefusal (content_filter, worded as for Chat
// Completions), and so is a refusal. A failed response, an error event or
// an error status is a *[providers.Error] with the same kinds as Chat
// Completions. Usage maps input and output tokens (which include the
// reasoning tokens), cached and cache-written input tokens and reasoning
// tokens.
package openai
