// Command chat talks to a model that can call two small tools, printing
// the answer as it streams and each tool call as it runs.
//
//	go run ./examples/chat "What's the weather in Paris?"
//	go run ./examples/chat -i            # a conversation, one line per turn
//
// It picks its model from the environment:
//
//   - OPENAI_BASE_URL set: an OpenAI-compatible server (Ollama, vLLM,
//     llama.cpp's server, a gateway), with OPENAI_API_KEY if it needs one;
//   - ANTHROPIC_API_KEY set: Anthropic;
//   - OPENAI_API_KEY set: OpenAI;
//   - none of them: a scripted model, so that the example always runs
//     offline. It says so.
//
// -provider forces a choice and -model names the model (CHAT_MODEL works
// too). The weather the tools report is made up.
package main
