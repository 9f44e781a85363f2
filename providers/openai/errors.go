package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// endpoints are the paths the SDK appends to the base URL, for the hint
// on a 404 (see wire.MissingVersion).
var endpoints = []string{"/chat/completions", "/responses"}

// mapError turns an error response of the API into a *providers.Error,
// wrapped with the request it answered when its status is not a success
// (see wire.Describe): a 404 from a base URL without its /v1 says so.
// Other errors (the context's, the network's) are returned as they are.
func mapError(err error) error {
	var ae *oai.Error
	if errors.As(err, &ae) {
		// Some servers send the HTTP status as a numeric code: that is no
		// error code.
		code := ae.Code
		if raw := ae.JSON.Code.Raw(); !strings.HasPrefix(raw, `"`) {
			code = ""
		}
		pe := &providers.Error{
			Provider:   "openai",
			StatusCode: ae.StatusCode,
			Type:       wire.FirstNonEmpty(code, ae.Type),
			Message:    ae.Message,
			Wait:       wire.RetryAfter(wire.ResponseHeader(ae.Response), time.Now()),
			Err:        err,
		}
		classify(pe, code, ae.Type)
		if ae.Request == nil {
			return pe
		}
		var hint string
		if ae.StatusCode == http.StatusNotFound {
			hint = wire.MissingVersion(ae.Request.URL, endpoints...)
		}
		return wire.Describe(pe, ae.Request, wire.ResponseBody(ae.Response), hint)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// An error event in the middle of a stream: the status was 200.
		var body struct {
			Error struct {
				Code    any    `json:"code"`
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &body)
		code, _ := body.Error.Code.(string)
		return classify(&providers.Error{
			Provider:   "openai",
			StatusCode: http.StatusOK,
			Type:       wire.FirstNonEmpty(code, body.Error.Type),
			Message:    body.Error.Message,
			Err:        err,
		}, code, body.Error.Type)
	}
	return err
}

// classify sets e.Kind from its status and what the body says. OpenAI says
// context_length_exceeded in the code; llama.cpp's server says
// exceed_context_size_error in the type; vLLM and others send no code but
// keep OpenAI's wording, "maximum context length" (or vLLM's "maximum
// model length"). A 429 for a request that alone is over the rate limit
// is ErrContextLength too: like an overflow, only a smaller request can
// succeed, so it was not retried (see errorBodies).
func classify(e *providers.Error, code, typ string) *providers.Error {
	e.Kind = wire.StatusKind(e.StatusCode)
	msg := strings.ToLower(e.Message)
	switch {
	case code == "context_length_exceeded", typ == "exceed_context_size_error",
		e.StatusCode == http.StatusBadRequest && (strings.Contains(msg, "maximum context length") ||
			strings.Contains(msg, "maximum model length")),
		e.StatusCode == http.StatusTooManyRequests && overLimit(e.Message):
		e.Kind = providers.ErrContextLength
	case code == "rate_limit_exceeded":
		e.Kind = providers.ErrRateLimit
	}
	return e
}
