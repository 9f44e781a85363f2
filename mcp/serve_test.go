package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// newServe makes a server for f's loop, closed when the test ends.
func newServe(t *testing.T, f *serveFixture, opts *mcp.ServeOptions) *mcp.Server {
	t.Helper()
	srv, err := mcp.NewServer(f.loop, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv
}

// connectMemory connects an SDK client to srv over in-memory transports.
// sopts may choose the protocol version.
func connectMemory(t *testing.T, srv *mcp.Server, copts *sdk.ClientOptions, sopts *sdk.ClientSessionOptions) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, copts).Connect(ctx, ct, sopts)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		<-ran
	})
	return cs
}

// callKind is the toolloop error kind a failed result carries.
func callKind(r *sdk.CallToolResult) string {
	k, _ := r.Meta["toolloop/kind"].(string)
	return k
}

func resultText(r *sdk.CallToolResult) string {
	var s string
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

func TestServeListsTheRegistry(t *testing.T) {
	f := newServeFixture()
	srv := newServe(t, f, &mcp.ServeOptions{ListPollInterval: 10 * time.Millisecond})
	changed := make(chan struct{}, 10)
	cs := connectMemory(t, srv, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	ctx := t.Context()

	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	tools := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
	}
	require.ElementsMatch(t, []string{"add", "cancellations", "danger", "echo", "fail", "grow", "slow"}, slices.Collect(func(yield func(string) bool) {
		for n := range tools {
			if !yield(n) {
				return
			}
		}
	}))
	assert.Equal(t, "Echoes its text.", tools["echo"].Description)
	require.NotNil(t, tools["echo"].Annotations)
	assert.Equal(t, "Echo", tools["echo"].Title)
	assert.True(t, tools["echo"].Annotations.ReadOnlyHint)
	assert.True(t, tools["echo"].Annotations.IdempotentHint)
	assert.Equal(t, new(false), tools["echo"].Annotations.DestructiveHint)
	assert.Equal(t, new(false), tools["echo"].Annotations.OpenWorldHint)
	require.NotNil(t, tools["danger"].Annotations)
	assert.Equal(t, new(true), tools["danger"].Annotations.DestructiveHint)
	assert.Equal(t, new(true), tools["danger"].Annotations.OpenWorldHint)
	assert.False(t, tools["danger"].Annotations.ReadOnlyHint)
	assert.Nil(t, tools["add"].Annotations, "a tool with no annotations says nothing, so clients assume the cautious defaults")
	var schema map[string]any
	require.NoError(t, json.Unmarshal(mustJSON(t, tools["slow"].InputSchema), &schema))
	assert.Equal(t, "object", schema["type"])
	assert.Equal(t, []any{"steps"}, schema["required"])

	// A tool registered later is announced and listed.
	f.loop.Tools.MustRegister(toolloop.NewTool("late", "Came later.", func(context.Context, struct{}) (any, error) { return "late", nil }))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed notification after the registry changed")
	}
	res, err = cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == "late" }))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestServeCallResults(t *testing.T) {
	srv := newServe(t, newServeFixture(), nil)
	for _, version := range []string{"2025-11-25", ""} { // "" is the SDK's latest
		t.Run("protocol "+version, func(t *testing.T) {
			cs := connectMemory(t, srv, nil, &sdk.ClientSessionOptions{ProtocolVersion: version})
			ctx := t.Context()
			tests := []struct {
				name       string
				tool       string
				args       any
				isError    bool
				kind       toolloop.ErrorKind
				text       string
				structured map[string]any
			}{
				{name: "text", tool: "echo", args: map[string]any{"text": "hi"}, text: "echo: hi"},
				{name: "structured", tool: "add", args: map[string]any{"a": 2, "b": 40}, text: `{"sum":42}`, structured: map[string]any{"sum": 42.0}},
				{name: "tool failure", tool: "fail", args: map[string]any{}, isError: true, kind: toolloop.KindExecutionFailed},
				{name: "invalid arguments", tool: "add", args: map[string]any{"a": "two", "b": 1}, isError: true, kind: toolloop.KindInvalidArgs},
				{name: "no arguments", tool: "slow", isError: true, kind: toolloop.KindInvalidArgs},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tt.tool, Arguments: tt.args})
					require.NoError(t, err, "a tool's failure is a result, never a protocol error")
					assert.Equal(t, tt.isError, res.IsError, resultText(res))
					assert.Equal(t, string(tt.kind), callKind(res))
					if tt.isError {
						assert.NotEmpty(t, resultText(res), "an error result carries the loop's error text")
						assert.Nil(t, res.StructuredContent)
					}
					if tt.text != "" {
						assert.Equal(t, tt.text, resultText(res))
					}
					if tt.structured != nil {
						assert.Equal(t, tt.structured, res.StructuredContent)
					}
				})
			}

			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "nope", Arguments: map[string]any{}})
			var werr *jsonrpc.Error
			require.ErrorAs(t, err, &werr, "an unknown tool is a protocol error")
			assert.Equal(t, int64(jsonrpc.CodeInvalidParams), werr.Code)
		})
	}
}

