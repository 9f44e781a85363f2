package gemini

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// sdkPath matches the path the SDK appends to the base URL (the API
// version, then the model or the Vertex AI project), capturing the base
// URL's own path, for the hint on a 404 (see wire.ExtraVersion).
var sdkPath = regexp.MustCompile(`^(.*?)/v\d+[a-z0-9]*/(?:models|tunedModels|projects|publishers)/`)

// mapError turns an error response of the API into a *providers.Error,
// wrapped with the request it answered (which x recorded) when its status
// is not a success (see wire.Describe): a 404 from a base URL that ends
// with an API version, which the SDK adds itself, says so. Other errors
// (the context's, the network's) are returned as they are.
func mapError(err error, x *exchange) error {
	var ae genai.APIError
	if !errors.As(err, &ae) {
		var pae *genai.APIError
		if !errors.As(err, &pae) || pae == nil {
			return err
		}
		ae = *pae
	}
	e := &providers.Error{
		Provider:   ProviderName,
		StatusCode: ae.Code,
		Type:       ae.Status,
		Message:    ae.Message,
		Err:        err,
	}
	if e.StatusCode == 0 {
		e.StatusCode = http.StatusOK
	}
	e.Kind = kind(e, reasons(ae.Details))
	e.Wait = retryDelay(ae.Details)
	var body []byte
	if plainBody(ae) {
		// The body was no google.rpc error: the SDK put the HTTP status
		// line in Status and the whole body in Message. They are shown as
		// the status and an excerpt of the body.
		body = []byte(ae.Message)
		e.Type, e.Message = "", ""
	}
	req := x.last(e.StatusCode)
	if req == nil {
		return e
	}
	var hint string
	if e.StatusCode == http.StatusNotFound {
		hint = wire.ExtraVersion(req.URL, sdkPath)
	}
	return wire.Describe(e, req, body, hint)
}

// plainBody reports whether ae comes from a body the SDK could not read
// as an error: its Status is then the HTTP status line ("404 Not
// Found"), not a google.rpc status ("NOT_FOUND").
func plainBody(ae genai.APIError) bool {
	return ae.Status != "" && ae.Status[0] >= '0' && ae.Status[0] <= '9'
}

// kind returns the sentinel for an error: by its status code and its
// google.rpc status (RESOURCE_EXHAUSTED, UNAVAILABLE, UNAUTHENTICATED,
// PERMISSION_DENIED), and by the reason of its ErrorInfo detail for a key
// the API rejects with 400 (API_KEY_INVALID and the like).
//
// Two kinds come with nothing but a message, so the message decides: a
// prompt too long for the model is a 400 INVALID_ARGUMENT saying "The
// input token count (N) exceeds the maximum number of tokens allowed
// (M)", and an overload is sometimes a 500 INTERNAL saying the model is
// overloaded.
func kind(e *providers.Error, reasons []string) error {
	msg := strings.ToLower(e.Message)
	switch {
	case e.StatusCode == http.StatusBadRequest && strings.Contains(msg, "exceeds the maximum number of tokens"):
		return providers.ErrContextLength
	case e.Type == "RESOURCE_EXHAUSTED":
		return providers.ErrRateLimit
	case e.Type == "UNAVAILABLE",
		e.StatusCode == http.StatusInternalServerError && strings.Contains(msg, "overloaded"):
		return providers.ErrOverloaded
	case e.Type == "UNAUTHENTICATED", e.Type == "PERMISSION_DENIED":
		return providers.ErrAuth
	}
	for _, r := range reasons {
		switch r {
		case "API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED", "API_KEY_HTTP_REFERRER_BLOCKED",
			"API_KEY_IP_ADDRESS_BLOCKED", "API_KEY_ANDROID_APP_BLOCKED", "API_KEY_IOS_APP_BLOCKED", "ACCESS_TOKEN_EXPIRED":
			return providers.ErrAuth
		}
	}
	return wire.StatusKind(e.StatusCode)
}

// reasons returns the reasons of an error's google.rpc.ErrorInfo details.
// retryDelay returns the retry delay a google.rpc.RetryInfo detail
// asks for ("13s", "1.5s"), or 0; at most an hour.
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); t != "type.googleapis.com/google.rpc.RetryInfo" {
			continue
		}
		s, _ := d["retryDelay"].(string)
		if v, err := time.ParseDuration(s); err == nil && v > 0 {
			return min(v, time.Hour)
		}
	}
	return 0
}

func reasons(details []map[string]any) []string {
	var out []string
	for _, d := range details {
		if t, _ := d["@type"].(string); t != "type.googleapis.com/google.rpc.ErrorInfo" {
			continue
		}
		if r, _ := d["reason"].(string); r != "" {
			out = append(out, r)
		}
	}
	return out
}
