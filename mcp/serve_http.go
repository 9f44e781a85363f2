package mcp

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessVersion is the first protocol version without sessions
// (SEP-2575): its clients send no initialize and no Mcp-Session-Id, and
// name the version in every request (the Mcp-Protocol-Version header and
// the request's _meta).
const statelessVersion = "2026-07-28"

const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	metaProtocolVersion   = "io.modelcontextprotocol/protocolVersion"
)

// httpHandler is [Server.Handler]: the Origin check, then the route to the
// SDK's stateful or stateless handler by the request's protocol version,
// answering the session errors with the protocol's status codes.
type httpHandler struct {
	// stateful is nil when the user asked for a stateless handler
	// (ServeOptions.HTTP.Stateless): then every request goes to stateless.
	stateful, stateless http.Handler
	srv                 *Server
	origins             map[string]bool // normalized, from AllowedOrigins
	anyOrigin           bool            // AllowedOrigins has "*"
	maxBody             int64           // what is read, at most, to choose a route
}

func (s *Server) newHTTPHandler() *httpHandler {
	getServer := func(*http.Request) *sdk.Server {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return nil
		}
		return s.sdk
	}
	var opts sdk.StreamableHTTPOptions
	if s.opts.HTTP != nil {
		opts = *s.opts.HTTP
	}
	// maxBody bounds what is read to choose a route: the SDK's limit, or,
	// when that is off (negative), the tasks wrapper's.
	h := &httpHandler{srv: s, origins: map[string]bool{}, maxBody: opts.MaxRequestBodyBytes}
	switch {
	case h.maxBody == 0:
		h.maxBody = sdk.DefaultMaxRequestBodyBytes
	case h.maxBody < 0:
		h.maxBody = maxRequestBody
	}
	for _, o := range s.opts.AllowedOrigins {
		if o == "*" {
			h.anyOrigin = true
		} else {
			h.origins[normalizeOrigin(o)] = true
		}
	}
	if !opts.Stateless {
		h.stateful = taskHandler{sdk.NewStreamableHTTPHandler(getServer, &opts)}
	}
	// A request of the stateless protocol is its whole call: a client that
	// cancels it closes the request (its notifications/cancelled, on a
	// request of its own, reaches no call), so the call's context ends
	// with the request's.
	opts.Stateless = true
	opts.PropagateRequestCancellation = true
	h.stateless = taskHandler{sdk.NewStreamableHTTPHandler(getServer, &opts)}
	return h
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" && !h.allowOrigin(r, origin) {
		http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
		return
	}
	if h.stateful == nil {
		h.stateless.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost || r.Header.Get(headerSessionID) != "" {
		// The SDK answers a missing session ID on GET and DELETE with 400,
		// and a session it does not have with 404.
		h.serveStateful(w, r)
		return
	}
	if v := r.Header.Get(headerProtocolVersion); v >= statelessVersion {
		h.stateless.ServeHTTP(w, r)
		return
	}
	if r.Body == nil {
		h.stateful.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || int64(len(body)) > h.maxBody {
		// Leave the error, or the body that is too big, to the SDK.
		h.stateful.ServeHTTP(w, r)
		return
	}
	switch route, id := peekRoute(body); route {
	case routeStateless:
		h.stateless.ServeHTTP(w, r)
	case routeNoSession:
		writeSessionRequired(w, id)
	default:
		h.serveStateful(w, r)
	}
}

// headerRequest carries, to the calls of a POST, the token under which
// the handler keeps the POST's context (see serveStateful); a client's
// own header of that name is dropped.
const headerRequest = "Toolloop-Request"

// serveStateful serves r on the stateful handler. The calls a POST
// carries can find its context by the token in headerRequest (see
// Server.requestGone): the SDK runs a session's calls on the session's
// context, so a client that goes away mid-call would otherwise leave the
// call running until its timeout.
func (h *httpHandler) serveStateful(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(headerRequest)
	if r.Method == http.MethodPost && !h.srv.resumable() {
		tok := rand.Text()
		h.srv.requests.Store(tok, r.Context())
		defer h.srv.requests.Delete(tok)
		r.Header.Set(headerRequest, tok)
	}
	h.stateful.ServeHTTP(w, r)
}

// allowOrigin reports whether a request from a browser page of origin may
// be served: an origin of AllowedOrigins, or, on a loopback listener, a
// loopback origin.
func (h *httpHandler) allowOrigin(r *http.Request, origin string) bool {
	if h.anyOrigin || h.origins[normalizeOrigin(origin)] {
		return true
	}
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil || !isLoopbackHost(addr.String()) {
		return false
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && isLoopbackHost(u.Host)
}

// normalizeOrigin lowers an origin's scheme and host and drops a trailing
// slash, as browsers send it.
func normalizeOrigin(o string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
}

// isLoopbackHost reports whether hostport (a port is optional) names the
// loopback interface: localhost, 127.0.0.0/8 or ::1.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type route int

const (
	routeStateful  route = iota // a session's start, or what the SDK should judge
	routeStateless              // a request of the stateless protocol
	routeNoSession              // a request that needs a session and has none
)

// peekRoute says where a POST without a session ID goes, by its body: a
// request with a _meta protocol version of 2026-07-28 or later, or a
// server/discover, to the stateless handler; an initialize (alone or in a
// batch) to the stateful one, which starts a session; anything else needs
// a session it does not have. A body that is not JSON-RPC is left to the
// stateful handler, which says what is wrong with it. id is the request's
// ID, for the error.
func peekRoute(body []byte) (r route, id json.RawMessage) {
	type message struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	var msgs []message
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return routeStateful, nil
		}
	} else {
		var m message
		if json.Unmarshal(trimmed, &m) != nil {
			return routeStateful, nil
		}
		msgs = []message{m}
	}
	if len(msgs) == 0 {
		return routeStateful, nil
	}
	for _, m := range msgs {
		if m.Method == "" {
			return routeStateful, nil // a response, or not JSON-RPC
		}
		if m.Method == "initialize" {
			return routeStateful, nil
		}
		if m.Method == "server/discover" {
			return routeStateless, nil
		}
		if bytes.Contains(m.Params, []byte(metaProtocolVersion)) {
			var p struct {
				Meta map[string]any `json:"_meta"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				if v, _ := p.Meta[metaProtocolVersion].(string); v >= statelessVersion {
					return routeStateless, nil
				}
			}
		}
	}
	if len(msgs) == 1 {
		id = msgs[0].ID
	}
	return routeNoSession, id
}

// writeSessionRequired answers a request that needs a session and names
// none: 400 Bad Request, as the protocol asks, with a JSON-RPC error.
func writeSessionRequired(w http.ResponseWriter, id json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error": map[string]any{
			"code":    -32600, // invalid request
			"message": "Bad Request: Mcp-Session-Id header is required (send initialize first)",
		},
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
}
