package temporal_test

import (
	"context"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// stepModel answers each turn with its function, given the turn (from 1);
// it streams the reply's text in two halves first, and a function that
// returns nil streams "partial " and waits for its context instead. It
// is the core's steering test model.
type stepModel struct {
	mu    sync.Mutex
	turn  int
	reqs  [][]toolloop.Message
	reply func(turn int) *toolloop.Response
	// streamed, if set, is told when the model has streamed its first
	// half (or "partial ", for a turn that waits).
	streamed func(turn int)
}

func (m *stepModel) Generate(context.Context, *toolloop.Request) (*toolloop.Response, error) {
	return nil, errors.New("stepModel streams")
}

func (m *stepModel) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	m.mu.Lock()
	m.turn++
	n := m.turn
	m.reqs = append(m.reqs, append([]toolloop.Message(nil), req.Messages...))
	m.mu.Unlock()
	return func(yield func(toolloop.Chunk, error) bool) {
		resp := m.reply(n)
		if resp == nil {
			if !yield(toolloop.Chunk{Text: "partial "}, nil) {
				return
			}
			if m.streamed != nil {
				m.streamed(n)
			}
			<-ctx.Done()
			yield(toolloop.Chunk{}, ctx.Err())
			return
		}
		text := resp.Message.Text()
		if text != "" && !yield(toolloop.Chunk{Text: text[:len(text)/2]}, nil) {
			return
		}
		if m.streamed != nil {
			m.streamed(n)
		}
		if text != "" && !yield(toolloop.Chunk{Text: text[len(text)/2:]}, nil) {
			return
		}
		yield(toolloop.Chunk{Response: resp}, nil)
	}
}

// requests returns the transcripts the model was sent.
func (m *stepModel) requests() [][]toolloop.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reqs
}

// hold is a tool that tells when it starts and waits for its context or
// for release.
type hold struct {
	started chan string
	release chan struct{}
	ran     sync.Map
}

func newHold() *hold { return &hold{started: make(chan string, 16), release: make(chan struct{})} }

func (h *hold) registry() *toolloop.ToolRegistry {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("hold", "Wait.", func(ctx context.Context, in struct {
		ID string `json:"id"`
	}) (any, error) {
		h.ran.Store(in.ID, true)
		h.started <- in.ID
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.release:
			return "done " + in.ID, nil
		}
	}))
	return &reg
}

func holdCalls(ids ...string) *toolloop.Response {
	var calls []toolloop.ToolCall
	for _, id := range ids {
		calls = append(calls, looptest.Call(id, "hold", `{"id":"`+id+`"}`))
	}
	return looptest.Calls(calls...)
}

func userTexts(msgs []toolloop.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == toolloop.RoleUser {
			out = append(out, m.Text())
		}
	}
	return out
}

// steer signals messages of one origin to the workflow of env, as
// temporal.Steer and temporal.FollowUp do.
func steer(env *testsuite.TestWorkflowEnvironment, origin toolloop.Origin, texts ...string) {
	q := make([]toolloop.QueuedMessage, len(texts))
	for i, s := range texts {
		q[i] = toolloop.QueuedMessage{Origin: origin, Message: toolloop.UserMessage(s)}
	}
	env.SignalWorkflow(temporal.SteerSignal, q)
}

func task(s string) []toolloop.Message { return []toolloop.Message{toolloop.UserMessage(s)} }

