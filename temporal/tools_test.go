package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/internal/golden"
	"github.com/toolloop/toolloop/looptest"
)

// goldenFile is the part of a core golden scenario (../testdata/golden)
// these tests use: the input, the model's replies and the transcript the
// in-process loop produced.
type goldenFile struct {
	Input      []toolloop.Message           `json:"input"`
	Replies    []*toolloop.Response         `json:"replies"`
	Decisions  map[string]toolloop.Approval `json:"decisions,omitempty"`
	Transcript []toolloop.Message           `json:"transcript"`
}

func readGolden(t *testing.T, name string) *goldenFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name+".json"))
	require.NoError(t, err)
	var g goldenFile
	require.NoError(t, json.Unmarshal(b, &g))
	golden.CompactReplies(g.Replies)
	return &g
}

// turns are the golden file's replies as a script.
func (g *goldenFile) turns() []looptest.Turn {
	ts := make([]looptest.Turn, len(g.Replies))
	for i, r := range g.Replies {
		ts[i] = looptest.Turn{Reply: r}
	}
	return ts
}

// The tools and set-ups of the core golden scenarios, shared with the
// root package's tests.
var (
	goldenTools     = golden.Tools
	goldenSetups    = golden.Setups
	destructiveAsks = golden.DestructiveAsks
)

// pathIn is read_file's input, used by other tools of these tests too.
type pathIn = golden.PathIn

// flaky is a tool that fails its first failures calls, then succeeds. It
// counts every run.
type flaky struct {
	name     string
	ann      toolloop.Annotations
	failures int32
	runs     atomic.Int32
}

func (f *flaky) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: f.name, Description: "Fails at first, then works.", Annotations: f.ann}
}

func (f *flaky) Run(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) {
	if n := f.runs.Add(1); n <= f.failures {
		return nil, errors.New("transient failure " + string(rune('0'+n)))
	}
	return toolloop.TextResult("done by " + f.name), nil
}

// progressTool reports progress and output, then waits until released or
// cancelled.
type progressTool struct {
	reported chan struct{} // closed once the reports are sent
	release  chan struct{}
	once     sync.Once
}

func newProgressTool() *progressTool {
	return &progressTool{reported: make(chan struct{}), release: make(chan struct{})}
}

func (p *progressTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "build", Description: "Build the project, reporting progress.",
		Annotations: toolloop.Annotations{ReadOnly: true}}
}

func (p *progressTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	call.ReportProgress(toolloop.Progress{Message: "compiling", Done: 3, Total: 4})
	call.ReportPartial("ok  pkg/a\n")
	p.once.Do(func() { close(p.reported) })
	select {
	case <-p.release:
		return toolloop.TextResult("build ok"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
