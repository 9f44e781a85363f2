package sanitize_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/internal/memwatch"
	"github.com/toolloop/toolloop/sanitize"
)

// floodLoop is a loop whose one tool returns out, with the redactor and
// the envelope as post-hooks.
func floodLoop(out string) *toolloop.AgentLoop {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("flood", "Returns a lot.", func(context.Context, struct{}) (any, error) {
		return out, nil
	}))
	var r sanitize.Redactor
	var e sanitize.Envelope
	return &toolloop.AgentLoop{Tools: &reg,
		Hooks: toolloop.Hooks{PostToolUse: []toolloop.PostToolUseHook{r.PostToolUse, e.PostToolUse}}}
}

var floodCall = toolloop.ToolCall{ID: "c1", Name: "flood", Arguments: json.RawMessage(`{}`)}

// A tool's huge output costs the loop about its pre-hook budget, not a
// few copies of itself: the hooks see it cut. This counts bytes
// allocated, which does not depend on the machine's speed.
func TestHugeOutputWithHooksAllocatesBudget(t *testing.T) {
	out := strings.Repeat("log line with nothing secret in it\n", 2<<20) // 70 MiB
	loop := floodLoop(out)
	res, _ := loop.RunCall(context.Background(), "run", 1, floodCall, nil)
	require.Equal(t, toolloop.StatusOK, res.Status)
	require.True(t, res.Meta.Truncated)
	require.Equal(t, len(out), res.Meta.Bytes)
	b := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = loop.RunCall(context.Background(), "run", 1, floodCall, nil)
		}
	})
	require.Less(t, b.AllocedBytesPerOp(), int64(16<<20), "bytes allocated per call for a 70 MiB output")
}

// BenchmarkHugeOutputPeakHeap measures the peak heap a call adds when its
// tool returns 1 GiB of text, with the redactor and the envelope on (the
// tool's own gigabyte is made once, outside the measure).
func BenchmarkHugeOutputPeakHeap(b *testing.B) {
	out := strings.Repeat("log line with nothing secret in it\n", (1<<30)/35)
	loop := floodLoop(out)
	var peak uint64
	for b.Loop() {
		peak = max(peak, memwatch.Peak(time.Millisecond, func() {
			_, _ = loop.RunCall(context.Background(), "run", 1, floodCall, nil)
		}))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