// TestSteerDeliveredBeforeNextTurn: messages signalled while a call runs
// are delivered after its result, before the next model turn, in order,
// once; a message with no content is dropped.
func TestSteerDeliveredBeforeNextTurn(t *testing.T) {
	h := newHold()
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		if turn == 1 {
			return holdCalls("c1")
		}
		return looptest.Text("ok")
	}}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry()}})
	go func() {
		<-h.started
		steer(env, toolloop.OriginSteer, "use staging", "not prod")
		env.SignalWorkflow(temporal.SteerSignal, []toolloop.QueuedMessage{{Message: toolloop.Message{Role: toolloop.RoleUser}}})
		close(h.release)
	}()
	res, err := run(t, env, "", task("deploy"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	reqs := m.requests()
	require.Len(t, reqs, 2)
	second := reqs[1]
	require.Len(t, second, 5)
	assert.Equal(t, []string{"deploy", "use staging", "not prod"}, userTexts(second))
	assert.Equal(t, toolloop.RoleTool, second[2].Role, "after the call's result")
	assert.Equal(t, toolloop.RoleUser, second[3].Role)
	assert.Equal(t, []string{"deploy", "use staging", "not prod"}, userTexts(res.Messages), "delivered once")
	assert.Empty(t, res.Undelivered)
	assert.Equal(t, "ok", res.FinalText)
}

// TestFollowUpWaitsForTheEnd: a follow-up waits for the model's final
// answer, then the run goes on with it; a steering message sent with it
// is delivered at the next turn.
func TestFollowUpWaitsForTheEnd(t *testing.T) {
	h := newHold()
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		switch turn {
		case 1:
			return holdCalls("c1")
		case 2:
			return holdCalls("c2")
		case 3:
			return looptest.Text("done")
		}
		return looptest.Text("and then this")
	}}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry()}})
	go func() {
		<-h.started
		steer(env, toolloop.OriginFollowUp, "later")
		steer(env, toolloop.OriginSteer, "now")
		h.release <- struct{}{}
		<-h.started
		h.release <- struct{}{}
	}()
	res, err := run(t, env, "", task("task"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	reqs := m.requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []string{"task", "now"}, userTexts(reqs[1]))
	assert.Equal(t, []string{"task", "now"}, userTexts(reqs[2]))
	assert.Equal(t, []string{"task", "now", "later"}, userTexts(reqs[3]))
	assert.Equal(t, "and then this", res.FinalText)
	assert.Equal(t, 4, res.Turns)
}

// TestInterruptNowCancelsRunningCalls: an interrupt now cancels the
// running call activities, each call gets a canceled result, and the run
// ends with ErrInterrupted, returning the message it did not deliver.
func TestInterruptNowCancelsRunningCalls(t *testing.T) {
	h := newHold()
	m := &stepModel{reply: func(int) *toolloop.Response { return holdCalls("c1", "c2") }}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry()},
		HeartbeatTimeout: 200 * time.Millisecond})
	go func() {
		<-h.started
		<-h.started
		steer(env, toolloop.OriginSteer, "try another way")
		env.SignalWorkflow(temporal.InterruptSignal, toolloop.Interrupt{})
	}()
	res, err := run(t, env, "", task("task"))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	require.NotNil(t, res)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, toolloop.StopInterrupted, res.StopReason)
	results := looptest.Results(res.Messages)
	require.Len(t, results, 2)
	for id, r := range results {
		require.NotNil(t, r.Error, id)
		assert.Equal(t, toolloop.KindCanceled, r.Error.Kind, id)
		assert.Contains(t, r.Text(), "interrupted", id)
	}
	require.Len(t, res.Undelivered, 1)
	assert.Equal(t, "try another way", res.Undelivered[0].Text())
	assert.Equal(t, 1, res.Turns)
	assert.Len(t, m.requests(), 1)
}

// TestInterruptNowDuringModel: an interrupt now cancels the model turn;
// with Continue the run goes on with the queued message, without it the
// run ends and returns the message. (The test environment drops a
// cancelled activity's details, so the streamed text the workflow keeps
// on a server, TestIntegrationSteer, is not kept here.)
func TestInterruptNowDuringModel(t *testing.T) {
	for _, cont := range []bool{false, true} {
		t.Run(map[bool]string{false: "end", true: "continue"}[cont], func(t *testing.T) {
			var env *testsuite.TestWorkflowEnvironment
			m := &stepModel{reply: func(turn int) *toolloop.Response {
				if turn == 1 {
					return nil // streams "partial " and waits
				}
				return looptest.Text("redirected")
			}}
			m.streamed = func(turn int) {
				if turn == 1 {
					steer(env, toolloop.OriginSteer, "stop, do this instead")
					env.SignalWorkflow(temporal.InterruptSignal, toolloop.Interrupt{Mode: toolloop.InterruptNow, Continue: cont})
				}
			}
			env = newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m}, HeartbeatTimeout: 200 * time.Millisecond})
			res, err := run(t, env, "", task("task"))
			require.NotNil(t, res)
			looptest.AssertValid(t, res.Messages)
			if !cont {
				require.ErrorIs(t, err, toolloop.ErrInterrupted)
				assert.Equal(t, toolloop.StopInterrupted, res.StopReason)
				require.Len(t, res.Undelivered, 1)
				assert.Equal(t, "stop, do this instead", res.Undelivered[0].Text())
				assert.Equal(t, 1, res.Turns)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "redirected", res.FinalText)
			assert.Equal(t, []string{"task", "stop, do this instead"}, userTexts(res.Messages))
			assert.Empty(t, res.Undelivered)
			assert.Equal(t, 2, res.Turns)
		})
	}
}

