// Package providertest is a conformance kit for [toolloop.Model]
// implementations that talk to a model provider's API, in the manner of
// testing/slogtest and testing/fstest: one call, [Run], checks that a
// provider maps its wire format onto toolloop's the way the loop relies
// on, against fake servers that answer in that wire format.
//
// A test gives Run a [Harness]: how to make the model, pointed at a fake
// server ([Setup]); the server's replies to each turn the kit scripts
// ([Turn], [Reply]), written by an encoder or replayed from recorded
// responses ([Recorded]); the provider's real error responses
// ([ErrorCase]); and the [Features] it lacks. Run then checks text, a tool
// call and parallel calls (IDs, names, argument JSON), stop reasons (stop,
// tool_use, length, refusal), usage, streamed deltas and their assembly
// into the final response, reasoning blocks and their round trip into the
// next request, tool choice (auto, none, required, named) reaching the
// request, structured output ([toolloop.Request].Output, where the model
// says it takes it through [toolloop.NativeOutput]), the error classes
// of package providers (ErrContextLength, ErrRateLimit, ErrOverloaded,
// ErrAuth and ErrConfig with errors.Is, *providers.Error with errors.As),
// retries, and cancellation. A feature the provider lacks is declared in
// Harness.Lacks and logged, never skipped in silence.
//
// The package needs nothing but the standard library and toolloop, so a
// provider of your own runs the kit without pulling in any SDK:
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, providertest.Harness{
//			Provider: "tiny",
//			New: func(t *testing.T, s providertest.Setup) toolloop.Model {
//				return &tiny.Model{URL: s.URL, Client: s.Client}
//			},
//			Replies: func(turn providertest.Turn) []providertest.Reply {
//				return []providertest.Reply{{Body: encode(turn.Want.Response)}}
//			},
//			Errors: []providertest.ErrorCase{...},
//			Lacks:  providertest.Features{Reasoning: true},
//		})
//	}
//
// The example shows such a provider whole. A provider tested against
// recorded responses keeps, beside each, the answer it must give
// (Harness.Answers) and golden request bodies (Harness.Golden), both
// written with Harness.Update and reviewed like code.
//
// For a Model that is no provider (a wrapper, a scripted model),
// looptest.TestModel checks the contract every Model meets. [Server] is
// the kit's fake server, for a provider's own tests of its wire quirks,
// and [Bench] measures the mapping of a request to the wire.
package providertest
