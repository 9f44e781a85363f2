package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// MaxAgentDepth bounds how deeply agents used as tools may nest: a call
// to an [AgentTool] that would start the child of a child of ... more
// than this many levels down fails with kind denied instead, so that an
// agent given itself as a tool cannot recurse without end.
const MaxAgentDepth = 8

// AgentTool is an [AgentLoop] used as a [Tool] by another loop: a
// sub-agent with its own model, tools, guard and limits, to which the
// parent's model hands a task. Build one with [NewAgentTool] and register
// it like any tool; set its exported fields before registering it.
//
// A call runs the child loop on the task, and its result is the child's
// final text, or its answer as JSON when the child's loop has an Output
// format. The child's run is part of its parent's:
//
//   - Its events reach the parent's OnEvent and [AgentLoop.RunStream],
//     with the child's own RunID and Turn, and with Event.ParentRunID and
//     ParentCallID naming the parent's run and the call that started the
//     child (a grandchild's events name their own parent, the child).
//   - What it spends (its usage, cost and unpriced turns) is added to the
//     parent's [Accounting], and so counts against the parent's Budget,
//     when the call's result is appended (see ResultMeta.Spent).
//   - A child that pauses for approval (its loop has PauseForApproval)
//     pauses the parent. The parent's [PauseState] lists the calls the
//     child waits on in Pending, their IDs qualified by the parent's call
//     (see PendingCall.ParentCallID), and keeps the child's state in
//     Agents. Resuming the parent with a decision for each resumes the
//     child, once, and the child's result becomes the call's.
//   - Cancelling or interrupting the parent interrupts the child now
//     (see [InterruptNow]), through the call's context, and so does the
//     call's timeout (Timeout, or the parent's ToolTimeout), which bounds
//     each stretch of the child's run, to its end or its pause: the
//     child's model turn is cut short, keeping what it had streamed, and
//     its running calls are cancelled. The parent's inbox is not the
//     child's: messages sent to the parent reach the parent only.
//
// A child that ends with an error gives a failed result holding what it
// had written so far: kind timeout or canceled when the call's context
// ended (the call timed out, or the parent was cancelled), and
// execution_failed otherwise (its model failed, it reached a limit of its
// own). A panic in the child's model is such an error; a panicking tool of
// the child is the child's failed call, as in any run.
//
// The child's own OnEvent, if set, sees its events as well: leave it nil
// when the parent's OnEvent logs them. The child is run through its
// AgentLoop, which may serve many calls at once, so an AgentTool may too.
type AgentTool struct {
	// Loop is the child agent.
	Loop *AgentLoop
	// Instructions, if set, is the child's system message, sent before
	// its task.
	Instructions string
	// InputSchema is the JSON Schema of the tool's arguments; nil means
	// {"task": string}, the task in the model's words.
	InputSchema json.RawMessage
	// Prompt, if set, builds the child's input (after Instructions) from
	// the call, whose arguments are valid. Nil sends the "task" argument
	// as a user message, or, without one, the arguments as JSON. An error
	// fails the call: a *ToolError with its kind, any other with kind
	// invalid_args.
	Prompt func(call *Call) ([]Message, error)
	// Annotations, Timeout, Exclusive and Background go into the tool's
	// [ToolSpec]. An agent run as a background job cannot pause for
	// approval: a call its guard asks about ends the job with an error
	// saying so.
	Annotations Annotations
	Timeout     time.Duration
	Exclusive   bool
	Background  bool

	name, description string
}

// agentTaskSchema is an AgentTool's input schema by default.
var agentTaskSchema = json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","minLength":1,` +
	`"description":"The task, described in full: the agent knows nothing else of the conversation."}},` +
	`"required":["task"],"additionalProperties":false}`)

// NewAgentTool returns child as a tool of the given name and description
// (which tells the parent's model what the agent is for). It panics if
// child is nil: that is a mistake in the program.
func NewAgentTool(name, description string, child *AgentLoop) *AgentTool {
	if child == nil {
		panic("toolloop: NewAgentTool " + name + ": nil AgentLoop")
	}
	return &AgentTool{Loop: child, name: name, description: description}
}

// Spec implements [Tool].
func (a *AgentTool) Spec() ToolSpec {
	schema := a.InputSchema
	if len(schema) == 0 {
		schema = agentTaskSchema
	}
	return ToolSpec{
		Name: a.name, Description: a.description, InputSchema: schema,
		Annotations: a.Annotations, Timeout: a.Timeout, Exclusive: a.Exclusive, Background: a.Background,
	}
}

// agentDepthKey holds, in a call's context, how many agents used as tools
// the call runs under.
type agentDepthKey struct{}

// agentResumeKey holds, in the context of a resumed call to an agent
// whose run paused, the *agentResume that AgentTool.Run resumes.
type agentResumeKey struct{}

// agentResume is a paused child run to resume, with the decisions for the
// calls it waits on, by the child's own call IDs. runID and callID name
// the parent's call it is for, so that no other call (a tool of the child,
// which runs under the same context) takes it.
type agentResume struct {
	runID, callID string
	state         *PauseState
	decisions     map[string]Approval
}