// TestInterruptAfterModelRunsNoCall: an interrupt after the model turn
// lets the turn finish and runs none of its calls; with Continue the run
// goes on with the queued message.
func TestInterruptAfterModelRunsNoCall(t *testing.T) {
	h := newHold()
	var env *testsuite.TestWorkflowEnvironment
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		if turn == 1 {
			resp := holdCalls("c1", "c2")
			resp.Message.Content = []toolloop.Content{toolloop.TextContent("calling")}
			return resp
		}
		return looptest.Text("fine")
	}}
	m.streamed = func(turn int) {
		if turn == 1 {
			env.SignalWorkflow(temporal.InterruptSignal, toolloop.Interrupt{Mode: toolloop.InterruptAfterModel, Continue: true})
			steer(env, toolloop.OriginSteer, "never mind")
		}
	}
	env = newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry()}})
	res, err := run(t, env, "", task("task"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	results := looptest.Results(res.Messages)
	for _, id := range []string{"c1", "c2"} {
		_, ran := h.ran.Load(id)
		assert.False(t, ran, id)
		assert.Equal(t, "not run: the run was interrupted before this call started", results[id].Text())
	}
	assert.Equal(t, "calling", res.Messages[1].Text(), "the model's turn was finished")
	assert.Equal(t, []string{"task", "never mind"}, userTexts(res.Messages))
	assert.Equal(t, "fine", res.FinalText)
}

// TestInterruptAfterToolsLetsCallsFinish: the turn's calls finish, and
// the run stops before the next model turn.
func TestInterruptAfterToolsLetsCallsFinish(t *testing.T) {
	h := newHold()
	m := &stepModel{reply: func(int) *toolloop.Response { return holdCalls("c1") }}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry()}})
	go func() {
		<-h.started
		env.SignalWorkflow(temporal.InterruptSignal, toolloop.Interrupt{Mode: toolloop.InterruptAfterTools})
		close(h.release)
	}()
	res, err := run(t, env, "", task("task"))
	require.ErrorIs(t, err, toolloop.ErrInterrupted)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "done c1", looptest.Results(res.Messages)["c1"].Text())
	assert.Len(t, m.requests(), 1)
	assert.Equal(t, toolloop.StopInterrupted, res.StopReason)
}

// TestInterruptWhileAwaitingApproval: an interrupt after the model turn
// answers a call that waits for approval as not run, instead of waiting
// for a decision that no longer matters.
func TestInterruptWhileAwaitingApproval(t *testing.T) {
	var runs atomic.Int32
	del := toolloop.NewTool("delete_file", "Delete a file.", func(context.Context, pathIn) (any, error) {
		runs.Add(1)
		return "deleted", nil
	})
	del.Annotations.Destructive = true
	var reg toolloop.ToolRegistry
	reg.MustRegister(del)
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("call_1", "delete_file", `{"path":"old.txt"}`))},
		looptest.Turn{Reply: looptest.Text("Kept it.")})
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: model, Tools: &reg, Guard: destructiveAsks, PauseForApproval: true}})
	env.RegisterDelayedCallback(func() {
		steer(env, toolloop.OriginSteer, "keep the file")
		env.SignalWorkflow(temporal.InterruptSignal, toolloop.Interrupt{Mode: toolloop.InterruptAfterModel, Continue: true})
	}, time.Hour)
	res, err := run(t, env, "", task("delete old.txt"))
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	assert.Zero(t, runs.Load())
	r := looptest.Results(res.Messages)["call_1"]
	require.NotNil(t, r.Error)
	assert.Equal(t, toolloop.KindCanceled, r.Error.Kind)
	assert.Contains(t, r.Text(), "interrupted while this call waited for approval")
	assert.Equal(t, []string{"delete old.txt", "keep the file"}, userTexts(res.Messages))
	assert.Equal(t, "Kept it.", res.FinalText)
}

