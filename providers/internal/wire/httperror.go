package wire

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolloop/toolloop/providers"
)

// MaxExcerpt bounds the excerpt of an error body that an [HTTPError]
// shows, in bytes, before the ellipsis.
const MaxExcerpt = 512

// minSecret is the length under which a credential is not scrubbed from
// error text: replacing a two-letter "key" everywhere would garble the
// message and protect nothing.
const minSecret = 8

// HTTPError is a provider's error response (a status outside 2xx) with the
// request it answered, so that a wrong base URL or path shows in the
// error: the method, the URL without its user info, query or fragment
// (where secrets such as key= live), an excerpt of the body when the
// provider's message could not be read from it, and a hint when the URL
// looks wrong. It unwraps to the *providers.Error, so errors.Is and
// errors.As see what they saw before.
type HTTPError struct {
	// Method is the request's method.
	Method string
	// URL is the request's URL, redacted (see RedactURL).
	URL string
	// Excerpt is the start of the response body, on one line, without
	// control characters or the request's credentials (see Excerpt),
	// when the provider's message could not be read from the body (a
	// proxy's HTML page, a plain-text 404); else empty.
	Excerpt string
	// Hint suggests a fix, such as a base URL with its missing version
	// segment; empty when there is none.
	Hint string
	// Err is the provider error, never nil.
	Err *providers.Error
}

// Error implements the error interface:
//
//	openai: POST "http://localhost:11434/chat/completions": 404 Not Found: 404 page not found; did you mean BaseURL "http://localhost:11434/v1"?
func (e *HTTPError) Error() string {
	p := e.Err
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %q: %d %s", p.Provider, e.Method, e.URL, p.StatusCode, http.StatusText(p.StatusCode))
	if p.Type != "" {
		b.WriteString(" (" + p.Type + ")")
	}
	if msg := oneLine(p.Message, MaxExcerpt); msg != "" {
		b.WriteString(": " + msg)
	} else if e.Excerpt != "" {
		b.WriteString(": " + e.Excerpt)
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// Unwrap returns the provider error.
func (e *HTTPError) Unwrap() error { return e.Err }

// Describe returns pe with the request it answered, as an *[HTTPError]:
// the method and redacted URL of req, an excerpt of body if pe has no
// message, and hint. The
// credentials req carries (see Secrets) are scrubbed from pe.Message and
// from the excerpt. It returns pe itself when req is nil or pe's status
// is a success (an error event inside a stream).
func Describe(pe *providers.Error, req *http.Request, body []byte, hint string) error {
	if req == nil || req.URL == nil || pe.StatusCode < 300 {
		return pe
	}
	secrets := Secrets(req)
	pe.Message = scrub(pe.Message, secrets)
	pe.Method, pe.URL, pe.Hint = req.Method, RedactURL(req.URL), hint
	e := &HTTPError{Method: pe.Method, URL: pe.URL, Hint: hint, Err: pe}
	if pe.Message == "" {
		e.Excerpt = Excerpt(body, secrets)
	}
	return e
}

// ResponseBody returns the start of res's body (enough for an excerpt)
// and puts it back, so that whoever reads the body next reads all of it.
func ResponseBody(res *http.Response) []byte {
	if res == nil || res.Body == nil {
		return nil
	}
	head, _ := io.ReadAll(io.LimitReader(res.Body, excerptWindow))
	res.Body = readCloser{io.MultiReader(bytes.NewReader(head), res.Body), res.Body}
	return head
}

type readCloser struct {
	io.Reader
	io.Closer
}

// excerptWindow is how much of a body Excerpt looks at: room for
// whitespace to collapse and secrets to be cut out.
const excerptWindow = 4 * MaxExcerpt

// RedactURL returns u without user info, query or fragment: what is left
// names the server and the path, and holds no credentials that Gemini's
// key=, a signed URL or an Azure deployment put in the query.
func RedactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// Secrets returns the credentials req carries, to keep out of error
// text: the values of its headers whose names say they hold one
// (Authorization, X-Api-Key, X-Goog-Api-Key, Api-Key, cookies, tokens),
// with and without their scheme ("Bearer"), the URL's password and its
// query values. Values shorter than eight bytes are left out.
func Secrets(req *http.Request) []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecret {
			out = append(out, v)
		}
	}
	for name, values := range req.Header {
		if !secretHeader(name) {
			continue
		}
		for _, v := range values {
			add(v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				add(cred)
			}
		}
	}
	if req.URL != nil {
		if p, ok := req.URL.User.Password(); ok {
			add(p)
		}
		for _, vs := range req.URL.Query() {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}

var secretHeaderRe = regexp.MustCompile(`(?i)auth|key|token|secret|cookie|session|signature|password|credential`)

func secretHeader(name string) bool { return secretHeaderRe.MatchString(name) }

// Excerpt returns the start of body for an error message: secrets
// replaced with [REDACTED], whitespace runs collapsed to one space,
// control and other unprintable characters (terminal escapes) and
// invalid UTF-8 dropped, cut at MaxExcerpt bytes on a character boundary
// and marked with "…" when cut.
func Excerpt(body []byte, secrets []string) string {
	s := body
	cut := len(s) > excerptWindow
	if cut {
		s = s[:excerptWindow]
	}
	text := string(s)
	text = scrub(text, secrets)
	if cut {
		text = dropSecretPrefixAtEnd(text, secrets)
	}
	out := oneLine(text, MaxExcerpt)
	switch {
	case !cut, strings.HasSuffix(out, "…"):
		return out
	case out == "":
		return "…"
	}
	return out + " …"
}

// oneLine returns s on one line, printable, at most limit bytes (plus an
// ellipsis when cut).
func oneLine(s string, limit int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r == utf8.RuneError, !unicode.IsPrint(r):
			continue
		}
		n := utf8.RuneLen(r)
		if space {
			n++
		}
		if b.Len()+n > limit {
			b.WriteString("…")
			return b.String()
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// scrub replaces each secret in s with [REDACTED].
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, "[REDACTED]")
	}
	return s
}

