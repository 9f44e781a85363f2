package mcp_test

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// slowStream is a child agent's model that streams the start of its turn,
// says so on streamed, and then waits for its context: a slow turn a
// client gives up on.
type slowStream struct{ streamed chan struct{} }

func (*slowStream) Generate(context.Context, *toolloop.Request) (*toolloop.Response, error) {
	return nil, errors.New("slowStream streams")
}

func (m *slowStream) Stream(ctx context.Context, _ *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		if !yield(toolloop.Chunk{Text: "Raft has three parts: "}, nil) {
			return
		}
		m.streamed <- struct{}{}
		<-ctx.Done()
		yield(toolloop.Chunk{}, ctx.Err())
	}
}

// TestServeAgentCancelInterruptsNow serves an agent as a tool and cancels
// a call while the agent's model streams: over every transport, the
// client's notifications/cancelled interrupts the agent's run now. The
// server's OnEvent sees the child's run.interrupted (mode now) and its
// cut turn kept with StopReason interrupted, and the call's result says
// what the agent had written.
func TestServeAgentCancelInterruptsNow(t *testing.T) {
	// Each transport logs what the server reads on wire.
	transports := map[string]func(t *testing.T, srv *mcp.Server, wire io.Writer) sdk.Transport{
		"memory": func(t *testing.T, srv *mcp.Server, wire io.Writer) sdk.Transport {
			ct, st := sdk.NewInMemoryTransports()
			serveOn(t, srv, &sdk.LoggingTransport{Transport: st, Writer: wire})
			return ct
		},
		// The stdio wire: newline-delimited JSON over a pair of pipes.
		"stdio": func(t *testing.T, srv *mcp.Server, wire io.Writer) sdk.Transport {
			cr, sw := pipe(t)
			sr, cw := pipe(t)
			serveOn(t, srv, &sdk.LoggingTransport{Transport: &sdk.IOTransport{Reader: sr, Writer: sw}, Writer: wire})
			return &sdk.IOTransport{Reader: cr, Writer: cw}
		},
		"http": func(t *testing.T, srv *mcp.Server, wire io.Writer) sdk.Transport {
			h := srv.Handler()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Body = struct {
					io.Reader
					io.Closer
				}{io.TeeReader(r.Body, wire), r.Body}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(hs.Close)
			return &sdk.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}
		},
	}
	for name, transport := range transports {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			for _, progress := range []bool{false, true} {
				sub := name + "/" + version
				if progress {
					sub += "/progress"
				}
				t.Run(sub, func(t *testing.T) { serveAgentCancel(t, transport, version, progress) })
			}
		}
	}
}

// serveAgentCancel cancels a call of a served agent while its model
// streams, with a client on the protocol version given, asking for
// progress or not (the server runs the two kinds of call through loops
// of their own).
func serveAgentCancel(t *testing.T, transport func(*testing.T, *mcp.Server, io.Writer) sdk.Transport, version string, progress bool) {
	model := &slowStream{streamed: make(chan struct{}, 1)}
	agent := toolloop.NewAgentTool("research", "Researches a question.", &toolloop.AgentLoop{Model: model})
	var reg toolloop.ToolRegistry
	reg.MustRegister(agent)
	rec := &looptest.Recorder{}
	srv := newServeLoop(t, &toolloop.AgentLoop{Tools: &reg, OnEvent: rec.Record})

	wire := &logBuffer{}
	ct := transport(t, srv, wire)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(t.Context(), ct,
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	defer cs.Close()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-model.streamed:
			cancel() // the client gives up: notifications/cancelled
		case <-ctx.Done():
		}
	}()
	params := &sdk.CallToolParams{Name: "research", Arguments: map[string]any{"task": "What are the parts of Raft?"}}
	if progress {
		params.SetProgressToken("p1")
	}
	_, err = cs.CallTool(ctx, params)
	require.ErrorIs(t, err, context.Canceled)

	// The served call's run ends once the child has stopped.
	var done toolloop.Event
	require.Eventually(t, func() bool {
		for _, e := range rec.Of(toolloop.EventComplete) {
			if e.ParentRunID == "" {
				done = e
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "the served call never ended")
	require.NotNil(t, done.Result)
	require.NotNil(t, done.Result.Error)
	assert.Equal(t, toolloop.KindCanceled, done.Result.Error.Kind)
	assert.Contains(t, done.Result.Text(), "What it had written so far:\nRaft has three parts:")

	intr := rec.Of(toolloop.EventRunInterrupted)
	require.Len(t, intr, 1, "the child's run was interrupted once")
	assert.Equal(t, done.RunID, intr[0].ParentRunID)
	assert.Equal(t, done.CallID, intr[0].ParentCallID)
	require.NotNil(t, intr[0].Interrupt)
	assert.Equal(t, toolloop.InterruptNow, intr[0].Interrupt.Mode)

	var cut []toolloop.Message
	for _, e := range rec.Of(toolloop.EventModelResponse) {
		if e.ParentRunID == done.RunID && e.Response != nil {
			cut = append(cut, e.Response.Message)
		}
	}
	require.Len(t, cut, 1, "the child's cut turn is reported")
	assert.Equal(t, toolloop.StopInterrupted, cut[0].StopReason)
	assert.Equal(t, "Raft has three parts:", cut[0].Text(), "kept, its trailing space trimmed")

	// Over HTTP the call is cancelled by its request's closing, which
	// comes first (the server cancels a call whose client went away); the
	// notification the client also sends, in a request of its own, may
	// come after the call ended, or, on the stateless protocol, have no
	// session to reach it by.
	if _, isHTTP := ct.(*sdk.StreamableClientTransport); !isHTTP {
		assert.Contains(t, wire.String(), `"notifications/cancelled"`, "the client's cancellation reached the server as the protocol's notification")
	}

	// The session goes on.
	_, err = cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
}

// newServeLoop makes a server for loop, closed when the test ends.
func newServeLoop(t *testing.T, loop *toolloop.AgentLoop) *mcp.Server {
	t.Helper()
	srv, err := mcp.NewServer(loop, &mcp.ServeOptions{ListPollInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv
}

// serveOn runs one session of srv over st until the test ends.
func serveOn(t *testing.T, srv *mcp.Server, st sdk.Transport) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, st) }()
	t.Cleanup(func() {
		cancel()
		<-ran
	})
}

// pipe is an OS pipe, as a process's stdin or stdout is, closed when the
// test ends.
func pipe(t *testing.T) (io.ReadCloser, io.WriteCloser) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = r.Close()
		_ = w.Close()
	})
	return r, w
}
