package toolloop_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/internal/golden"
	"github.com/toolloop/toolloop/looptest"
)

// steerGoldenFile is a golden file of a steered run: goldenFile's input
// script and expected transcript and events, and what the run returned
// besides (its error and the messages it did not deliver), all but the
// script rewritten by -update.
type steerGoldenFile struct {
	Description string               `json:"description"`
	Input       []toolloop.Message   `json:"input"`
	Replies     []*toolloop.Response `json:"replies"`
	Error       string               `json:"error"`
	StopReason  toolloop.StopReason  `json:"stop_reason"`
	Undelivered any                  `json:"undelivered"`
	Transcript  any                  `json:"transcript"`
	Events      any                  `json:"events"`
}

// steerGoldenIn is what a scenario steers with: its inbox, its model (to
// act while a turn streams), and the wait tool's starts and release.
type steerGoldenIn struct {
	in      *toolloop.Inbox
	model   *stepModel
	started chan string
	release chan struct{}
}

// TestGoldenInterrupt runs a golden transcript per interrupt mode (now,
// after the model, after the tools), each without and with Continue: the
// scenario sends its interrupt (and, but for after_model, a message) at a
// fixed point of the run, and the transcript, the events, the error and
// the messages returned undelivered are compared with
// testdata/golden/<name>.json (rewritten with -update). Every request the
// model was sent ends with a user or tool message.
func TestGoldenInterrupt(t *testing.T) {
	msg := func(s string) toolloop.Message { return toolloop.UserMessage(s) }
	tests := []struct {
		name  string
		err   error
		steer func(s *steerGoldenIn)
	}{
		{"interrupt_now", toolloop.ErrInterrupted, func(s *steerGoldenIn) {
			s.model.streamed = func(turn int) {
				if turn == 2 {
					s.in.Send(msg("Stop: summarize src/math.go instead."))
					s.in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow})
				}
			}
		}},
		{"interrupt_now_continue", nil, func(s *steerGoldenIn) {
			go func() {
				<-s.started
				<-s.started // both calls run
				s.in.Send(msg("Don't wait for them; tell me the plan instead."))
				s.in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow, Continue: true})
			}()
		}},
		{"interrupt_after_model", toolloop.ErrInterrupted, func(s *steerGoldenIn) {
			s.model.streamed = func(turn int) {
				if turn == 1 {
					s.in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterModel})
				}
			}
		}},
		{"interrupt_after_model_continue", nil, func(s *steerGoldenIn) {
			s.model.streamed = func(turn int) {
				if turn == 1 {
					s.in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterModel, Continue: true})
					s.in.Send(msg("Wait, don't write anything yet."))
				}
			}
		}},
		{"interrupt_after_tools", toolloop.ErrInterrupted, func(s *steerGoldenIn) {
			go func() {
				<-s.started
				s.in.Send(msg("Then stop; I will look at the build myself."))
				s.in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterTools})
				close(s.release)
			}()
		}},
		{"interrupt_after_tools_continue", nil, func(s *steerGoldenIn) {
			go func() {
				<-s.started
				s.in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptAfterTools, Continue: true})
				s.in.Send(msg("Skip the tests after the build."))
				close(s.release)
			}()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("testdata", "golden", tt.name+".json")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			var g steerGoldenFile
			require.NoError(t, json.Unmarshal(b, &g), path)
			golden.CompactReplies(g.Replies)

			s := &steerGoldenIn{in: &toolloop.Inbox{}, started: make(chan string, 4), release: make(chan struct{})}
			s.model = &stepModel{reply: func(turn int, _ *toolloop.Request) *toolloop.Response {
				if turn > len(g.Replies) {
					t.Errorf("the model was asked for turn %d; the script has %d", turn, len(g.Replies))
					return looptest.Text("no more")
				}
				return g.Replies[turn-1] // nil: streams "partial " and waits
			}}
			reg := golden.Tools()
			reg.MustRegister(toolloop.NewTool("wait", "Wait for a job to finish.", func(ctx context.Context, in struct {
				Job string `json:"job"`
			}) (any, error) {
				s.started <- in.Job
				select {
				case <-s.release:
					return in.Job + " finished", nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}))
			tt.steer(s)
			rec := &looptest.Recorder{}
			loop := &toolloop.AgentLoop{Model: s.model, Tools: reg, OnEvent: rec.Record}
			res, err := loop.Run(toolloop.WithInbox(context.Background(), s.in), g.Input)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
			} else {
				require.NoError(t, err)
			}
			require.NotNil(t, res)
			looptest.AssertValid(t, res.Messages)
			assertRequestsEndWithUser(t, s.model.requests())
			assert.Equal(t, len(g.Replies), len(s.model.requests()), "the model answered every turn of the script")
			assert.Zero(t, s.in.Len(), "nothing is left in the inbox")

			errText := ""
			if err != nil {
				errText = err.Error()
			}
			gotT, gotE := looptest.Canonical(res.Messages), canonicalEvents(res.Messages, rec.Events())
			gotU := looptest.Canonical(res.Undelivered)
			if *update {
				g.Error, g.StopReason, g.Undelivered, g.Transcript, g.Events = errText, res.StopReason, gotU, gotT, gotE
				out, err := json.MarshalIndent(g, "", "  ")
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, append(out, '\n'), 0o644))
				return
			}
			assert.Equal(t, g.Error, errText, "error differs from %s (run with -update to accept)", path)
			assert.Equal(t, g.StopReason, res.StopReason, "stop reason differs from %s (run with -update to accept)", path)
			assert.Equal(t, looptest.Canonical(g.Undelivered), gotU, "undelivered messages differ from %s (run with -update to accept)", path)
			assert.Equal(t, looptest.Canonical(g.Transcript), gotT, "transcript differs from %s (run with -update to accept)", path)
			assert.Equal(t, looptest.Canonical(g.Events), gotE, "events differ from %s (run with -update to accept)", path)
		})
	}
}