// agentPaused is what AgentTool.Run returns when the child's run paused:
// the pipeline makes the call pending (see callRun.pausedCall).
type agentPaused struct{ state *PauseState }

func (e *agentPaused) Error() string { return "toolloop: the agent's run paused for approval" }

// asAgentPaused finds an *agentPaused in err's chain, without the
// allocation errors.As costs: every failing call goes through it.
func asAgentPaused(err error) *agentPaused {
	for ; err != nil; err = errors.Unwrap(err) {
		if ap, ok := err.(*agentPaused); ok && ap.state != nil {
			return ap
		}
	}
	return nil
}

// Run implements [Tool]: it runs the child on the call's task, or resumes
// its paused run when the parent's run resumes.
func (a *AgentTool) Run(ctx context.Context, call *Call) (*ToolResult, error) {
	depth, _ := ctx.Value(agentDepthKey{}).(int)
	if depth >= MaxAgentDepth {
		return nil, Errorf(KindDenied, "the agent %s was not started: agents used as tools are already nested %d deep, the most allowed", a.name, depth)
	}
	var sink func(Event)
	if cr, ok := call.Reporter.(*callRun); ok { // the parent's run is observed
		sink = cr.forward
	}
	r, _ := ctx.Value(agentResumeKey{}).(*agentResume)
	// The call's end (its run cancelled or interrupted, its client gone,
	// its timeout) interrupts the child now, so that the child's run
	// keeps what its model had streamed and records why it stopped.
	in := &Inbox{done: ctx}
	stop := context.AfterFunc(ctx, func() { in.Interrupt(Interrupt{Mode: InterruptNow}) })
	defer stop()
	cctx := WithInbox(context.WithValue(context.WithoutCancel(ctx), agentDepthKey{}, depth+1), in)
	var res *RunResult
	var err error
	if r != nil && r.runID == call.RunID && r.callID == call.ID {
		res, err = a.Loop.resume(cctx, r.state, r.decisions, sink)
	} else {
		msgs, perr := a.input(call)
		if perr != nil {
			return nil, perr
		}
		res, err = a.Loop.run(cctx, msgs, sink)
	}
	return a.result(ctx, res, err)
}

// input is the child's input transcript for a call.
func (a *AgentTool) input(call *Call) ([]Message, error) {
	var msgs []Message
	if a.Instructions != "" {
		msgs = append(msgs, SystemMessage(a.Instructions))
	}
	if a.Prompt != nil {
		more, err := a.Prompt(call)
		if err != nil {
			var te *ToolError
			if errors.As(err, &te) {
				return nil, te
			}
			return nil, Errorf(KindInvalidArgs, "the agent %s cannot take this task: %v", a.name, err)
		}
		return append(msgs, more...), nil
	}
	var in struct {
		Task string `json:"task"`
	}
	if json.Unmarshal(call.Arguments, &in) != nil || in.Task == "" {
		return append(msgs, UserMessage(string(call.Arguments))), nil
	}
	return append(msgs, UserMessage(in.Task)), nil
}

// result turns the child's run into the call's outcome.
func (a *AgentTool) result(ctx context.Context, res *RunResult, err error) (*ToolResult, error) {
	if res == nil { // the child's loop is set up wrong, or its state is
		return nil, Errorf(KindExecutionFailed, "the agent %s did not run: %v", a.name, err)
	}
	if errors.Is(err, ErrPaused) && res.Paused != nil {
		return nil, &agentPaused{state: res.Paused}
	}
	spent := res.Accounting
	var r *ToolResult
	switch {
	case err == nil && len(res.Output) > 0:
		// A child with an output format answers with its JSON.
		r = &ToolResult{Content: []Content{JSONContent(res.Output)}}
	case err == nil:
		r = TextResult(res.FinalText)
	default:
		kind := KindExecutionFailed
		if cerr := ctx.Err(); cerr != nil {
			kind = KindCanceled
			if errors.Is(cerr, context.DeadlineExceeded) {
				kind = KindTimeout
			}
		}
		msg := fmt.Sprintf("the agent %s stopped before it finished: %v", a.name, err)
		text := msg
		if res.FinalText != "" {
			text += "\n\nWhat it had written so far:\n" + res.FinalText
		}
		r = &ToolResult{Status: StatusError, Error: &ToolError{Kind: kind, Message: msg}, Content: []Content{TextContent(text)}}
	}
	r.Meta.Spent = &spent
	return r, nil
}

// forward passes an event of a child run (an agent this call runs, see
// AgentTool) to the observers of the call's run: tagged with the run and
// the call, unless it is a grandchild's, which names its own parent. Its
// run ID, turn and time stay the child's.
func (cr *callRun) forward(e Event) {
	if cr.answered() || cr.outer != nil && cr.outer.answered() {
		return // the coordinator answered for this call, or its program's
	}
	rn := cr.rn
	if e.ParentRunID == "" {
		e.ParentRunID, e.ParentCallID = rn.id, cr.tc.ID
	}
	rn.emitMu.Lock()
	defer rn.emitMu.Unlock()
	if rn.ended {
		return
	}
	if rn.l.OnEvent != nil {
		rn.onEvent(&e)
	}
	if rn.stream != nil {
		rn.stream(e)
	}
}
