package providertest

import (
	"net/http"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
)

// A Harness is what Run needs to check a provider: how to make its model,
// how its fake server answers in the provider's wire format, the
// provider's error responses, and the features it lacks.
type Harness struct {
	// Provider is the name the model's errors carry in
	// providers.Error.Provider, such as "openai".
	Provider string
	// New returns the model under test, sending its requests to s.URL
	// with s.Client and retrying a failed request at most s.Retries
	// times. Run calls it once per check, each time with a new server.
	New func(t *testing.T, s Setup) toolloop.Model
	// Replies returns the fake server's replies to turn, in the
	// provider's wire format: an encoder writes turn.Want; a test that
	// replays recorded responses returns the files that answer the turn
	// (see Answers). Several replies are several shapes of the same
	// answer (a refusal and a content filter, say): Run checks each on
	// its own. The turns, by Name:
	//
	//	text                 a text answer (stop)
	//	tool_call            one tool call (tool_use)
	//	parallel_tool_calls  two or more calls in one turn
	//	length               an answer cut off by the token limit (length)
	//	refusal              a refusal (refusal)
	//	reasoning            reasoning blocks, and a call or a text
	//	output               a structured answer to Request.Output
	//
	// and, streamed (turn.Stream is set, and the reply is an event
	// stream), stream_text, stream_tool_calls, stream_reasoning,
	// stream_length, stream_refusal and stream_output. A text or
	// stream_text reply also answers the requests whose answer does not
	// matter, such as a tool choice's: only its first one is used there.
	//
	// Returning no reply fails the test, unless Lacks says the provider
	// lacks the turn's feature (Replies is then not asked), the model is
	// no toolloop.Streamer (no stream turns), or it cannot take
	// Request.Output (see toolloop.NativeOutput; no output turns).
	Replies func(turn Turn) []Reply
	// Errors are the provider's real error responses, with the errors
	// they must become. There must be one at least for each of
	// providers.ErrContextLength, ErrRateLimit, ErrOverloaded and ErrAuth.
	Errors []ErrorCase
	// Lacks declares the features the provider does not have; Run checks
	// that the rest work.
	Lacks Features
	// Answers, if set, is the folder of the answers that recorded replies
	// hold: the answer to a reply with a File is the Want in the file of
	// the same name there, with the extension .json (the answer to
	// responses/plain.json is answers/plain.json, to
	// responses/stream_text.sse answers/stream_text.json). In it, the
	// fake server's address, which a model may record (in a reasoning
	// block's provider data, say), is written $SERVER. A reply without a
	// File, or without Answers, is to be the turn's Want.
	Answers string
	// Golden, if set, starts the path of the golden request bodies: Run
	// adds the name of each request it scripts and ".json"
	// ("testdata/requests/" names a folder). The names are generate,
	// stream, tool_choice_auto, tool_choice_none, tool_choice_required,
	// tool_choice_named, tool_choice_none_without_tools, output_format,
	// output_format_tools and output_format_stream. Bodies are compared
	// as decoded JSON.
	Golden string
	// Update writes the golden request bodies and the answers from what
	// the server receives and the model makes of each reply, instead of
	// comparing them: run the tests with it after recording a response,
	// and review the files.
	Update bool
}

// Setup says where the model under test sends its requests.
type Setup struct {
	// URL is the fake server's base URL.
	URL string
	// Client is the client that reaches it.
	Client *http.Client
	// Retries is how many times the model may retry a failed request: 0
	// for most checks, so that each call makes one request.
	Retries int
}

// Features are what a provider may lack. A true field says it lacks the
// feature, and Run leaves out the checks that need it. Streaming and
// structured output are declared by the model itself, as
// toolloop.Streamer and toolloop.NativeOutput; retries by
// ErrorCase.Retried.
type Features struct {
	// Parallel: the model makes one tool call a turn at most.
	Parallel bool
	// Reasoning: the model returns no reasoning blocks (and so sends none
	// back).
	Reasoning bool
	// Refusal: the provider has no refusal stop reason.
	Refusal bool
	// Usage: the provider reports no token counts; Run then wants them
	// all 0.
	Usage bool
}

// A Turn is one model turn Run scripts: the request it sends, and the
// answer the fake server is to give.
type Turn struct {
	// Name says which turn it is (see Harness.Replies).
	Name string
	// Stream is set when the model is called through Stream: the reply
	// must be an event stream.
	Stream bool
	// Request is the request Run sends. It must not be changed.
	Request *toolloop.Request
	// Want is the answer the model must make of the reply, for an
	// encoder to write. A recorded reply holds its own (see
	// Harness.Answers).
	Want Want
}

// Want is what a model must make of a reply.
type Want struct {
	// Response is the answer, compared as JSON. A reasoning block whose
	// Reasoning.Provider is empty stands for a block of the model's own,
	// whatever the provider's name.
	Response toolloop.Response `json:"response"`
	// Text and Reasoning are the deltas a stream yields before its last
	// chunk, in order. When nil, Run checks only that they add up to the
	// response's text and reasoning.
	Text      []string `json:"text,omitempty"`
	Reasoning []string `json:"reasoning,omitempty"`
}

// An ErrorCase is one of the provider's real error responses and the
// error the model must return for it. An error status is checked through
// Generate and Stream; a 200 reply (an error event in a stream, or a
// failed response) through the call whose body it is.
type ErrorCase struct {
	// Name names the case in test names.
	Name string
	// Reply is the error response, sent for each attempt.
	Reply Reply
	// Kind is the sentinel the error must match with errors.Is (and no
	// other), or nil for none.
	Kind error
	// Type is the *providers.Error's Type: the provider's error type or
	// code.
	Type string
	// Status is the *providers.Error's StatusCode when it is not the
	// reply's status (an error event in a stream may carry its own).
	Status int
	// Message, if set, is the *providers.Error's Message; else any
	// message will do, but not none.
	Message string
	// Retried says the model retries this error when Setup.Retries
	// allows: Run checks that a retry follows it, and that the error
	// reaches the caller once the retries are spent. An error that is not
	// retried must reach the caller at once, whatever the retries.
	Retried bool
	// Wait is how long the error says to wait before trying again
	// (providers.Error.Wait, from a Retry-After header, say).
	Wait time.Duration
}
