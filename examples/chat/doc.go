// Command chat talks to a model that can call two small tools, printing
// the answer as it streams and a line for each tool call as it completes
// (sink.NewPrinter).
//
//	go run ./examples/chat "What's the weather in Paris?"
//	go run ./examples/chat -i            # a conversation, one line per turn
//
// It picks its model from the environment:
//
//   - OPENAI_BASE_URL set: an OpenAI-compatible server (Ollama, vLLM,
//     llama.cpp's server, a gateway), with OPENAI_API_KEY if it needs one;
//   - ANTHROPIC_API_KEY set: Anthropic;
//   - GEMINI_API_KEY (or GOOGLE_API_KEY) set: Gemini;
//   - OPENAI_API_KEY set: OpenAI;
//   - none of them: a scripted model, so that the example always runs
//     offline. It says so.
//
// -provider forces a choice (openai, responses for OpenAI's Responses API,
// anthropic, gemini, scripted) and -model names the model (CHAT_MODEL
// works too). For a reasoning model, -effort says how hard it thinks
// (OpenAI's reasoning effort, Anthropic's effort, Gemini 3's thinking
// level) and -thinking gives it a budget in tokens (Anthropic's extended
// thinking, Gemini's thinking budget); the reasoning the model shows
// streams dimmed, under a ┊ margin, and goes back to it on the next turn
// as its API requires:
//
//	go run ./examples/chat -provider anthropic -thinking 2048
//	go run ./examples/chat -provider responses -model gpt-5 -effort low
//	go run ./examples/chat -thinking 1   # the scripted model, thinking
//
// The weather the tools report is made up.
package main