// dropSecretPrefixAtEnd removes the end of s when it is the start of a
// secret cut off by the excerpt window.
func dropSecretPrefixAtEnd(s string, secrets []string) string {
	for _, v := range secrets {
		for k := min(len(v)-1, len(s)); k >= 4; k-- {
			if strings.HasSuffix(s, v[:k]) {
				s = s[:len(s)-k]
				break
			}
		}
	}
	return s
}

// versionRe matches an API version path segment: v1, v4, v1beta,
// v1beta1, v2alpha.
var versionRe = regexp.MustCompile(`^v\d+(?:[a-z]+\d*)?$`)

// MissingVersion returns a hint for a 404 from an OpenAI-compatible
// server, whose base URL must end with the API version (…/v1) because the
// SDK adds only the endpoint: when u's path ends with one of endpoints
// (such as "/chat/completions") and no segment before it is a version,
// it suggests the base URL with /v1 added. Otherwise it returns "".
func MissingVersion(u *url.URL, endpoints ...string) string {
	for _, ep := range endpoints {
		base, ok := strings.CutSuffix(u.Path, ep)
		if !ok {
			continue
		}
		for seg := range strings.SplitSeq(base, "/") {
			if versionRe.MatchString(seg) {
				return ""
			}
		}
		return suggest(u, strings.TrimSuffix(base, "/")+"/v1")
	}
	return ""
}

// ExtraVersion returns a hint for a 404 from an API whose SDK adds the
// version segment itself (Anthropic's v1/messages, Gemini's
// v1beta/models/…): when the part of u's path before the SDK's own
// version ends with a version segment too, the base URL has one segment
// too many, and it suggests the base URL without it. sdkPath matches the
// path the SDK appends, version first, and must capture the base path
// before it as its first group. Otherwise it returns "".
func ExtraVersion(u *url.URL, sdkPath *regexp.Regexp) string {
	m := sdkPath.FindStringSubmatch(u.Path)
	if m == nil {
		return ""
	}
	base := strings.TrimSuffix(m[1], "/")
	i := strings.LastIndexByte(base, '/')
	if i < 0 || !versionRe.MatchString(base[i+1:]) {
		return ""
	}
	return suggest(u, base[:i]+"/")
}

// suggest returns the hint that the base URL should be u's scheme and host
// with path.
func suggest(u *url.URL, path string) string {
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: path}
	return fmt.Sprintf("did you mean BaseURL %q?", c.String())
}

// maxRetryAfter bounds a wait a provider asks for, so a bogus header
// cannot make a client wait for days.
const maxRetryAfter = time.Hour

// RetryAfter returns how long the headers of an error response ask the
// client to wait: retry-after-ms (milliseconds, as OpenAI and Anthropic
// send it) first, then Retry-After in seconds or as an HTTP date, taken
// against now. It returns 0 for no header, a value it cannot read, or a
// time in the past, and at most an hour.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	var d time.Duration
	if ms := strings.TrimSpace(h.Get("retry-after-ms")); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f > 0 && f < float64(maxRetryAfter/time.Millisecond) {
			d = time.Duration(f * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			if secs > 0 && secs < maxRetryAfter.Seconds() {
				d = time.Duration(secs * float64(time.Second))
			} else if secs >= maxRetryAfter.Seconds() {
				d = maxRetryAfter
			}
		} else if t, err := http.ParseTime(v); err == nil && t.After(now) {
			d = t.Sub(now)
		}
	}
	return min(d, maxRetryAfter)
}

// ResponseHeader returns the header of resp, or nil.
func ResponseHeader(resp *http.Response) http.Header {
	if resp == nil {
		return nil
	}
	return resp.Header
}
