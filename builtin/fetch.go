package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/toolloop/toolloop"
	"golang.org/x/net/html/charset"
)

// maxRedirects bounds the redirects web_fetch follows.
const maxRedirects = 10

type webFetchIn struct {
	URL    string `json:"url" jsonschema:"minLength=1" jsonschema_description:"The http or https URL to fetch."`
	Offset int    `json:"offset,omitempty" jsonschema:"minimum=0" jsonschema_description:"Byte offset into the page's text to start from, to read a long page in parts. Default 0."`
	Raw    bool   `json:"raw,omitempty" jsonschema_description:"Return an HTML page's source instead of its text."`
}

// fetcher does web_fetch's requests, refusing non-public addresses
// unless allowed.
type fetcher struct {
	opts      FetchOptions
	client    *http.Client
	transport *http.Transport
	// blocked reports addresses to refuse; nil allows all.
	blocked func(netip.Addr) bool
}

func newFetcher(o *FetchOptions) *fetcher {
	f := &fetcher{opts: *o}
	if f.opts.Timeout <= 0 {
		f.opts.Timeout = DefaultFetchTimeout
	}
	if f.opts.MaxBytes <= 0 {
		f.opts.MaxBytes = DefaultMaxFetchBytes
	}
	if f.opts.UserAgent == "" {
		f.opts.UserAgent = "toolloop-web-fetch"
	}
	if !f.opts.AllowPrivateNetworks {
		f.blocked = nonPublic
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: f.control}
	f.transport = &http.Transport{
		// No proxy: a proxy would resolve and dial the host itself, out of
		// reach of the address check.
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		// Each fetch has its own connection, so no idle connection (and no
		// goroutine) outlives the call.
		DisableKeepAlives: true,
	}
	f.client = &http.Client{Transport: f.transport, CheckRedirect: checkRedirect}
	return f
}

func (f *fetcher) close() { f.transport.CloseIdleConnections() }

// blockedAddrError is the refusal to dial a non-public address.
type blockedAddrError struct{ addr netip.Addr }

func (e *blockedAddrError) Error() string {
	return "refusing to connect to " + e.addr.String() + ", which is not a public address"
}

// badRedirectError is the refusal to follow a redirect.
type badRedirectError struct{ msg string }

func (e *badRedirectError) Error() string { return e.msg }

// control runs after the name is resolved and before the socket connects,
// so it checks the address actually dialed: after every redirect, and
// whatever the DNS said a moment earlier.
func (f *fetcher) control(_, address string, _ syscall.RawConn) error {
	if f.blocked == nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &blockedAddrError{}
	}
	if a := ap.Addr().Unmap(); f.blocked(a) {
		return &blockedAddrError{addr: a}
	}
	return nil
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return &badRedirectError{fmt.Sprintf("stopped after %d redirects", maxRedirects)}
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return &badRedirectError{fmt.Sprintf("refusing a redirect to a %q URL; only http and https are fetched", s)}
	}
	return nil
}

// nonPublicPrefixes are ranges that are not reachable public unicast
// addresses, beyond what netip's methods report.
var nonPublicPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved, and broadcast
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fec0::/10"),
}

// nonPublic reports whether a is loopback, private, link-local, multicast,
// unspecified or otherwise not a public unicast address, looking through
// IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4).
func nonPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
			return nonPublic(netip.AddrFrom4([4]byte(b[12:16])))
		case netip.MustParsePrefix("2002::/16").Contains(a):
			return nonPublic(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return false
}

func (w *workspace) webFetchTool() toolloop.Tool {
	f := w.fetch
	scope := "Only public internet addresses are reached: loopback, private and link-local addresses are refused, also after redirects."
	if f.blocked == nil {
		scope = "Any address may be reached, private networks included."
	}
	desc := fmt.Sprintf(`Fetch a web page or file over http or https (GET) and return it as text. Use it to read documentation, API references or raw files on the web.

HTML pages are returned as plain text, with links as [text](url); set raw to get the HTML source. Text, JSON and XML are returned as they are; images and other binary content are refused. %s Redirects are followed (at most %d). The request times out after %v and reads at most %d bytes of the body. At most %d bytes of text are returned per call: for a longer page, a note gives the offset to call again with to read on.`,
		scope, maxRedirects, f.opts.Timeout, f.opts.MaxBytes, w.opts.MaxOutputBytes)
	ann := readOnly
	ann.OpenWorld = true
	return newTool(toolDef{name: WebFetch, description: desc, annotations: titled(ann, "Fetch web page"), timeout: f.opts.Timeout + 10*time.Second}, w.webFetch)
}

