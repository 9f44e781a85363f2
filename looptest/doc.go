// Package looptest tests agents built on toolloop, the way net/http/httptest
// tests HTTP handlers.
//
// Its [Model] is a scripted toolloop.Model: it answers each turn from a
// fixed script of turns ([Turn]), and fails the test with a readable diff when
// the loop sends something the script did not expect, or calls the model
// more or fewer times than the script says. A complete test, in a file
// weather_test.go of your package (it needs nothing but the standard
// library and toolloop):
//
//	package weather_test
//
//	import (
//		"context"
//		"flag"
//		"testing"
//
//		"github.com/toolloop/toolloop"
//		"github.com/toolloop/toolloop/looptest"
//	)
//
//	var update = flag.Bool("update", false, "rewrite the golden files in testdata")
//
//	func TestWeatherAgent(t *testing.T) {
//		var tools toolloop.ToolRegistry
//		tools.MustRegister(toolloop.NewTool("get_weather", "Get the weather in a city.",
//			func(_ context.Context, in struct {
//				City string `json:"city"`
//			}) (any, error) {
//				return "18°C and sunny in " + in.City, nil
//			}))
//		model := looptest.NewModel(t,
//			looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "get_weather", `{"city":"Paris"}`))},
//			looptest.Turn{Reply: looptest.Text("It is 18°C and sunny in Paris.")},
//		)
//		loop := &toolloop.AgentLoop{Model: model, Tools: &tools}
//		res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Weather in Paris?")})
//		if err != nil {
//			t.Fatal(err)
//		}
//		looptest.AssertValid(t, res.Messages)
//		looptest.AssertGolden(t, "testdata/weather.json", res.Messages, *update)
//	}
//
// Run go test -update once: [AssertGolden] writes testdata/weather.json
// (creating testdata/), which you review and commit; from then on the test
// compares every run with it, and fails with a diff when the transcript
// changes. Without the file, the test fails and says to run -update.
//
// A recorded transcript can also drive the model: [Replay] plays back its
// assistant messages and checks that the loop sent exactly the
// transcript before each of them, so a run that diverges fails at the
// first difference. Pass Run the messages before the first assistant
// message (here the user's one):
//
//	want := looptest.Load(t, "testdata/weather.json")
//	loop := &toolloop.AgentLoop{Model: looptest.Replay(t, want), Tools: &tools}
//	res, err := loop.Run(context.Background(), want[:1])
//	...
//	looptest.AssertTranscript(t, want, res.Messages)
//
// A turn can repeat: Times answers that many calls in a row, and
// [Forever] every call from then on, to test Budget.MaxTurns, budgets and
// loops that must stop a model that will not. Replies reach the loop as
// deep copies made without re-encoding, so tool call arguments arrive
// byte for byte as written ([Call]): invalid JSON, duplicate keys,
// nesting past a decoder's limit.
//
// Outside tests, [Script] answers from a fixed list of replies and
// [Always] with one reply forever, checking nothing. [Recorder] collects
// events, [AssertValid] checks that every call has exactly one result,
// and [TestTool] and [TestModel] are conformance tests for your own Tool
// and Model implementations, like testing/slogtest is for slog handlers
// (a provider of your own runs providertest.Run, the kit OpenAI,
// Anthropic and Gemini run).
package looptest
