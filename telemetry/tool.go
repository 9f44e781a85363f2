package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolloop/toolloop"
)

func (o *Observer) startTool(r *run, e toolloop.Event) *toolSpan {
	if old := r.tools[e.CallID]; old != nil {
		old.span.End(trace.WithTimestamp(at(e)))
	}
	return o.openTool(r, e, at(e))
}

func (o *Observer) openTool(r *run, e toolloop.Event, start time.Time) *toolSpan {
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(e.Tool),
		semconv.GenAIToolCallID(e.CallID),
		RunIDKey.String(e.RunID),
	}
	if o.opts.RecordContent && len(e.Arguments) > 0 {
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(string(e.Arguments)))
	}
	ctx, span := o.tracer.Start(r.ctx, string(genaiconv.OperationNameExecuteTool)+" "+e.Tool,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	ts := &toolSpan{ctx: ctx, span: span, start: start}
	r.tools[e.CallID] = ts
	return ts
}

// toolType maps a source kind onto gen_ai.tool.type: tools the
// application runs itself are functions; tools of an MCP server, which
// reach outside it, are extensions.
func toolType(k toolloop.SourceKind) string {
	if k == toolloop.SourceMCP {
		return "extension"
	}
	return "function"
}

func (o *Observer) endTool(r *run, e toolloop.Event) {
	res := e.Result
	ts := r.tools[e.CallID]
	if ts == nil {
		// No span: the events before completion were not seen.
		start := at(e)
		if res != nil {
			start = start.Add(-res.Meta.Duration)
		}
		ts = o.openTool(r, e, start)
	}
	delete(r.tools, e.CallID)
	span := ts.span
	dur := at(e).Sub(ts.start)
	if res == nil {
		span.End(trace.WithTimestamp(at(e)))
		return
	}
	if res.Meta.Duration > 0 {
		dur = res.Meta.Duration
	}
	source := res.Meta.Source
	if source == "" {
		source = e.Source
	}
	span.SetAttributes(StatusKey.String(string(res.Status)))
	if source != "" {
		span.SetAttributes(semconv.GenAIToolTypeKey.String(toolType(source)), SourceKey.String(string(source)))
	}
	if name := res.Meta.SourceName; name != "" {
		span.SetAttributes(SourceNameKey.String(name))
	}
	if res.Meta.Truncated {
		span.SetAttributes(TruncatedKey.Bool(true))
	}
	if t := e.Timing; t != nil && t.Approval > 0 {
		span.SetAttributes(ApprovalWaitKey.Float64(t.Approval.Seconds()))
	}
	if o.opts.RecordContent {
		span.SetAttributes(semconv.GenAIToolCallResultKey.String(res.Text()))
	}
	metricAttrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(e.Tool)}
	if res.IsError() {
		kind := "_OTHER"
		if res.Error != nil {
			kind = string(res.Error.Kind)
		}
		desc := kind
		if o.opts.RecordContent && res.Error != nil {
			desc = res.Error.Message
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(kind))
		span.SetStatus(codes.Error, desc)
		metricAttrs = append(metricAttrs, semconv.ErrorTypeKey.String(kind))
	}
	span.End(trace.WithTimestamp(at(e)))

	ctx := context.Background()
	o.toolDur.Record(ctx, dur.Seconds(), metric.WithAttributes(metricAttrs...))
	o.toolCalls.Add(ctx, 1, metric.WithAttributes(append(metricAttrs, StatusKey.String(string(res.Status)))...))
}

