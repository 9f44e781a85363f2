package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/sanitize"
	"github.com/toolloop/toolloop/telemetry"
)

// runArgs are the arguments of the leak test's tool: what it reports,
// logs and returns, each a document of the secrets corpus.
type runArgs struct {
	Cmd      string `json:"cmd"`
	Progress string `json:"progress"`
	Partial  string `json:"partial"`
	Log      string `json:"log"`
	Output   string `json:"output"`
	// Mode is ok, fail (an error) or panic.
	Mode string `json:"mode"`
}

// runTool does what its arguments say, and logs them.
type runTool struct{ log *slog.Logger }

func (runTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "run", Description: "Runs a command.", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (t runTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var a runArgs
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return nil, err
	}
	call.ReportProgress(toolloop.Progress{Message: a.Progress, Done: 1, Total: 2})
	call.ReportPartial(a.Partial)
	t.log.InfoContext(ctx, "running "+a.Cmd, "args", call.Arguments, "env", a.Log)
	switch a.Mode {
	case "fail":
		return nil, errors.New(a.Output)
	case "panic":
		panic(a.Output)
	}
	return toolloop.TextResult(a.Output), nil
}

// TestNoSecretLeaks runs a whole loop whose prompt, model responses
// (text, reasoning and tool-call arguments), tool progress, partial
// output, output, errors, panics and logs all hold the documents of the
// secrets corpus, with an event log, telemetry and a slog logger set up
// as documented:
//
//	redactor := new(sanitize.Redactor)
//	logger := slog.New(redactor.LogHandler(handler))
//	w, _ := eventlog.Create(path, eventlog.Options{Redact: redactor.RedactEvent})
//	loop.OnEvent = toolloop.Tee(logger, w.Record, obs.Record)
//
// No part of any secret may be in the log file, the spans or the log
// output, whether telemetry records content or not.
func TestNoSecretLeaks(t *testing.T) {
	for _, content := range []bool{false, true} {
		t.Run(fmt.Sprintf("RecordContent=%v", content), func(t *testing.T) {
			docs := loadCorpus(t, 7)
			out := runLeakyLoop(t, docs, content)

			for what, text := range map[string]string{"event log": out.log, "spans": out.spans, "slog output": out.slog} {
				found := leaks(text, docs)
				assert.Empty(t, found, "secrets in the %s", what)
			}
			// The test saw what it means to check.
			assert.Greater(t, strings.Count(out.log, "[REDACTED:"), len(docs), "the event log holds every document, redacted")
			assert.Greater(t, strings.Count(out.slog, "[REDACTED:"), len(docs)/6, "the tool and the loop logged")
			for _, typ := range []toolloop.EventType{toolloop.EventRunStart, toolloop.EventModelResponse, toolloop.EventProgress,
				toolloop.EventPartialResult, toolloop.EventComplete, toolloop.EventRunEnd} {
				assert.Contains(t, out.log, `"type":"`+string(typ)+`"`)
			}
			assert.Contains(t, out.slog, "event sink 3 of 3 panicked")
			if content {
				assert.Contains(t, out.spans, "gen_ai.tool.call.result=")
				assert.Contains(t, out.spans, "[REDACTED:")
			} else {
				assert.NotContains(t, out.spans, "gen_ai.tool.call.result=")
			}
		})
	}
}

// leakOutput is what a run left in its three sinks, as text: each JSON
// line both as written and with its strings decoded.
type leakOutput struct{ log, spans, slog string }

