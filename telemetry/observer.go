package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
)

// ScopeName is the instrumentation scope of the Observer's tracer and
// meter.
const ScopeName = "github.com/toolloop/toolloop/telemetry"

// Attribute keys that the semantic conventions do not define.
const (
	// RunIDKey is the toolloop run ID, on every span.
	RunIDKey = attribute.Key("toolloop.run.id")
	// ResumedKey marks the span of a run resumed after a pause.
	ResumedKey = attribute.Key("toolloop.run.resumed")
	// PausedKey marks a run that paused for approval, and a call that was
	// left waiting for it.
	PausedKey = attribute.Key("toolloop.paused")
	// StopReasonKey is the run's stop reason.
	StopReasonKey = attribute.Key("toolloop.run.stop_reason")
	// TurnsKey counts a run's model turns.
	TurnsKey = attribute.Key("toolloop.run.turns")
	// SourceKey and SourceNameKey are a tool's source kind and name.
	SourceKey     = attribute.Key("toolloop.tool.source")
	SourceNameKey = attribute.Key("toolloop.tool.source_name")
	// StatusKey is a tool call's status: ok or error.
	StatusKey = attribute.Key("toolloop.tool.status")
	// TruncatedKey marks a result cut to its byte budget.
	TruncatedKey = attribute.Key("toolloop.tool.truncated")
	// ApprovalWaitKey is how long a call waited for its approval, in
	// seconds: part of its span, which the tool did not spend running.
	ApprovalWaitKey = attribute.Key("toolloop.tool.approval_wait")
)

// Options configure an [Observer]. The zero value records no content (no
// text from the model, a tool or an error) and names no agent, provider
// or model.
type Options struct {
	// AgentName is gen_ai.agent.name, and names the run spans
	// "invoke_agent <AgentName>".
	AgentName string
	// Provider is gen_ai.provider.name, such as "openai" or "anthropic".
	Provider string
	// Model is gen_ai.request.model, the model the loop asks for; chat
	// spans are named after it, or else after the model that answered.
	Model string
	// RecordContent adds what tools were given and said to spans: tool
	// arguments and results (gen_ai.tool.call.arguments and
	// gen_ai.tool.call.result), progress messages, and the error message
	// as a failed span's status description. They may hold personal or
	// secret data, so it is off by default: spans then carry no free text
	// at all, and a failed span's status description is its error type.
	// Recorded content goes through Redact first.
	RecordContent bool
	// Redact rewrites an event before its content is recorded; nil means
	// the RedactEvent method of a zero [sanitize.Redactor], which replaces
	// secrets with [REDACTED:<kind>]. It is only called when RecordContent
	// is set, and only for events whose content is recorded.
	Redact func(toolloop.Event) toolloop.Event
}

// Observer records the events of one or more AgentLoops as spans and
// metrics. It is safe for concurrent use.
type Observer struct {
	opts   Options
	redact func(toolloop.Event) toolloop.Event
	tracer trace.Tracer

	opDuration genaiconv.ClientOperationDuration
	tokens     genaiconv.ClientTokenUsage
	toolDur    metric.Float64Histogram
	toolCalls  metric.Int64Counter

	mu   sync.Mutex
	runs map[string]*run
}

// run is the state of one run's spans.
type run struct {
	ctx    context.Context // holds the run span
	span   trace.Span
	start  time.Time
	chat   trace.Span
	chatAt time.Time
	tools  map[string]*toolSpan
	paused bool
	usage  toolloop.Usage
}

type toolSpan struct {
	ctx   context.Context
	span  trace.Span
	start time.Time
}