func TestServeProgressAndEvents(t *testing.T) {
	f := newServeFixture()
	var mu sync.Mutex
	var events []toolloop.Event
	f.loop.OnEvent = func(e toolloop.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	srv := newServe(t, f, nil)
	var pmu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	cs := connectMemory(t, srv, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			pmu.Lock()
			got = append(got, req.Params)
			pmu.Unlock()
		},
	}, nil)
	params := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(t.Context(), params)
	require.NoError(t, err)
	require.False(t, res.IsError, resultText(res))
	assert.Equal(t, "done", resultText(res))

	// Notifications travel apart from the reply; wait for them.
	require.Eventually(t, func() bool {
		pmu.Lock()
		defer pmu.Unlock()
		return len(got) == 3
	}, 5*time.Second, 5*time.Millisecond)
	pmu.Lock()
	for i, p := range got {
		assert.Equal(t, "tok-1", p.ProgressToken)
		assert.Equal(t, float64(i+1), p.Progress)
		assert.Equal(t, 3.0, p.Total)
		assert.Equal(t, "step", p.Message)
	}
	pmu.Unlock()

	// The user's OnEvent sees the call's events, in a run of its own.
	mu.Lock()
	defer mu.Unlock()
	var types []toolloop.EventType
	for _, e := range events {
		assert.Regexp(t, `^mcp_\d+$`, e.RunID)
		types = append(types, e.Type)
	}
	assert.Contains(t, types, toolloop.EventStart)
	assert.Contains(t, types, toolloop.EventProgress)
	assert.Contains(t, types, toolloop.EventComplete)
}

func TestServeCancel(t *testing.T) {
	f := newServeFixture()
	srv := newServe(t, f, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The server's side of the connection is logged, to see what it sends.
	wire := &logBuffer{}
	ct, st := sdk.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(t.Context(), &sdk.LoggingTransport{Transport: st, Writer: wire}) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		// The first progress report says the tool runs: cancel then.
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { cancel() },
	}).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	defer func() {
		_ = cs.Close()
		<-ran
	}()

	params := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 1, "wait": true}}
	params.SetProgressToken(7)
	_, err = cs.CallTool(ctx, params)
	require.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool { return f.canceled.Load() == 1 }, 5*time.Second, 5*time.Millisecond,
		"the tool never saw the client's cancellation")

	// The session goes on.
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
	require.NoError(t, err)
	assert.Equal(t, "echo: after", resultText(res))

	// The cancelled call got no reply; the others did (the log's line
	// comes after the write, so it is waited for).
	var slowID, echoID any
	var replied map[string]bool
	require.Eventually(t, func() bool {
		slowID, echoID, replied = readWire(wire.String())
		return echoID != nil && replied[fmt.Sprint(echoID)]
	}, 5*time.Second, 5*time.Millisecond, wire.String())
	require.NotNil(t, slowID, wire.String())
	assert.False(t, replied[fmt.Sprint(slowID)], "a reply was sent for the cancelled call:\n%s", wire)
}

// readWire reads a LoggingTransport's log of the server's side: the IDs
// of the calls of slow and echo, and the IDs replied to.
func readWire(log string) (slowID, echoID any, replied map[string]bool) {
	replied = map[string]bool{}
	for line := range strings.Lines(log) {
		dir, msg, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			continue
		}
		var m struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(msg), &m) != nil || m.ID == nil {
			continue
		}
		switch {
		case dir == "read" && m.Method == "tools/call" && m.Params.Name == "slow":
			slowID = m.ID
		case dir == "read" && m.Method == "tools/call" && m.Params.Name == "echo":
			echoID = m.ID
		case dir == "write" && m.Method == "":
			replied[fmt.Sprint(m.ID)] = true
		}
	}
	return slowID, echoID, replied
}