func runLeakyLoop(t *testing.T, docs []corpusDoc, recordContent bool) leakOutput {
	next := 0
	doc := func() string {
		d := docs[next%len(docs)]
		next++
		return d.text
	}

	var redactor sanitize.Redactor
	var slogBuf bytes.Buffer
	logger := slog.New(redactor.LogHandler(slog.NewJSONHandler(&slogBuf, nil)))

	path := filepath.Join(t.TempDir(), "events.jsonl")
	w, err := eventlog.Create(path, eventlog.Options{NoSync: true, Redact: redactor.RedactEvent})
	require.NoError(t, err)

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	obs, err := telemetry.New(tp, mp, telemetry.Options{RecordContent: recordContent})
	require.NoError(t, err)

	// The model calls the tool once a turn, until every document has had
	// a part, then fails with a document in its error.
	modes := []string{"ok", "fail", "panic"}
	var replies []*toolloop.Response
	prompt := []toolloop.Message{toolloop.SystemMessage(doc()), toolloop.UserMessage(doc())}
	for turn := 0; next < len(docs); turn++ {
		args, err := json.Marshal(runArgs{Cmd: doc(), Progress: doc(), Partial: doc(), Log: doc(), Output: doc(), Mode: modes[turn%len(modes)]})
		require.NoError(t, err)
		replies = append(replies, &toolloop.Response{Message: toolloop.Message{
			Content: []toolloop.Content{
				toolloop.ReasoningContent(doc(), toolloop.Reasoning{Provider: "test", Signature: "c2lnbmF0dXJl"}),
				toolloop.TextContent(doc()),
			},
			ToolCalls: []toolloop.ToolCall{{ID: fmt.Sprintf("call_%d", turn), Name: "run", Arguments: args}},
		}})
	}
	script := looptest.Script(replies...)
	failure := doc()
	model := toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		resp, err := script.Generate(ctx, req)
		if errors.Is(err, looptest.ErrScriptEnded) {
			return nil, fmt.Errorf("provider: %s", failure)
		}
		return resp, err
	})

	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(runTool{log: logger})
	panicked := false
	ui := func(e toolloop.Event) {
		if e.Type == toolloop.EventComplete && !panicked {
			panicked = true
			panic("ui: cannot render " + e.Result.Text())
		}
	}
	loop := &toolloop.AgentLoop{
		Model: model, Tools: reg, Logger: logger,
		OnEvent: toolloop.MultiSink(w.Record, obs.Record, ui),
		Hooks:   toolloop.Hooks{Middleware: []toolloop.Middleware{obs.Middleware}}, Budget: toolloop.Budget{MaxTurns: len(replies) + 2},
	}
	_, err = loop.Run(context.Background(), prompt)
	require.ErrorContains(t, err, "provider: ", "the run ends with the model's error")
	require.NoError(t, w.Close())
	require.NoError(t, tp.ForceFlush(context.Background()))

	logFile, err := os.ReadFile(path)
	require.NoError(t, err)
	return leakOutput{log: withDecoded(t, logFile), spans: spansText(exp.GetSpans()), slog: withDecoded(t, slogBuf.Bytes())}
}

// withDecoded returns JSON lines as written, followed by every string
// they hold, decoded: a secret must not survive in either form.
func withDecoded(t *testing.T, data []byte) string {
	var b strings.Builder
	b.Write(data)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var v any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), "%s", sc.Text())
		strs(v, &b)
	}
	require.NoError(t, sc.Err())
	return b.String()
}

func strs(v any, b *strings.Builder) {
	switch x := v.(type) {
	case string:
		b.WriteString("\n" + x)
	case []any:
		for _, e := range x {
			strs(e, b)
		}
	case map[string]any:
		for k, e := range x {
			b.WriteString("\n" + k)
			strs(e, b)
		}
	}
}

// spansText returns everything the spans hold that could hold text.
func spansText(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s\n%s\n", s.Name, s.Status.Description)
		for _, a := range s.Attributes {
			fmt.Fprintf(&b, "%s=%s\n", a.Key, a.Value.String())
		}
		for _, e := range s.Events {
			b.WriteString(e.Name + "\n")
			for _, a := range e.Attributes {
				fmt.Fprintf(&b, "%s=%s\n", a.Key, a.Value.String())
			}
		}
		for _, l := range s.Links {
			for _, a := range l.Attributes {
				fmt.Fprintf(&b, "%s=%s\n", a.Key, a.Value.String())
			}
		}
	}
	return b.String()
}
