package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/option"
)

// maxErrorBody bounds the error bodies errorBodies reads.
const maxErrorBody = 1 << 20

// errorBodies is the SDK middleware that readies error responses before
// the SDK reads them:
//
//   - Error bodies in other envelopes than OpenAI's {"error": {...}}
//     (vLLM's older top-level {"object": "error", "message": ...},
//     Ollama's {"error": "..."}, a bare {"detail": "..."}) are rewritten
//     into it, so that they arrive as *openai.Error with their message,
//     type and status; the SDK would otherwise fail to decode them.
//   - A 429 that says the request alone is over the rate limit gets
//     x-should-retry: false, which the SDK honours: no wait makes it fit.
func errorBodies(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil || res.StatusCode < 400 || res.Body == nil {
		return res, err
	}
	body, rerr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody+1))
	if rerr != nil || len(body) > maxErrorBody {
		// Leave what could not be read whole to the SDK.
		res.Body = readCloser{io.MultiReader(bytes.NewReader(body), res.Body), res.Body}
		return res, err
	}
	_ = res.Body.Close()
	env, fixed := envelope(body)
	if fixed != nil {
		body = fixed
		res.ContentLength = int64(len(body))
		res.Header.Del("Content-Length")
	}
	if res.StatusCode == http.StatusTooManyRequests && overLimit(env.Error.Message) {
		if res.Header == nil {
			res.Header = http.Header{}
		}
		res.Header.Set("X-Should-Retry", "false")
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// errorEnvelope is OpenAI's error body, as far as errorBodies reads it.
type errorEnvelope struct {
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// envelope decodes an error body and, when it is not in OpenAI's
// envelope, returns it rewritten into it (else nil).
func envelope(body []byte) (errorEnvelope, []byte) {
	var env errorEnvelope
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return env, nil
	}
	var wrapped any
	switch raw, ok := top["error"]; {
	case ok && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")):
		_ = json.Unmarshal(body, &env)
		return env, nil
	case ok:
		// Ollama: {"error": "model \"x\" not found"}.
		var msg string
		if json.Unmarshal(raw, &msg) != nil {
			return env, nil
		}
		wrapped = map[string]string{"message": msg}
	case top["message"] != nil:
		// vLLM's older envelope: the error object at the top.
		wrapped = top
	case top["detail"] != nil:
		var msg string
		if json.Unmarshal(top["detail"], &msg) != nil {
			return env, nil
		}
		wrapped = map[string]string{"message": msg}
	default:
		return env, nil
	}
	fixed, err := json.Marshal(map[string]any{"error": wrapped})
	if err != nil {
		return env, nil
	}
	_ = json.Unmarshal(fixed, &env)
	return env, fixed
}

// overLimitRe finds the limit and the size of the request in OpenAI's
// rate limit messages: "... on tokens per min (TPM): Limit 30000,
// Requested 45000." or "... Limit 30000, Used 29876, Requested 512."
var overLimitRe = regexp.MustCompile(`Limit (\d+), (?:Used \d+, )?Requested (\d+)`)

// overLimit reports whether a rate limit message says the request alone
// is over the limit ("Request too large for gpt-4o ...: Limit 30000,
// Requested 45000"), so that no retry can succeed. The message is all the
// API says: its code is rate_limit_exceeded either way.
func overLimit(msg string) bool {
	if strings.HasPrefix(strings.ToLower(msg), "request too large") {
		return true
	}
	m := overLimitRe.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	limit, err1 := strconv.ParseInt(m[1], 10, 64)
	requested, err2 := strconv.ParseInt(m[2], 10, 64)
	return err1 == nil && err2 == nil && requested > limit
}