// TestUndeliveredOnLimit: a run that reaches a limit returns the messages
// it did not deliver.
func TestUndeliveredOnLimit(t *testing.T) {
	h := newHold()
	m := &stepModel{reply: func(int) *toolloop.Response { return holdCalls("c1") }}
	env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry(), Budget: toolloop.Budget{MaxTurns: 1}}})
	go func() {
		<-h.started
		steer(env, toolloop.OriginSteer, "too late")
		steer(env, toolloop.OriginFollowUp, "and this")
		close(h.release)
	}()
	res, err := run(t, env, "", task("task"))
	require.ErrorIs(t, err, toolloop.ErrBudget)
	require.NotNil(t, res)
	assert.Equal(t, []string{"too late", "and this"}, userTexts(res.Undelivered))
	assert.Equal(t, []string{"task"}, userTexts(res.Messages))
}

// TestSteerAcrossContinueAsNew: a follow-up queued in one execution is
// carried into the next when the run continues as new, and delivered
// there once, at the end of the run.
func TestSteerAcrossContinueAsNew(t *testing.T) {
	h := newHold()
	m := &stepModel{reply: func(turn int) *toolloop.Response {
		switch turn {
		case 1:
			return holdCalls("c1")
		case 2:
			return looptest.Text("first answer")
		}
		return looptest.Text("second answer")
	}}
	a := temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry()}, MaxTurnsPerExecution: 1}
	env := newEnv(t, a)
	go func() {
		<-h.started
		steer(env, toolloop.OriginFollowUp, "later")
		steer(env, toolloop.OriginSteer, "now")
		close(h.release)
	}()
	env.ExecuteWorkflow(temporal.DefaultName, temporal.Input{Messages: task("task")})
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var in temporal.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
	assert.Equal(t, []string{"task", "now"}, userTexts(in.Messages), "the steering message is delivered before continuing")

	res, execs, err := runChain(t, a, in)
	require.NoError(t, err)
	assert.Equal(t, 2, execs)
	looptest.AssertValid(t, res.Messages)
	reqs := m.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"task", "now"}, userTexts(reqs[1]))
	assert.Equal(t, []string{"task", "now", "later"}, userTexts(reqs[2]))
	assert.Equal(t, "second answer", res.FinalText)
	assert.Empty(t, res.Undelivered)
}

// TestInterruptDuringCalls: with one call at a time, an interrupt that
// comes while the first call runs stops the second from starting. Now
// cancels the running call; after the model turn lets it finish.
func TestInterruptDuringCalls(t *testing.T) {
	for _, tt := range []struct {
		mode        toolloop.InterruptMode
		first, next string
	}{
		{toolloop.InterruptNow, "tool hold was canceled: the run was interrupted while it ran",
			"not run: the run was canceled before this call started (the run was interrupted)"},
		{toolloop.InterruptAfterModel, "done c1", "not run: the run was interrupted before this call started"},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			h := newHold()
			m := &stepModel{reply: func(int) *toolloop.Response { return holdCalls("c1", "c2") }}
			env := newEnv(t, temporal.Agent{Loop: &toolloop.AgentLoop{Model: m, Tools: h.registry(), Limits: toolloop.Limits{MaxConcurrency: 1}},
				HeartbeatTimeout: 200 * time.Millisecond})
			go func() {
				<-h.started
				env.SignalWorkflow(temporal.InterruptSignal, toolloop.Interrupt{Mode: tt.mode})
				if tt.mode == toolloop.InterruptAfterModel {
					close(h.release)
				}
			}()
			res, err := run(t, env, "", task("task"))
			require.ErrorIs(t, err, toolloop.ErrInterrupted)
			looptest.AssertValid(t, res.Messages)
			results := looptest.Results(res.Messages)
			assert.Equal(t, tt.first, results["c1"].Text())
			assert.Equal(t, tt.next, results["c2"].Text())
			_, ran := h.ran.Load("c2")
			assert.False(t, ran)
			assert.Len(t, m.requests(), 1)
		})
	}
}
