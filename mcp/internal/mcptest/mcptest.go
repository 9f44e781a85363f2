package mcptest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// PageSize is how many tools a tools/list page holds.
const PageSize = 2

// TinyPNG is the 1x1 PNG the image tool returns.
var TinyPNG = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")

// CancelLine is what the slow tool writes to the server's stderr when its
// call is cancelled.
const CancelLine = "mcptest: slow call canceled"

// Options configure a test server. The zero value suits a server running
// in its own process.
type Options struct {
	// Crash is what the crash tool does; nil exits the process with status 3.
	Crash func()
	// Stderr receives CancelLine when a slow call is cancelled; nil means
	// os.Stderr.
	Stderr io.Writer
	// Canceled, if set, counts slow calls that saw their cancellation.
	Canceled *atomic.Int64
	// Calls, if set, counts the tools/call requests the server receives.
	Calls *atomic.Int64
	// Large adds the large tool (see [LargeIn]).
	Large bool
}

// EchoIn is the input of echo and dotted.name.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// AddIn is the input of add.
type AddIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// AddOut is the structured output of add.
type AddOut struct {
	Sum int `json:"sum"`
}

// SlowIn is the input of slow.
type SlowIn struct {
	Steps   int `json:"steps" jsonschema:"number of steps"`
	DelayMS int `json:"delay_ms" jsonschema:"milliseconds per step"`
}

// FailIn is the input of fail.
type FailIn struct {
	Message string `json:"message"`
}

// AddToolIn is the input of add_tool.
type AddToolIn struct {
	Name string `json:"name"`
}

// Empty is the input of tools without arguments.
type Empty struct{}

// LargeIn is the input of large, which returns Bytes bytes of text (see
// [LargeText]) and, if Image is set, an image of Image bytes.
type LargeIn struct {
	Bytes int `json:"bytes"`
	Image int `json:"image,omitempty"`
	// Meta adds this many bytes of metadata to the result.
	Meta int `json:"meta,omitempty"`
}

// LargeText is the text of n bytes the large tool returns: numbered lines
// of 64 bytes, the last one cut short.
func LargeText(n int) string {
	b := make([]byte, 0, n+64)
	pad := strings.Repeat("x", 64-15)
	for i := 0; len(b) < n; i++ {
		b = append(b, "line "...)
		b = append(b, strconv.Itoa(100000000 + i)[1:]...) // eight digits
		b = append(append(append(b, ' '), pad...), '\n')
	}
	return string(b[:n])
}

// NewServer returns the test server.
func NewServer(opts *Options) *sdk.Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Crash == nil {
		o.Crash = func() { os.Exit(3) }
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "1.0.0"}, &sdk.ServerOptions{PageSize: PageSize})
	if o.Calls != nil {
		s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method == "tools/call" {
					o.Calls.Add(1)
				}
				return next(ctx, method, req)
			}
		})
	}
	if o.Large {
		sdk.AddTool(s, &sdk.Tool{Name: "large", Description: "Returns as much text as asked for."},
			func(_ context.Context, _ *sdk.CallToolRequest, in LargeIn) (*sdk.CallToolResult, any, error) {
				res := text(LargeText(in.Bytes))
				if in.Image > 0 {
					res.Content = append(res.Content, &sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, in.Image)})
				}
				if in.Meta > 0 {
					res.Meta = sdk.Meta{"filler": strings.Repeat("m", in.Meta)}
				}
				return res, nil, nil
			})
	}

	echo := func(_ context.Context, _ *sdk.CallToolRequest, in EchoIn) (*sdk.CallToolResult, any, error) {
		return text(in.Text), nil, nil
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes its text.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "Echo"}}, echo)
	sdk.AddTool(s, &sdk.Tool{Name: "dotted.name", Description: "Echoes its text, under a name with a dot."}, echo)

	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds two integers."},
		func(_ context.Context, _ *sdk.CallToolRequest, in AddIn) (*sdk.CallToolResult, AddOut, error) {
			return nil, AddOut{Sum: in.A + in.B}, nil
		})

	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Takes steps, reporting progress after each."},
		func(ctx context.Context, req *sdk.CallToolRequest, in SlowIn) (*sdk.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				select {
				case <-ctx.Done():
					fmt.Fprintln(o.Stderr, CancelLine)
					if o.Canceled != nil {
						o.Canceled.Add(1)
					}
					return nil, nil, ctx.Err()
				case <-time.After(time.Duration(in.DelayMS) * time.Millisecond):
				}
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps),
						Message: fmt.Sprintf("step %d of %d", i, in.Steps),
					})
				}
			}
			if tok != nil && in.Steps > 0 {
				// The go-sdk client hands notifications to their handler on a
				// queue of its own, while a response goes straight to its
				// caller: progress sent just before a result can be handled
				// after it, and is then dropped, by design. A request from
				// the server is handled on that queue, in order, after the
				// notifications read before it, so its answer means they
				// have reached the client: tests that look for progress see
				// all of it, however loaded the machine.
				_ = req.Session.Ping(ctx, nil)
			}
			return text(fmt.Sprintf("done after %d steps", in.Steps)), nil, nil
		})

	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fails with its message as a tool error."},
		func(_ context.Context, _ *sdk.CallToolRequest, in FailIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: in.Message}}}, nil, nil
		})

	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "Returns a tiny PNG."},
		func(context.Context, *sdk.CallToolRequest, Empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: TinyPNG}}}, nil, nil
		})

	sdk.AddTool(s, &sdk.Tool{Name: "rich", Description: "Returns one block of every content type."},
		func(context.Context, *sdk.CallToolRequest, Empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{
				Content: []sdk.Content{
					&sdk.TextContent{Text: "hello"},
					&sdk.ImageContent{MIMEType: "image/png", Data: TinyPNG},
					&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
					&sdk.ResourceLink{URI: "file:///notes.txt", Name: "notes", MIMEType: "text/plain"},
					&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://a.txt", MIMEType: "text/plain", Text: "embedded text"}},
					&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}},
				},
				StructuredContent: map[string]any{"ok": true},
			}, nil, nil
		})

	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Makes the server exit mid-call."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ Empty) (*sdk.CallToolResult, any, error) {
			o.Crash()
			// In process, the server lives on: it must not answer, as a dead
			// one could not, but must not hang forever either.
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
			return nil, nil, errors.New("crashed")
		})

	sdk.AddTool(s, &sdk.Tool{Name: "add_tool", Description: "Adds an echo tool with the given name."},
		func(_ context.Context, _ *sdk.CallToolRequest, in AddToolIn) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: in.Name, Description: "An echo tool added at run time."}, echo)
			return text("added " + in.Name), nil, nil
		})
	return s
}

// StartLine is what ServeStdio writes to stderr when it starts.
const StartLine = "mcptest: serving on stdio"

// ServeStdio runs the test server over stdin and stdout until stdin closes.
func ServeStdio(ctx context.Context, opts *Options) error {
	fmt.Fprintln(os.Stderr, StartLine)
	return NewServer(opts).Run(ctx, &sdk.StdioTransport{})
}

// ServeHTTP runs the test server, with the large tool, over streamable
// HTTP on a loopback port until stdin closes, after writing its URL and a
// newline to stdout. With jsonResponse, it answers a call with a JSON
// body rather than an event stream.
func ServeHTTP(jsonResponse bool) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := NewServer(&Options{Large: true})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{JSONResponse: jsonResponse})
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("http://%s\n", l.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = hs.Close()
	}()
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
