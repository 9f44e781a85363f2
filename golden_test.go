package toolloop_test

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/internal/golden"
	"github.com/toolloop/toolloop/looptest"
)

var update = flag.Bool("update", false, "rewrite the expected parts of golden files in testdata/")

// goldenFile is one scenario: the input script (written by hand) and the
// expected transcript and events (rewritten by -update).
type goldenFile struct {
	Description string               `json:"description"`
	Input       []toolloop.Message   `json:"input"`
	Replies     []*toolloop.Response `json:"replies"`
	// Decisions are the human decisions of a pause-and-resume scenario.
	Decisions  map[string]toolloop.Approval `json:"decisions,omitempty"`
	Transcript any                          `json:"transcript"`
	Events     any                          `json:"events"`
}

func readGolden(t *testing.T, name string) (*goldenFile, string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var g goldenFile
	require.NoError(t, json.Unmarshal(b, &g), path)
	golden.CompactReplies(g.Replies)
	return &g, path
}

// checkGolden compares a run with the golden file, or rewrites the file's
// expected parts with -update.
func checkGolden(t *testing.T, g *goldenFile, path string, msgs []toolloop.Message, events ...[]toolloop.Event) {
	t.Helper()
	looptest.AssertValid(t, msgs)
	gotT := looptest.Canonical(msgs)
	var all []any
	for _, phase := range events { // a paused run and its resumption
		all = append(all, canonicalEvents(msgs, phase).([]any)...)
	}
	gotE := looptest.Canonical(all)
	if *update {
		g.Transcript, g.Events = gotT, gotE
		b, err := json.MarshalIndent(g, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	assert.Equal(t, looptest.Canonical(g.Transcript), gotT, "transcript differs from %s (run with -update to accept)", path)
	assert.Equal(t, looptest.Canonical(g.Events), gotE, "events differ from %s (run with -update to accept)", path)
}

// canonicalEvents makes events comparable across runs: no times, run IDs,
// durations or stacks, and the events of parallel calls in call order.
func canonicalEvents(msgs []toolloop.Message, events []toolloop.Event) any {
	callIndex := map[string]int{}
	for _, m := range msgs {
		for i, tc := range m.ToolCalls {
			callIndex[tc.ID] = i
		}
	}
	type keyed struct {
		turn, group, seq int
		e                toolloop.Event
	}
	ks := make([]keyed, len(events))
	for i, e := range events {
		group := -1
		switch {
		case e.CallID != "":
			group = callIndex[e.CallID]
		case e.Type == toolloop.EventRunStart || e.Type == toolloop.EventTranscriptRepaired:
			group = -2
		case e.Type == toolloop.EventRunEnd || e.Type == toolloop.EventRunPaused:
			group = 1 << 30
		case e.Type == toolloop.EventTranscriptEdited || e.Type == toolloop.EventLimit ||
			e.Type == toolloop.EventUserMessage || e.Type == toolloop.EventRunInterrupted:
			// Between turns: after the turn's calls. A steering event is
			// emitted at the safe point before a model request and
			// carries the turn before it.
			group = 1 << 29
		}
		e.Time, e.RunID = time.Time{}, "run"
		if e.Stack != "" {
			e.Stack = "<stack>"
		}
		ks[i] = keyed{e.Turn, group, i, e}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.turn, b.turn), cmp.Compare(a.group, b.group), cmp.Compare(a.seq, b.seq))
	})
	out := make([]toolloop.Event, len(ks))
	for i, k := range ks {
		out[i] = k.e
	}
	return looptest.Canonical(out)
}

// The tools and set-ups of the scenarios live in internal/golden, shared
// with the temporal package's tests.
var (
	goldenTools     = golden.Tools
	destructiveAsks = golden.DestructiveAsks
)

