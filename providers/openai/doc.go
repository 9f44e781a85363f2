// Package openai is a [toolloop.Model] for OpenAI's Chat Completions API,
// and for any server that speaks it: Ollama, vLLM, llama.cpp's server,
// gateways. It uses the official SDK, github.com/openai/openai-go/v3, for
// transport, retries and types; this package is the mapping.
//
//	model := openai.New(openai.Config{Model: "gpt-4.1"}) // key from OPENAI_API_KEY
//	loop := &toolloop.AgentLoop{Model: model, Tools: reg}
//
// For another server, set BaseURL (or OPENAI_BASE_URL):
//
//	model := openai.New(openai.Config{Model: "qwen3", BaseURL: "http://localhost:11434/v1"})
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
//
// In answers, finish_reason stop is [toolloop.StopEnd] (or StopToolUse
// when the message has tool calls, as some servers say stop then),
// tool_calls is StopToolUse, length is StopLength, and content_filter or a
// refusal is StopRefusal, with a text that says so; tool calls of a refused
// turn are dropped. Arguments are kept verbatim, malformed or not: the loop
// validates them. Usage maps prompt, completion and cached prompt tokens.
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
// # Streaming, retries and errors
//
// [Model.Stream] yields text deltas as they arrive and a final chunk with
// the whole turn, built by the SDK's ChatCompletionAccumulator; tool call
// arguments split across chunks, even inside a character, are reassembled
// exactly. Streamed requests ask for usage with stream_options; for a
// server that refuses the field, pass option.WithJSONDel("stream_options")
// in Config.RequestOptions. The SDK retries 408, 409, 429 and 5xx answers with backoff,
// honouring Retry-After (Config.MaxRetries). Errors the API returns after
// that are *[providers.Error], matching [providers.ErrContextLength],
// [providers.ErrRateLimit], [providers.ErrOverloaded] or
// [providers.ErrAuth] with errors.Is, and unwrapping to *openai.Error.
package openai
