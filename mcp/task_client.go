package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// taskCancelTimeout bounds the tasks/cancel a call whose context ended
// sends the server, before it returns.
const taskCancelTimeout = 5 * time.Second

// sessionTasks is what a server said of its tasks on one session: its
// capability (in the answer to initialize or server/discover), and each
// tool's execution.taskSupport (in its tool lists).
type sessionTasks struct {
	mu      sync.Mutex
	calls   bool              // capabilities.tasks.requests.tools.call
	support map[string]string // remote tool name → "optional", "required"
}

// taskSupport returns how the tool named remote runs as a task on the
// session: "optional", "required", or "" when it does not (the server
// did not declare tasks for tools/call, or the tool forbids them).
func (s *Source) taskSupport(cs *sdk.ClientSession, remote string) string {
	v, ok := s.tasks.Load(cs)
	if !ok {
		return ""
	}
	st := v.(*sessionTasks)
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.calls {
		return ""
	}
	switch ts := st.support[remote]; ts {
	case "optional", "required":
		return ts
	}
	return ""
}

// noteTasks reads what the raw answer to method says of tasks.
func (s *Source) noteTasks(cs *sdk.ClientSession, method string, raw json.RawMessage) {
	if raw == nil {
		return
	}
	v, _ := s.tasks.LoadOrStore(cs, &sessionTasks{support: map[string]string{}})
	st := v.(*sessionTasks)
	switch method {
	case "initialize", "server/discover":
		var r struct {
			Capabilities struct {
				Tasks *struct {
					Requests struct {
						Tools struct {
							Call json.RawMessage `json:"call"`
						} `json:"tools"`
					} `json:"requests"`
				} `json:"tasks"`
			} `json:"capabilities"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return
		}
		t := r.Capabilities.Tasks
		st.mu.Lock()
		st.calls = t != nil && isObject(t.Requests.Tools.Call)
		st.mu.Unlock()
	case "tools/list":
		var r struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return
		}
		st.mu.Lock()
		for _, t := range r.Tools {
			st.support[t.Name] = t.Execution.TaskSupport
		}
		st.mu.Unlock()
	}
}

// taskCallKey marks the context of a tools/call to be made as a task.
type taskCallKey struct{}

// taskMiddleware is the innermost of the source's sending middleware. It
// captures the raw answers to initialize, server/discover and tools/list,
// for what they say of tasks, and makes a tools/call whose context asks
// for it (see callTask) a task, capturing the CreateTaskResult that the
// SDK's CallToolResult cannot hold. Over a transport of the user's own
// (ServerConfig.Transport), nothing is captured, so no tool runs as a
// task.
func (s *Source) taskMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		cs, _ := req.GetSession().(*sdk.ClientSession)
		if cs == nil {
			return next(ctx, method, req)
		}
		switch method {
		case "initialize", "server/discover", "tools/list":
			cp := captureOf(ctx) // tools/list's, for its schemas (see toolPages)
			if cp == nil {
				cp = new(capture)
			}
			res, err := next(withCapture(ctx, cp), method, req)
			if err == nil {
				s.noteTasks(cs, method, cp.raw())
			}
			return res, err
		case "tools/call":
			cp, _ := ctx.Value(taskCallKey{}).(*capture)
			p, _ := req.GetParams().(*sdk.CallToolParams)
			if cp == nil || p == nil {
				break
			}
			args, err := json.Marshal(p.Arguments)
			if err != nil {
				return nil, err
			}
			tp := &taskCallParams{Name: p.Name, Arguments: args, Task: &taskParams{}}
			tp.Meta = p.Meta
			return next(withCapture(ctx, cp), method, &sdk.ClientRequest[*taskCallParams]{Session: cs, Params: tp})
		}
		return next(ctx, method, req)
	}
}

// asTask reports whether call runs as a task: it is a background job, or
// the tool requires tasks; and the session's server runs it as one.
func (s *Source) asTask(sess *session, remote string, call *toolloop.Call) bool {
	switch s.taskSupport(sess.cs, remote) {
	case "required":
		return true
	case "optional":
		return call.Job != ""
	}
	return false
}

// runTask makes the call as a task: tools/call with a task param, then
// tasks/get every pollInterval (within minPoll and maxPoll) until the
// task ends, each new statusMessage reported as progress and as a line
// of partial output, then tasks/result, converted as a call's result is.
// A server that answers with a plain result instead of a task has its
// result converted as such. When ctx ends, the server is sent
// tasks/cancel (at most taskCancelTimeout is spent on it) and ctx's error
// is returned; when the session ends, the call fails as a call does.
//
// sent reports that the tools/call was answered: an error then is
// classified already; otherwise it is the request's, for the caller to
// classify (and maybe send again, as a call).
func (s *Source) runTask(ctx context.Context, sess *session, remote string, call *toolloop.Call, params *sdk.CallToolParams, budget int, st *callState) (_ *toolloop.ToolResult, sent bool, _ error) {
	cp := new(capture)
	res, err := s.send(context.WithValue(ctx, taskCallKey{}, cp), sess, params, budget, st)
	if err != nil {
		return nil, false, err
	}
	var created createTaskResult
	if raw := cp.raw(); raw != nil {
		_ = json.Unmarshal(raw, &created)
	}
	if created.Task == nil || created.Task.TaskID == "" {
		if raw := cp.raw(); raw == nil && len(res.Content) == 0 && res.StructuredContent == nil {
			return nil, true, toolloop.Errorf(toolloop.KindExecutionFailed, "MCP server %q: the call to %q was made as a task, but its answer was not seen", s.name, remote)
		}
		s.checkOutput(remote, res)
		return toResult(res), true, nil
	}
	t := created.Task
	what := fmt.Sprintf("the task %s of %q", t.TaskID, remote)
	var last string
	report := func(t *taskInfo) {
		if m := t.StatusMessage; m != "" && m != last {
			last = m
			call.ReportProgress(toolloop.Progress{Message: m})
			call.ReportPartial(m + "\n")
		}
	}
	report(t)
	timer := time.NewTimer(pollInterval(t.PollInterval))
	defer timer.Stop()
	for !terminal(t.Status) && t.Status != taskInputRequired {
		select {
		case <-ctx.Done():
			s.cancelTask(sess, t.TaskID)
			return nil, true, ctx.Err()
		case <-sess.ctx.Done():
			return nil, true, s.callError(ctx, sess, what, context.Cause(sess.ctx), true)
		case <-timer.C:
		}
		got, err := taskRequest[*taskResult](ctx, sess, budget, methodTasksGet, t.TaskID)
		if err != nil {
			if ctx.Err() != nil {
				s.cancelTask(sess, t.TaskID)
			}
			return nil, true, s.callError(ctx, sess, what, err, false)
		}
		t = &got.taskInfo
		report(t)
		timer.Reset(pollInterval(t.PollInterval))
	}
	if t.Status == taskCancelled {
		return nil, true, &TaskError{Server: s.name, Task: t.TaskID, Status: t.Status, Message: t.StatusMessage}
	}
	// input_required: the server asks something of the client on the
	// stream of tasks/result, which blocks until the task ends.
	out, err := taskRequest[*sdk.CallToolResult](ctx, sess, budget, methodTasksResult, t.TaskID)
	if err != nil {
		if ctx.Err() != nil {
			s.cancelTask(sess, t.TaskID)
			return nil, true, ctx.Err()
		}
		if t.Status == taskFailed && !sess.ended() {
			return nil, true, &TaskError{Server: s.name, Task: t.TaskID, Status: t.Status, Message: t.StatusMessage, Err: err}
		}
		return nil, true, s.callError(ctx, sess, what, err, false)
	}
	if t.Status == taskFailed && !out.IsError {
		return nil, true, &TaskError{Server: s.name, Task: t.TaskID, Status: t.Status, Message: t.StatusMessage}
	}
	s.checkOutput(remote, out)
	r := toResult(out)
	r.Meta.Extra = map[string]any{"mcp_tool": remote, "mcp_task": t.TaskID}
	return r, true, nil
}

// taskRequest sends one of the tasks/* requests about the task id on
// sess, its answer cut to budget; it ends when the session does.
func taskRequest[R sdk.Result](ctx context.Context, sess *session, budget int, method, id string) (R, error) {
	if budget > 0 {
		ctx = withBudget(ctx, budget)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(sess.ctx, func() { cancel(context.Cause(sess.ctx)) })
	defer stop()
	return sdk.CallCustomMethod[*taskIDParams, R](cctx, sess.cs, method, &taskIDParams{TaskID: id})
}

// cancelTask asks the server to cancel a task, at most for
// taskCancelTimeout; a failure is logged, as the call is over anyway.
func (s *Source) cancelTask(sess *session, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), taskCancelTimeout)
	defer cancel()
	if _, err := taskRequest[*taskResult](ctx, sess, 0, methodTasksCancel, id); err != nil {
		s.logger.Info("mcp server did not cancel a task", "task", id, "err", err)
	}
}

// registerTaskMethods declares the tasks/* methods to the SDK client.
func registerTaskMethods(c *sdk.Client) error {
	for _, err := range []error{
		sdk.AddSendingCustomMethod[*taskIDParams, *taskResult](c, methodTasksGet),
		sdk.AddSendingCustomMethod[*taskIDParams, *sdk.CallToolResult](c, methodTasksResult),
		sdk.AddSendingCustomMethod[*taskIDParams, *taskResult](c, methodTasksCancel),
		sdk.AddSendingCustomMethod[*listTasksParams, *listTasksResult](c, methodTasksList),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
