package plugin

import (
	"context"
	"net"
	"net/rpc"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// fakeHost is the host's side of the callback stream, in process: it
// records the reports it takes, and takes none until release is closed.
type fakeHost struct {
	release chan struct{}
	mu      sync.Mutex
	reports []wire.Report
}

func (h *fakeHost) Report(r wire.Report, _ *wire.Empty) error {
	<-h.release
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reports = append(h.reports, r)
	return nil
}

// reportingSession returns a session of tools whose reports go to host
// over an in-memory connection.
func reportingSession(t *testing.T, host *fakeHost, tools ...toolloop.Tool) *session {
	t.Helper()
	a, b := net.Pipe()
	srv := rpc.NewServer()
	require.NoError(t, srv.RegisterName(wire.HostService, host))
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeConn(b)
	}()
	raw, err := (&rpcPlugin{srv: newServer(tools)}).Server(nil)
	require.NoError(t, err)
	ss := raw.(*session)
	ss.host = rpc.NewClient(a)
	t.Cleanup(func() {
		_ = ss.host.Close()
		<-done
	})
	return ss
}

var markerRE = regexp.MustCompile(`\n\[\.\.\. (\d+) bytes of partial output dropped[^\]]*\]\n`)

// splitPartial returns the partial output that arrived, markers removed,
// and the bytes the markers say were dropped.
func splitPartial(t *testing.T, texts []string) (kept string, dropped int) {
	t.Helper()
	var b strings.Builder
	for _, s := range texts {
		for _, m := range markerRE.FindAllStringSubmatch(s, -1) {
			n, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			dropped += n
		}
		b.WriteString(markerRE.ReplaceAllString(s, ""))
	}
	return b.String(), dropped
}

// TestFloodIsBounded: a tool reporting partial output faster than the
// host takes it never waits for the host, and what the plugin holds for
// it is bounded: the output is coalesced into reports of at most
// maxPendingPartial bytes, the rest dropped with a marker saying how
// much, and progress keeps its latest report. All of it arrives before
// the result.
func TestFloodIsBounded(t *testing.T) {
	const total, chunk = 4 << 20, 1000
	host := &fakeHost{release: make(chan struct{})}
	var flooded string
	ss := reportingSession(t, host, toolFunc{"flood", func(_ context.Context, c *toolloop.Call) (*toolloop.ToolResult, error) {
		var b strings.Builder
		for i := 0; b.Len() < total; i++ {
			s := strings.Repeat(strconv.Itoa(i%10), min(chunk, total-b.Len())-1) + "\n"
			b.WriteString(s)
			c.ReportPartial(s)
			c.ReportProgress(toolloop.Progress{Done: float64(b.Len()), Total: total})
		}
		flooded = b.String()
		close(host.release) // the host takes reports only now
		return toolloop.TextResult("flooded"), nil
	}})

	var reply wire.RunReply
	require.NoError(t, ss.Run(wire.Run{Token: 1, Tool: "flood", Report: true}, &reply))

	host.mu.Lock()
	defer host.mu.Unlock()
	var texts []string
	var progress []toolloop.Progress
	for _, r := range host.reports {
		assert.EqualValues(t, 1, r.Token)
		if r.Progress != nil {
			progress = append(progress, *r.Progress)
			continue
		}
		assert.LessOrEqual(t, len(r.Partial), maxPendingPartial+len(droppedMarker(total)))
		texts = append(texts, r.Partial)
	}
	kept, dropped := splitPartial(t, texts)
	assert.Equal(t, total, len(kept)+dropped, "every byte arrived or was counted")
	assert.Positive(t, dropped, "the host took nothing while the tool ran")
	assert.LessOrEqual(t, len(kept), 2*maxPendingPartial)
	assert.True(t, strings.HasPrefix(flooded, kept[:len(kept)/2]), "what arrived is the output, in order")
	require.NotEmpty(t, progress)
	assert.LessOrEqual(t, len(progress), 2, "progress keeps its latest report")
	assert.Equal(t, toolloop.Progress{Done: total, Total: total}, progress[len(progress)-1])
}

// TestReportsInOrder: when the host keeps up, each report arrives as it
// was made.
func TestReportsInOrder(t *testing.T) {
	host := &fakeHost{release: make(chan struct{})}
	close(host.release)
	ss := reportingSession(t, host, toolFunc{"lines", func(_ context.Context, c *toolloop.Call) (*toolloop.ToolResult, error) {
		for i := range 50 {
			c.ReportPartial("line " + strconv.Itoa(i) + "\n")
		}
		return toolloop.TextResult("done"), nil
	}})
	var reply wire.RunReply
	require.NoError(t, ss.Run(wire.Run{Token: 1, Tool: "lines", Report: true}, &reply))
	var want strings.Builder
	for i := range 50 {
		want.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	var texts []string
	host.mu.Lock()
	for _, r := range host.reports {
		texts = append(texts, r.Partial)
	}
	host.mu.Unlock()
	kept, dropped := splitPartial(t, texts)
	assert.Zero(t, dropped)
	assert.Equal(t, want.String(), kept)
}

// TestFloodThroughPlugin floods a real plugin's host with partial output
// from a reporter slower than the tool.
func TestFloodThroughPlugin(t *testing.T) {
	const total = 8 << 20
	src := newSample(t, Config{})
	rep := &recordingReporter{}
	res, err := runCall(t, src, "flood", map[string]int{"bytes": total, "chunk": 100}, 0, rep)
	require.NoError(t, err)
	assert.Equal(t, "flooded", res.Text())
	texts := rep.partials()
	for _, s := range texts {
		assert.LessOrEqual(t, len(s), maxPendingPartial+len(droppedMarker(total)))
	}
	kept, dropped := splitPartial(t, texts)
	assert.Equal(t, total, len(kept)+dropped, "every byte arrived or was counted")
}
