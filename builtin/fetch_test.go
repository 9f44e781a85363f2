package builtin

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
)

const page = `<!doctype html><html><head><title>The  Title</title><style>body{}</style>
<script>var secret = 1;</script></head><body>
<h1>Heading</h1><p>First   paragraph with a <a href="/docs">link</a>.</p>
<ul><li>one</li><li>two</li></ul><pre>  code
    indented</pre><noscript>hidden</noscript></body></html>`

func testServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		_, _ = w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("0123456789", 1000))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/json", http.StatusFound)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestWebFetch(t *testing.T) {
	s := testServer(t)
	src, _ := newTestWorkspace(t, nil, &Options{
		MaxOutputBytes: 3000,
		Fetch:          FetchOptions{AllowPrivateNetworks: true, MaxBytes: 5000, Timeout: 500 * time.Millisecond},
	})
	tests := []struct {
		name     string
		args     webFetchIn
		wantKind toolloop.ErrorKind
		contains []string
		absent   []string
		mime     string
	}{
		{
			name: "html as text",
			args: webFetchIn{URL: s.URL + "/page"},
			contains: []string{"HTTP 200, text/html]", "Title: The Title", "# Heading", "First paragraph with a [link](" + s.URL + "/docs).",
				"- one\n- two", "  code\n    indented"},
			absent: []string{"secret", "body{}", "hidden", "<p>"},
			mime:   "text/html",
		},
		{name: "raw html", args: webFetchIn{URL: s.URL + "/page", Raw: true}, contains: []string{"<h1>Heading</h1>"}},
		{name: "json", args: webFetchIn{URL: s.URL + "/json"}, contains: []string{`{"ok":true}`}, mime: "application/json"},
		{name: "charset", args: webFetchIn{URL: s.URL + "/latin1"}, contains: []string{"café"}},
		{name: "redirect", args: webFetchIn{URL: s.URL + "/redirect"}, contains: []string{s.URL + "/json: HTTP 200", `{"ok":true}`}},
		{name: "not found", args: webFetchIn{URL: s.URL + "/missing"}, wantKind: toolloop.KindExecutionFailed, contains: []string{"HTTP 404", "no such page"}},
		{name: "binary", args: webFetchIn{URL: s.URL + "/image"}, wantKind: toolloop.KindInvalidArgs, mime: "image/png"},
		{name: "body cap and paging", args: webFetchIn{URL: s.URL + "/big"}, contains: []string{"[showing bytes 0-3000 of 5000; call web_fetch with offset=3000 to read on]", "[the body was cut at 5000 bytes]"}},
		{name: "offset", args: webFetchIn{URL: s.URL + "/big", Offset: 4990}, contains: []string{"]\n0123456789\n[the body"}},
		{name: "offset past end", args: webFetchIn{URL: s.URL + "/big", Offset: 6000}, wantKind: toolloop.KindInvalidArgs},
		{name: "timeout", args: webFetchIn{URL: s.URL + "/slow"}, wantKind: toolloop.KindTimeout},
		{name: "redirect to file", args: webFetchIn{URL: s.URL + "/to-file"}, wantKind: toolloop.KindDenied},
		{name: "file scheme", args: webFetchIn{URL: "file:///etc/passwd"}, wantKind: toolloop.KindInvalidArgs},
		{name: "no host", args: webFetchIn{URL: "http:///x"}, wantKind: toolloop.KindInvalidArgs},
		{name: "gopher", args: webFetchIn{URL: "gopher://example.com/"}, wantKind: toolloop.KindInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, src, WebFetch, tt.args)
			require.Equal(t, tt.wantKind, kindOf(r), r.Text())
			for _, c := range tt.contains {
				assert.Contains(t, r.Text(), c)
			}
			for _, a := range tt.absent {
				assert.NotContains(t, r.Text(), a)
			}
			if tt.mime != "" {
				assert.Equal(t, tt.mime, r.Meta.MIMEType)
			}
		})
	}
}

func TestWebFetchBlocksLoopbackByDefault(t *testing.T) {
	s := testServer(t)
	src, _ := newTestWorkspace(t, nil, nil)
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	for _, target := range []string{s.URL + "/json", "http://localhost:" + u.Port() + "/json", "http://[::1]:" + u.Port() + "/json", "http://0.0.0.0:" + u.Port() + "/json"} {
		r := call(t, src, WebFetch, webFetchIn{URL: target})
		assert.Equal(t, toolloop.KindDenied, kindOf(r), "%s: %s", target, r.Text())
	}
}

func TestWebFetchChecksRedirectTargets(t *testing.T) {
	// Allow only 127.0.0.1; a redirect to 127.0.0.2 is refused when it is
	// dialed, as a redirect from a public server to a private one would be.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("cannot listen on 127.0.0.2:", err)
	}
	inner := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "internal secret")
	})}}
	inner.Start()
	defer inner.Close()
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/", http.StatusFound)
	}))
	defer outer.Close()

	src, _ := newTestWorkspace(t, nil, nil)
	one := netip.MustParseAddr("127.0.0.1")
	src.ws.fetch.blocked = func(a netip.Addr) bool { return a != one }
	r := call(t, src, WebFetch, webFetchIn{URL: outer.URL})
	assert.Equal(t, toolloop.KindDenied, kindOf(r), r.Text())
	assert.NotContains(t, r.Text(), "internal secret")
	assert.Contains(t, r.Text(), "127.0.0.2")
}

func TestNonPublic(t *testing.T) {
	blocked := []string{"127.0.0.1", "127.1.2.3", "::1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"fe80::1", "fc00::1", "0.0.0.0", "::", "100.64.0.1", "224.0.0.1", "255.255.255.255", "::ffff:127.0.0.1",
		"::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:a00:1::", "ff02::1", "240.0.0.1", "192.0.2.1"}
	public := []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::"}
	for _, a := range blocked {
		assert.True(t, nonPublic(netip.MustParseAddr(a)), a)
	}
	for _, a := range public {
		assert.False(t, nonPublic(netip.MustParseAddr(a)), a)
	}
}