func TestServeApprovals(t *testing.T) {
	type answer struct {
		action  string
		content map[string]any
	}
	tests := []struct {
		name     string
		answer   *answer // nil: the client does not declare elicitation
		editable bool
		approved bool
		ran      string
	}{
		{name: "accept", answer: &answer{action: "accept", content: map[string]any{"approve": true}}, approved: true, ran: "/tmp/x"},
		{name: "accept without content", answer: &answer{action: "accept"}, approved: true, ran: "/tmp/x"},
		{name: "accept but not approve", answer: &answer{action: "accept", content: map[string]any{"approve": false}}},
		{name: "decline", answer: &answer{action: "decline"}},
		{name: "cancel", answer: &answer{action: "cancel"}},
		{name: "no elicitation capability"},
		{name: "edited arguments", editable: true, approved: true, ran: "/tmp/edited",
			answer: &answer{action: "accept", content: map[string]any{"approve": true, "arguments": `{"path":"/tmp/edited"}`}}},
		{name: "edited into invalid arguments", editable: true,
			answer: &answer{action: "accept", content: map[string]any{"approve": true, "arguments": `{"path":3}`}}},
	}
	for _, version := range []string{"2025-11-25", ""} { // during the call; by calling again
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				f := newServeFixture()
				srv := newServe(t, f, &mcp.ServeOptions{EditableArguments: tt.editable})
				var asked []*sdk.ElicitParams
				copts := &sdk.ClientOptions{}
				if tt.answer != nil {
					copts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						asked = append(asked, req.Params)
						return &sdk.ElicitResult{Action: tt.answer.action, Content: tt.answer.content}, nil
					}
				}
				cs := connectMemory(t, srv, copts, &sdk.ClientSessionOptions{ProtocolVersion: version})
				res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/tmp/x"}})
				require.NoError(t, err)
				if tt.approved {
					assert.False(t, res.IsError, resultText(res))
					assert.Equal(t, []string{tt.ran}, f.dangerRuns())
				} else {
					assert.True(t, res.IsError)
					if tt.editable {
						assert.Equal(t, string(toolloop.KindInvalidArgs), callKind(res), resultText(res))
					} else {
						assert.Equal(t, string(toolloop.KindDenied), callKind(res), resultText(res))
					}
					assert.Empty(t, f.dangerRuns())
				}
				if tt.answer == nil {
					assert.Empty(t, asked)
					assert.Contains(t, resultText(res), "elicitation")
					return
				}
				require.Len(t, asked, 1)
				assert.Contains(t, asked[0].Message, "danger")
				assert.Contains(t, asked[0].Message, "it deletes files")
				assert.Contains(t, asked[0].Message, `{"path":"/tmp/x"}`)
			})
		}
	}
}

func TestServeApprovalTimeout(t *testing.T) {
	f := newServeFixture()
	srv := newServe(t, f, &mcp.ServeOptions{ApprovalTimeout: 50 * time.Millisecond})
	cs := connectMemory(t, srv, &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			<-ctx.Done() // nobody answers
			return nil, ctx.Err()
		},
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/tmp/x"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, string(toolloop.KindDenied), callKind(res))
	assert.Contains(t, resultText(res), "50ms")
	assert.Empty(t, f.dangerRuns())
}

func TestServeApprovalStateIsCheckedAndSingleUse(t *testing.T) {
	f := newServeFixture()
	srv := newServe(t, f, nil)
	cs := connectMemory(t, srv, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	}, nil)
	ctx := t.Context()
	first, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/tmp/x"}})
	require.NoError(t, err)
	require.NotEmpty(t, first.RequestState)
	require.Len(t, first.InputRequests, 1)

	answers := sdk.InputResponseMap{}
	for id := range first.InputRequests {
		answers[id] = &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	}
	forged, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/"},
		InputResponses: answers, RequestState: "forged"})
	require.NoError(t, err)
	assert.True(t, forged.IsError)
	assert.Equal(t, string(toolloop.KindDenied), callKind(forged))

	ok, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/"},
		InputResponses: answers, RequestState: first.RequestState})
	require.NoError(t, err)
	assert.False(t, ok.IsError, resultText(ok))
	assert.Equal(t, []string{"/tmp/x"}, f.dangerRuns(), "the call runs with the arguments that were approved, not the retry's")

	again, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "danger", Arguments: map[string]any{"path": "/tmp/x"},
		InputResponses: answers, RequestState: first.RequestState})
	require.NoError(t, err)
	assert.True(t, again.IsError, "an approval answers one call")
	assert.Len(t, f.dangerRuns(), 1)
}