// The histogram buckets the GenAI conventions advise.
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// New returns an Observer that reports to tp and mp; nil means the global
// providers (otel.GetTracerProvider, otel.GetMeterProvider). It fails only
// if mp refuses to create an instrument.
func New(tp trace.TracerProvider, mp metric.MeterProvider, opts Options) (*Observer, error) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(ScopeName)
	o := &Observer{opts: opts, redact: opts.Redact, tracer: tp.Tracer(ScopeName), runs: make(map[string]*run)}
	if o.redact == nil {
		o.redact = new(sanitize.Redactor).RedactEvent
	}
	var errs [4]error
	o.opDuration, errs[0] = genaiconv.NewClientOperationDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
	o.tokens, errs[1] = genaiconv.NewClientTokenUsage(meter, metric.WithExplicitBucketBoundaries(tokenBuckets...))
	o.toolDur, errs[2] = meter.Float64Histogram("toolloop.tool.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of tool calls, from resolution to truncation."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	o.toolCalls, errs[3] = meter.Int64Counter("toolloop.tool.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Number of tool calls completed."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return o, nil
}

// hasContent reports whether the Observer records content of events of
// type t, when Options.RecordContent is set.
func hasContent(t toolloop.EventType) bool {
	switch t {
	case toolloop.EventStart, toolloop.EventComplete, toolloop.EventProgress, toolloop.EventRunEnd:
		return true
	}
	return false
}

// Record records e. Use it as an AgentLoop's OnEvent; run spans are roots.
func (o *Observer) Record(e toolloop.Event) { o.record(context.Background(), e) }

// Within returns an OnEvent function that records like Record, but starts
// run spans as children of the span in ctx. Set it on a copy of the loop
// made for one request:
//
//	l := *loop
//	l.OnEvent = obs.Within(ctx)
//	res, err := l.Run(ctx, msgs)
//
// The function does not keep ctx from being canceled; it only reads its
// span.
func (o *Observer) Within(ctx context.Context) func(toolloop.Event) {
	parent := trace.ContextWithSpanContext(context.Background(), trace.SpanContextFromContext(ctx))
	return func(e toolloop.Event) { o.record(parent, e) }
}

// Middleware is a [toolloop.Middleware] that runs each call with its
// execute_tool span in the context, so that spans the tool starts are its
// children.
func (o *Observer) Middleware(next toolloop.Handler) toolloop.Handler {
	return func(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
		o.mu.Lock()
		var span trace.Span
		if r := o.runs[call.RunID]; r != nil {
			if ts := r.tools[call.ID]; ts != nil {
				span = ts.span
			}
		}
		o.mu.Unlock()
		if span != nil {
			ctx = trace.ContextWithSpan(ctx, span)
		}
		return next(ctx, call)
	}
}

func at(e toolloop.Event) time.Time {
	if e.Time.IsZero() {
		return time.Now()
	}
	return e.Time
}

func (o *Observer) record(parent context.Context, e toolloop.Event) {
	if o.opts.RecordContent && hasContent(e.Type) {
		e = o.redact(e) // before the lock: it may take a while
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Type {
	case toolloop.EventRunStart, toolloop.EventRunResumed:
		o.startRun(parent, e)
		return
	}
	r := o.runs[e.RunID]
	if r == nil {
		return // a run that started before the Observer, or not ours
	}
	switch e.Type {
	case toolloop.EventTranscriptRepaired:
		r.span.AddEvent("transcript.repaired", trace.WithTimestamp(at(e)),
			trace.WithAttributes(attribute.StringSlice("toolloop.repairs", e.Repairs)))
	case toolloop.EventModelRequest:
		o.startChat(r, e)
	case toolloop.EventModelResponse:
		o.endChat(r, e)
	case toolloop.EventStart:
		o.startTool(r, e)
	case toolloop.EventComplete:
		o.endTool(r, e)
	case toolloop.EventGuardVerdict, toolloop.EventPermissionRequested, toolloop.EventPermissionCompleted,
		toolloop.EventHook, toolloop.EventProgress, toolloop.EventArgumentsRepaired:
		o.toolEvent(r, e)
	case toolloop.EventUserMessage:
		// The message is content: only its origin is recorded.
		r.span.AddEvent(string(e.Type), trace.WithTimestamp(at(e)),
			trace.WithAttributes(attribute.String("toolloop.origin", string(e.Origin))))
	case toolloop.EventRunInterrupted:
		if e.Interrupt != nil {
			r.span.AddEvent(string(e.Type), trace.WithTimestamp(at(e)), trace.WithAttributes(
				attribute.String("toolloop.interrupt.mode", string(e.Interrupt.Mode)),
				attribute.Bool("toolloop.interrupt.continue", e.Interrupt.Continue)))
		}
	case toolloop.EventRunPaused:
		o.pause(r, e)
	case toolloop.EventRunEnd:
		o.endRun(r, e)
	}
}

func (o *Observer) startRun(parent context.Context, e toolloop.Event) {
	if old := o.runs[e.RunID]; old != nil {
		o.finish(old, at(e))
	}
	name := string(genaiconv.OperationNameInvokeAgent)
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, RunIDKey.String(e.RunID)}
	if o.opts.AgentName != "" {
		name += " " + o.opts.AgentName
		attrs = append(attrs, semconv.GenAIAgentName(o.opts.AgentName))
	}
	attrs = append(attrs, o.providerAttrs()...)
	if e.Type == toolloop.EventRunResumed {
		attrs = append(attrs, ResumedKey.Bool(true))
	}
	ctx, span := o.tracer.Start(parent, name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(at(e)), trace.WithAttributes(attrs...))
	o.runs[e.RunID] = &run{ctx: ctx, span: span, start: at(e), tools: make(map[string]*toolSpan)}
}

func (o *Observer) providerAttrs() []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if o.opts.Provider != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(o.opts.Provider))
	}
	if o.opts.Model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(o.opts.Model))
	}
	return attrs
}

