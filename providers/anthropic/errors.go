package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// sdkPath matches the path the SDK appends to the base URL, capturing the
// base URL's own path, for the hint on a 404 (see wire.ExtraVersion).
var sdkPath = regexp.MustCompile(`^(.*)/v1/messages(?:/count_tokens)?$`)

// mapError turns an error response of the API into a *providers.Error,
// wrapped with the request it answered when its status is not a success
// (see wire.Describe): a 404 from a base URL that ends with /v1, which
// the SDK adds itself, says so. Other errors (the context's, the
// network's) are returned as they are.
func mapError(err error) error {
	var ae *sdk.Error
	if !errors.As(err, &ae) {
		return err
	}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(ae.RawJSON()), &body)
	e := &providers.Error{
		Provider:   "anthropic",
		StatusCode: ae.StatusCode,
		Type:       wire.FirstNonEmpty(string(ae.Type()), body.Error.Type),
		Message:    body.Error.Message,
		Wait:       wire.RetryAfter(wire.ResponseHeader(ae.Response), time.Now()),
		Err:        err,
	}
	e.Kind = wire.StatusKind(e.StatusCode)
	switch e.Type {
	case "rate_limit_error":
		e.Kind = providers.ErrRateLimit
	case "overloaded_error":
		e.Kind = providers.ErrOverloaded
	case "authentication_error", "permission_error":
		e.Kind = providers.ErrAuth
	case "request_too_large":
		e.Kind = providers.ErrContextLength
	}
	if isContextLength(e) {
		e.Kind = providers.ErrContextLength
	}
	if ae.Request == nil {
		return e
	}
	var hint string
	if ae.StatusCode == http.StatusNotFound {
		hint = wire.ExtraVersion(ae.Request.URL, sdkPath)
	}
	return wire.Describe(e, ae.Request, wire.ResponseBody(ae.Response), hint)
}

// isContextLength reports whether e says the prompt does not fit the
// context window. The API has no code for it, only an invalid request
// whose message says "prompt is too long: N tokens > M maximum", or that
// the input and max_tokens "exceed context limit".
func isContextLength(e *providers.Error) bool {
	if e.StatusCode != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(e.Message)
	return strings.Contains(msg, "prompt is too long") || strings.Contains(msg, "exceed context limit")
}
