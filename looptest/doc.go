// Package looptest tests agents built on toolloop, the way net/http/httptest
// tests HTTP handlers.
//
// Its [Model] is a scripted toolloop.Model: it answers each turn from a
// fixed script, and fails the test with a readable diff when the loop sends
// something the script did not expect. A script is a list of [Turn]s, or a
// whole expected transcript (from Go values or a JSON file) that [Replay]
// plays back, checking every request against it:
//
//	want := looptest.Load(t, "testdata/fix_bug.json")
//	loop := &toolloop.AgentLoop{Model: looptest.Replay(t, want), Tools: reg}
//	res, err := loop.Run(ctx, want[:1])
//	looptest.AssertTranscript(t, want, res.Messages)
//
// [Recorder] collects events, [AssertValid] checks that every call has
// exactly one result, and [TestTool] and [TestModel] are conformance tests
// for your own Tool and Model implementations, like testing/slogtest is for
// slog handlers.
package looptest
