package telemetry_test

import (
	"context"
	"fmt"
	"slices"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/telemetry"
)

func ExampleObserver() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())

	obs, err := telemetry.New(tp, mp, telemetry.Options{AgentName: "helper", Provider: "openai"})
	if err != nil {
		panic(err)
	}
	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(toolloop.NewTool("clock", "Tells the time.", func(context.Context, struct{}) (any, error) {
		return "noon", nil
	}))
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		if len(req.Messages) > 1 {
			return &toolloop.Response{Model: "gpt-x", Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("It is noon.")}}}, nil
		}
		return &toolloop.Response{Model: "gpt-x", Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{{ID: "c1", Name: "clock"}}}}, nil
	})
	loop := &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: obs.Record,
		Hooks: toolloop.Hooks{Middleware: []toolloop.Middleware{obs.Middleware}}}
	if _, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("time?")}); err != nil {
		panic(err)
	}

	spans := exp.GetSpans()
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanContext.SpanID().String()] = s.Name
	}
	var lines []string
	for _, s := range spans {
		parent := names[s.Parent.SpanID().String()]
		if parent == "" {
			parent = "(root)"
		}
		lines = append(lines, fmt.Sprintf("%s <- %s", s.Name, parent))
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// chat gpt-x <- invoke_agent helper
	// chat gpt-x <- invoke_agent helper
	// execute_tool clock <- invoke_agent helper
	// invoke_agent helper <- (root)
}