// toolEvent adds a span event to the call's span.
func (o *Observer) toolEvent(r *run, e toolloop.Event) {
	ts := r.tools[e.CallID]
	if ts == nil {
		if e.Type != toolloop.EventPermissionCompleted {
			return
		}
		// A call that waited for approval, resumed: its span starts now.
		ts = o.openTool(r, e, at(e))
	}
	var attrs []attribute.KeyValue
	switch {
	case e.Verdict != nil:
		attrs = append(attrs, attribute.String("toolloop.guard.decision", string(e.Verdict.Decision)))
		if e.Verdict.Rule != "" {
			attrs = append(attrs, attribute.String("toolloop.guard.rule", e.Verdict.Rule))
		}
	case e.Approval != nil:
		attrs = append(attrs, attribute.Bool("toolloop.approval.approved", e.Approval.Approved))
	case e.Hook != nil:
		attrs = append(attrs, attribute.String("toolloop.hook", e.Hook.Hook),
			attribute.Int("toolloop.hook.index", e.Hook.Index), attribute.String("toolloop.hook.effect", e.Hook.Effect))
	case e.Progress != nil:
		attrs = append(attrs, attribute.Float64("toolloop.progress.done", e.Progress.Done), attribute.Float64("toolloop.progress.total", e.Progress.Total))
		if o.opts.RecordContent && e.Progress.Message != "" {
			attrs = append(attrs, attribute.String("toolloop.progress.message", e.Progress.Message))
		}
	}
	ts.span.AddEvent(string(e.Type), trace.WithTimestamp(at(e)), trace.WithAttributes(attrs...))
}

func (o *Observer) pause(r *run, e toolloop.Event) {
	r.paused = true
	ids := make([]string, len(e.Pending))
	for i, p := range e.Pending {
		ids[i] = p.CallID
		if ts := r.tools[p.CallID]; ts != nil {
			ts.span.SetAttributes(PausedKey.Bool(true))
			ts.span.End(trace.WithTimestamp(at(e)))
			delete(r.tools, p.CallID)
		}
	}
	r.span.SetAttributes(PausedKey.Bool(true))
	r.span.AddEvent(string(e.Type), trace.WithTimestamp(at(e)),
		trace.WithAttributes(attribute.StringSlice("toolloop.pending", ids)))
}

// runErrorType names the way a run ended in error, from its stop reason.
func runErrorType(stop toolloop.StopReason) string {
	switch stop {
	case toolloop.StopToolUse:
		return "max_iterations"
	case toolloop.StopLength:
		return "length"
	case toolloop.StopAborted:
		return "canceled"
	case toolloop.StopInterrupted:
		return "interrupted"
	}
	return "_OTHER"
}

func (o *Observer) endRun(r *run, e toolloop.Event) {
	t := at(e)
	failed := e.Error != "" && !r.paused
	desc := runErrorType(e.StopReason)
	if o.opts.RecordContent {
		desc = e.Error
	}
	if r.chat != nil {
		// The model failed: no response came.
		r.chat.SetAttributes(semconv.ErrorTypeKey.String(runErrorType(e.StopReason)))
		r.chat.SetStatus(codes.Error, desc)
		r.chat.End(trace.WithTimestamp(t))
		attrs := append(o.metricAttrs(genaiconv.OperationNameChat), semconv.ErrorTypeKey.String(runErrorType(e.StopReason)))
		o.opDuration.Float64Histogram.Record(context.Background(), t.Sub(r.chatAt).Seconds(), metric.WithAttributes(attrs...))
		r.chat = nil
	}
	r.span.SetAttributes(StopReasonKey.String(string(e.StopReason)), TurnsKey.Int(e.Turn),
		semconv.GenAIUsageInputTokens(int(r.usage.InputTokens)), semconv.GenAIUsageOutputTokens(int(r.usage.OutputTokens)))
	attrs := o.metricAttrs(genaiconv.OperationNameInvokeAgent)
	if o.opts.AgentName != "" {
		attrs = append(attrs, semconv.GenAIAgentName(o.opts.AgentName))
	}
	if failed {
		r.span.SetAttributes(semconv.ErrorTypeKey.String(runErrorType(e.StopReason)))
		r.span.SetStatus(codes.Error, desc)
		attrs = append(attrs, semconv.ErrorTypeKey.String(runErrorType(e.StopReason)))
	}
	o.opDuration.Float64Histogram.Record(context.Background(), t.Sub(r.start).Seconds(), metric.WithAttributes(attrs...))
	o.finish(r, t)
	delete(o.runs, e.RunID)
}

// finish ends the run's span and any span it left open.
func (o *Observer) finish(r *run, t time.Time) {
	for id, ts := range r.tools {
		ts.span.End(trace.WithTimestamp(t))
		delete(r.tools, id)
	}
	if r.chat != nil {
		r.chat.End(trace.WithTimestamp(t))
		r.chat = nil
	}
	r.span.End(trace.WithTimestamp(t))
}