func (o *Observer) startChat(r *run, e toolloop.Event) {
	if r.chat != nil {
		r.chat.End(trace.WithTimestamp(at(e)))
	}
	name := string(genaiconv.OperationNameChat)
	if o.opts.Model != "" {
		name += " " + o.opts.Model
	}
	attrs := append([]attribute.KeyValue{semconv.GenAIOperationNameChat, RunIDKey.String(e.RunID)}, o.providerAttrs()...)
	_, r.chat = o.tracer.Start(r.ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(at(e)), trace.WithAttributes(attrs...))
	r.chatAt = at(e)
}

func (o *Observer) endChat(r *run, e toolloop.Event) {
	if r.chat == nil {
		o.startChat(r, e)
	}
	span := r.chat
	r.chat = nil
	resp := e.Response
	if resp == nil {
		span.End(trace.WithTimestamp(at(e)))
		return
	}
	if o.opts.Model == "" && resp.Model != "" {
		span.SetName(string(genaiconv.OperationNameChat) + " " + resp.Model)
	}
	stop := resp.StopReason
	if stop == "" {
		stop = resp.Message.StopReason
	}
	u := resp.Usage
	r.usage.Add(u)
	span.SetAttributes(
		semconv.GenAIResponseFinishReasons(string(stop)),
		semconv.GenAIUsageInputTokens(int(u.InputTokens)),
		semconv.GenAIUsageOutputTokens(int(u.OutputTokens)),
	)
	if resp.Model != "" {
		span.SetAttributes(semconv.GenAIResponseModel(resp.Model))
	}
	if u.CacheReadTokens > 0 {
		span.SetAttributes(semconv.GenAIUsageCacheReadInputTokens(int(u.CacheReadTokens)))
	}
	if u.CacheWriteTokens > 0 {
		span.SetAttributes(semconv.GenAIUsageCacheCreationInputTokens(int(u.CacheWriteTokens)))
	}
	span.End(trace.WithTimestamp(at(e)))

	attrs := o.metricAttrs(genaiconv.OperationNameChat)
	if resp.Model != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(resp.Model))
	}
	ctx := context.Background()
	o.opDuration.Float64Histogram.Record(ctx, at(e).Sub(r.chatAt).Seconds(), metric.WithAttributes(attrs...))
	o.tokens.Int64Histogram.Record(ctx, u.InputTokens, metric.WithAttributes(append(attrs, semconv.GenAITokenTypeInput)...))
	o.tokens.Int64Histogram.Record(ctx, u.OutputTokens, metric.WithAttributes(append(attrs, semconv.GenAITokenTypeOutput)...))
}

func (o *Observer) metricAttrs(op genaiconv.OperationNameAttr) []attribute.KeyValue {
	return append([]attribute.KeyValue{semconv.GenAIOperationNameKey.String(string(op))}, o.providerAttrs()...)
}