func (w *workspace) webFetch(ctx context.Context, _ *toolloop.Call, in *webFetchIn) (*toolloop.ToolResult, error) {
	f := w.fetch
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil {
		return nil, invalid("the URL is not valid: %v", err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return nil, invalid("only http and https URLs can be fetched, not %q", in.URL)
	}
	if u.Host == "" {
		return nil, invalid("the URL %q has no host", in.URL)
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, invalid("the URL is not valid: %v", err)
	}
	req.Header.Set("User-Agent", f.opts.UserAgent)
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/json;q=0.9, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fetchError(in.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	if err != nil {
		return nil, fetchError(in.URL, err)
	}
	cut := int64(len(body)) > f.opts.MaxBytes
	if cut {
		body = body[:f.opts.MaxBytes]
	}
	ctype := resp.Header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ctype)
	if media == "" {
		media = http.DetectContentType(body)
		ctype = media
	}
	final := resp.Request.URL.String()
	extra := map[string]any{"status": resp.StatusCode, "url": final, "bytes": len(body), "body_truncated": cut}
	if !textual(media) || isBinary(body) {
		r := toolloop.ErrorResult(invalid("%s returned %s content (%d bytes), which web_fetch cannot show as text", final, media, len(body)))
		r.Meta.MIMEType, r.Meta.Extra = media, extra
		return r, nil
	}
	if rd, err := charset.NewReader(bytes.NewReader(body), ctype); err == nil {
		if b, err := io.ReadAll(rd); err == nil {
			body = b
		}
	}
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if media == "text/html" && !in.Raw {
		text = htmlText(text, resp.Request.URL)
	}
	page, note, err := window(text, in.Offset, w.opts.MaxOutputBytes)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("[%s: HTTP %d, %s]\n", final, resp.StatusCode, media)
	if cut {
		note += fmt.Sprintf("\n[the body was cut at %d bytes]", f.opts.MaxBytes)
	}
	r := toolloop.TextResult(head + page + note)
	r.Meta.MIMEType, r.Meta.Extra = media, extra
	if resp.StatusCode >= 400 {
		r.Status = toolloop.StatusError
		r.Error = toolloop.Errorf(toolloop.KindExecutionFailed, "%s answered HTTP %s", final, resp.Status)
	}
	return r, nil
}

// window returns up to n bytes of text from offset, and a note saying how
// to read on when there is more.
func window(text string, offset, n int) (string, string, error) {
	if offset > len(text) || offset < 0 {
		return "", "", invalid("offset %d is past the end of the text, which is %d bytes", offset, len(text))
	}
	from := runeStart(text, offset)
	to := runeStart(text, min(from+n, len(text)))
	note := ""
	if to < len(text) {
		note = fmt.Sprintf("\n[showing bytes %d-%d of %d; call web_fetch with offset=%d to read on]", from, to, len(text), to)
	}
	return text[from:to], note, nil
}

func textual(media string) bool {
	switch {
	case strings.HasPrefix(media, "text/"),
		media == "application/json", strings.HasSuffix(media, "+json"),
		media == "application/xml", strings.HasSuffix(media, "+xml"),
		media == "application/javascript", media == "application/x-javascript",
		media == "application/yaml", media == "application/toml", media == "application/x-ndjson":
		return true
	}
	return false
}

// fetchError turns a failed request into an error of the right kind.
func fetchError(rawURL string, err error) error {
	var be *blockedAddrError
	var re *badRedirectError
	var ne net.Error
	switch {
	case errors.As(err, &be):
		return denied("not fetching %s: %v. web_fetch only reaches public addresses", rawURL, be)
	case errors.As(err, &re):
		return denied("not fetching %s: %v", rawURL, re)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return toolloop.Errorf(toolloop.KindTimeout, "fetching %s timed out", rawURL)
	case errors.Is(err, context.Canceled):
		return toolloop.Errorf(toolloop.KindCanceled, "fetching %s was canceled", rawURL)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return failed("fetching %s failed: %v", rawURL, err)
}