func TestServeHTTPConcurrentSessions(t *testing.T) {
	f := newServeFixture()
	srv := newServe(t, f, nil)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	const sessions = 4
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Go(func() {
			ctx := t.Context()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: hs.URL}, nil)
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for j := range 5 {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": i, "b": j}})
				if err != nil {
					errs <- err
					return
				}
				if want := map[string]any{"sum": float64(i + j)}; !assert.Equal(t, want, res.StructuredContent) {
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestServeToOwnClient runs an agent whose tools come, through this
// package's client, from a server made by this package: a loop at each
// end.
func TestServeToOwnClient(t *testing.T) {
	f := newServeFixture()
	srv := newServe(t, f, nil)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	configs := map[string]mcp.ServerConfig{
		"memory": {Transport: func(ctx context.Context) (sdk.Transport, error) {
			ct, st := sdk.NewInMemoryTransports()
			go func() { _ = srv.Run(context.WithoutCancel(ctx), st) }()
			return ct, nil
		}},
		"http": {URL: hs.URL},
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			src, err := mcp.New("remote", cfg, nil)
			require.NoError(t, err)
			defer func() { require.NoError(t, src.Close()) }()
			reg := &toolloop.ToolRegistry{}
			require.NoError(t, reg.AddSource(t.Context(), src))

			var progress []toolloop.Progress
			model := looptest.NewModel(t,
				looptest.Turn{Reply: looptest.Calls(
					looptest.Call("a", "remote__add", `{"a":1,"b":2}`),
					looptest.Call("f", "remote__fail", `{}`),
					looptest.Call("s", "remote__slow", `{"steps":2}`),
					looptest.Call("d", "remote__danger", `{"path":"/etc"}`),
				)},
				looptest.Turn{Reply: looptest.Text("done")},
			)
			loop := &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: func(e toolloop.Event) {
				if e.Type == toolloop.EventProgress && e.CallID == "s" {
					progress = append(progress, *e.Progress)
				}
			}}
			res, err := loop.Run(t.Context(), []toolloop.Message{toolloop.UserMessage("go")})
			require.NoError(t, err)
			got := looptest.Results(res.Messages)
			assert.JSONEq(t, `{"sum":3}`, got["a"].Text())
			require.True(t, got["f"].IsError())
			assert.Contains(t, got["f"].Text(), "the disk is on fire")
			assert.Equal(t, "done", got["s"].Text())
			require.True(t, got["d"].IsError(), "our client declares no elicitation, so the server denies")
			assert.Contains(t, got["d"].Text(), "approval")
			assert.Empty(t, f.dangerRuns())
			assert.NotEmpty(t, progress, "progress crosses both ends")
		})
	}
}

func TestServeClose(t *testing.T) {
	srv, err := mcp.NewServer(newServeFixture().loop, nil)
	require.NoError(t, err)
	ct, st := sdk.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(context.Background(), st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()

	require.NoError(t, srv.Close())
	select {
	case err := <-ran:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	require.NoError(t, srv.Close(), "Close is idempotent")
	ct2, st2 := sdk.NewInMemoryTransports()
	_ = ct2
	err = srv.Run(context.Background(), st2)
	assert.True(t, errors.Is(err, mcp.ErrServerClosed) || err != nil)

	_, err = mcp.NewServer(&toolloop.AgentLoop{}, nil)
	assert.Error(t, err, "a loop without tools cannot be served")
}

// outputTool declares an output schema beside a tool's own spec.
type outputTool struct {
	toolloop.Tool
	schema json.RawMessage
}

func (o outputTool) Spec() toolloop.ToolSpec {
	sp := o.Tool.Spec()
	sp.OutputSchema = o.schema
	return sp
}

func TestServeDeclaresOutputSchemas(t *testing.T) {
	f := newServeFixture()
	schema := json.RawMessage(`{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}`)
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	f.loop.Tools.MustRegister(outputTool{toolloop.NewTool("typed_add", "Adds two integers.", func(_ context.Context, in addIn) (any, error) {
		return map[string]int{"sum": in.A + in.B}, nil
	}), schema})
	srv := newServe(t, f, nil)
	cs := connectMemory(t, srv, nil, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})

	res, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	i := slices.IndexFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == "typed_add" })
	require.GreaterOrEqual(t, i, 0)
	assert.JSONEq(t, string(schema), string(mustJSON(t, res.Tools[i].OutputSchema)))
	j := slices.IndexFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == "add" })
	require.GreaterOrEqual(t, j, 0)
	assert.Nil(t, res.Tools[j].OutputSchema, "a tool without one declares none")

	got, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "typed_add", Arguments: map[string]any{"a": 2, "b": 40}})
	require.NoError(t, err)
	require.False(t, got.IsError, resultText(got))
	assert.Equal(t, map[string]any{"sum": 42.0}, got.StructuredContent)
}