func TestGolden(t *testing.T) {
	for _, tt := range golden.Scenarios {
		t.Run(tt.Name, func(t *testing.T) {
			g, path := readGolden(t, tt.Name)
			rec := &looptest.Recorder{}
			turns := make([]looptest.Turn, len(g.Replies))
			for i, r := range g.Replies {
				turns[i] = looptest.Turn{Reply: r}
			}
			loop := &toolloop.AgentLoop{Model: looptest.NewModel(t, turns...), Tools: goldenTools(), OnEvent: rec.Record}
			if setup := golden.Setups[tt.Name]; setup != nil {
				setup(loop)
			}
			res, err := loop.Run(context.Background(), g.Input)
			if tt.Err != nil {
				require.ErrorIs(t, err, tt.Err)
			} else {
				require.NoError(t, err)
			}
			require.NotNil(t, res)
			checkGolden(t, g, path, res.Messages, rec.Events())
		})
	}
}

// TestGoldenCancelMidTurn cancels the run while two calls are running:
// both get a canceled result and the transcript stays valid.
func TestGoldenCancelMidTurn(t *testing.T) {
	g, path := readGolden(t, "cancel_mid_turn")
	rec := &looptest.Recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var running sync.WaitGroup
	running.Add(2)
	reg := goldenTools()
	reg.MustRegister(toolloop.NewTool("block", "Wait until the run is cancelled.", func(ctx context.Context, _ struct{}) (any, error) {
		running.Done()
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	go func() {
		running.Wait() // both calls are inside their tool
		cancel()
	}()
	loop := &toolloop.AgentLoop{Model: looptest.NewModel(t, looptest.Turn{Reply: g.Replies[0]}), Tools: reg, OnEvent: rec.Record}
	res, err := loop.Run(ctx, g.Input)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, toolloop.StopAborted, res.StopReason)
	for _, r := range looptest.Results(res.Messages) {
		assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	}
	checkGolden(t, g, path, res.Messages, rec.Events())
}

// TestGoldenPauseResume pauses for approval, saves the state as JSON,
// resumes with the golden file's decisions, and checks that the transcript
// is the one a synchronous approver giving the same answers produces.
func TestGoldenPauseResume(t *testing.T) {
	for _, name := range []string{"pause_resume_approve", "pause_resume_deny", "pause_resume_mixed"} {
		t.Run(name, func(t *testing.T) {
			g, path := readGolden(t, name)
			turns := func() []looptest.Turn {
				ts := make([]looptest.Turn, len(g.Replies))
				for i, r := range g.Replies {
					ts[i] = looptest.Turn{Reply: r}
				}
				return ts
			}

			// The reference: an approver answering at once.
			direct := &toolloop.AgentLoop{
				Model: looptest.NewModel(t, turns()...), Tools: goldenTools(), Guard: destructiveAsks,
				Approver: toolloop.ApproverFunc(func(_ context.Context, c *toolloop.Call, _ string) (toolloop.Approval, error) {
					return g.Decisions[c.ID], nil
				}),
			}
			want, err := direct.Run(context.Background(), g.Input)
			require.NoError(t, err)

			// Pause, persist, resume.
			rec, rec2 := &looptest.Recorder{}, &looptest.Recorder{}
			model := looptest.NewModel(t, turns()...)
			paused := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), Guard: destructiveAsks, PauseForApproval: true, OnEvent: rec.Record}
			res, err := paused.Run(context.Background(), g.Input)
			require.ErrorIs(t, err, toolloop.ErrPaused)
			require.NotNil(t, res.Paused)
			saved, err := json.Marshal(res.Paused)
			require.NoError(t, err)

			var state toolloop.PauseState
			require.NoError(t, json.Unmarshal(saved, &state))
			resumed := &toolloop.AgentLoop{Model: model, Tools: goldenTools(), Guard: destructiveAsks, PauseForApproval: true, OnEvent: rec2.Record}
			got, err := resumed.Resume(context.Background(), &state, g.Decisions)
			require.NoError(t, err)

			looptest.AssertTranscript(t, want.Messages, got.Messages)
			assert.Equal(t, want.FinalText, got.FinalText)
			checkGolden(t, g, path, got.Messages, rec.Events(), rec2.Events())
		})
	}
}
