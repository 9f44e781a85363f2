package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// This file serves MCP tasks (see task.go for the wire): a tool whose
// spec allows background runs is listed with execution.taskSupport
// "optional", the server declares capabilities.tasks, and a tools/call
// with a task param runs the call in the background, through the same
// path as any served call (callTool), answered at once with the task.

// The bounds of the tasks a server keeps.
const (
	// maxRunningTasks bounds the tasks running for one client session.
	maxRunningTasks = 64
	// maxKeptTasks bounds the tasks a server keeps, running or ended:
	// the oldest ended task makes room for a new one.
	maxKeptTasks = 1024
	// defaultTaskTTL is how long an ended task is kept when the client
	// asks for no ttl; maxTaskTTL bounds what it may ask.
	defaultTaskTTL = 10 * time.Minute
	maxTaskTTL     = time.Hour
	// taskPollMillis is the pollInterval the server suggests.
	taskPollMillis = 250
	// taskCancelWait bounds the wait for a canceled task's call to
	// return before tasks/cancel is answered.
	taskCancelWait = 10 * time.Second
	// maxStatusMessage bounds a task's statusMessage.
	maxStatusMessage = 1 << 10
	// maxRequestBody bounds the body of an HTTP request read to find a
	// task param (see taskHandler).
	maxRequestBody = 16 << 20
)

// methodTaskCall is the custom method a tools/call with a task param is
// renamed to when it arrives (see renameTaskCall), since the SDK's own
// tools/call drops the param.
const methodTaskCall = "toolloop/tasks/call"

// serveTask is one task of a served call.
type serveTask struct {
	id      string
	owner   any // the session's ID, or the session if it has none
	created time.Time
	ttl     time.Duration
	cancel  context.CancelFunc
	done    chan struct{} // closed when the call has returned

	// Guarded by taskStore.mu.
	status  string
	message string
	updated time.Time
	ended   time.Time
	result  *sdk.CallToolResult
}

// taskStore holds a server's tasks, at most maxKeptTasks.
type taskStore struct {
	mu    sync.Mutex
	tasks map[string]*serveTask
	order []*serveTask // by creation
	runs  map[string]*serveTask
}

func taskOwner(ss *sdk.ServerSession) any {
	if id := ss.ID(); id != "" {
		return id
	}
	return ss
}

func (t *serveTask) info() taskInfo {
	ttl := t.ttl.Milliseconds()
	return taskInfo{
		TaskID: t.id, Status: t.status, TTL: &ttl,
		CreatedAt:     t.created.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
		PollInterval:  taskPollMillis, StatusMessage: t.message,
	}
}

// purge drops the ended tasks whose ttl has passed. st.mu must be held.
func (st *taskStore) purge(now time.Time) {
	kept := st.order[:0]
	for _, t := range st.order {
		if !t.ended.IsZero() && now.Sub(t.ended) > t.ttl {
			delete(st.tasks, t.id)
			continue
		}
		kept = append(kept, t)
	}
	clear(st.order[len(kept):])
	st.order = kept
}

// add keeps t, if the bounds allow.
func (st *taskStore) add(t *serveTask, runID string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.purge(t.created)
	running := 0
	for _, o := range st.order {
		if o.owner == t.owner && o.ended.IsZero() {
			running++
		}
	}
	if running >= maxRunningTasks {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("%d tasks are running for this session, the most the server runs; wait for one to end or cancel one", maxRunningTasks)}
	}
	if len(st.order) >= maxKeptTasks {
		i := 0
		for i < len(st.order) && st.order[i].ended.IsZero() {
			i++
		}
		if i == len(st.order) {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("the server runs %d tasks, the most it runs; try again later", maxKeptTasks)}
		}
		delete(st.tasks, st.order[i].id)
		st.order = append(st.order[:i], st.order[i+1:]...)
	}
	if st.tasks == nil {
		st.tasks, st.runs = map[string]*serveTask{}, map[string]*serveTask{}
	}
	st.tasks[t.id] = t
	st.runs[runID] = t
	st.order = append(st.order, t)
	return nil
}

// get returns the task id. A task's ID is the capability to it (it is
// unguessable), since a client on the stateless protocol of 2026-07-28
// has no session to tie it to.
func (st *taskStore) get(id string) (*serveTask, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.purge(time.Now())
	if t, ok := st.tasks[id]; ok {
		return t, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task not found: " + id}
}

func (st *taskStore) snapshot(t *serveTask) taskInfo {
	st.mu.Lock()
	defer st.mu.Unlock()
	return t.info()
}

// note records what the call of run reported while it runs, as its
// task's statusMessage.
func (st *taskStore) note(runID, text string) {
	text = strings.TrimSpace(text)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = strings.TrimSpace(text[i+1:])
	}
	if text == "" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if t, ok := st.runs[runID]; ok && t.ended.IsZero() && t.status == taskWorking {
		t.message = toolloop.TruncateText(text, maxStatusMessage)
		t.updated = time.Now()
	}
}

// finish records the call's result, unless the task was canceled.
func (st *taskStore) finish(t *serveTask, runID string, res *sdk.CallToolResult) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.runs, runID)
	now := time.Now()
	t.ended, t.updated = now, now
	if t.status == taskCancelled {
		t.result = canceledResult()
		return
	}
	t.result = res
	t.status = taskCompleted
	if res.IsError {
		t.status = taskFailed
		t.message = ""
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				t.message = toolloop.TruncateText(tc.Text, maxStatusMessage)
				break
			}
		}
	}
}

// cancelAll cancels every task, for Close.
func (st *taskStore) cancelAll() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, t := range st.order {
		t.cancel()
	}
}

// cancelOwned cancels the running tasks of a session that ended: no one
// can read their results.
func (st *taskStore) cancelOwned(owner any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, t := range st.order {
		if t.owner == owner && t.ended.IsZero() {
			t.status, t.message, t.updated = taskCancelled, "the client's session ended", time.Now()
			t.cancel()
		}
	}
}

// registerTasks declares the tasks methods to the SDK server.
func (s *Server) registerTasks() error {
	for _, err := range []error{
		sdk.AddReceivingCustomMethod(s.sdk, methodTaskCall, s.startTask),
		sdk.AddReceivingCustomMethod(s.sdk, methodTasksGet, s.getTask),
		sdk.AddReceivingCustomMethod(s.sdk, methodTasksResult, s.taskResult),
		sdk.AddReceivingCustomMethod(s.sdk, methodTasksCancel, s.cancelTask),
		sdk.AddReceivingCustomMethod(s.sdk, methodTasksList, s.listTasks),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// startTask starts a tools/call made as a task.
func (s *Server) startTask(ctx context.Context, ss *sdk.ServerSession, p *taskCallParams) (*createTaskResult, error) {
	background, ok := s.background(p.Name)
	switch {
	case !ok:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	case !background:
		// The protocol says -32601, which the SDK turns into its own
		// "method not found" naming the method as renamed.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q does not run as a task (its execution.taskSupport is forbidden)", p.Name)}
	}
	ttl := defaultTaskTTL
	if p.Task != nil && p.Task.TTL != nil && *p.Task.TTL > 0 {
		ttl = min(time.Duration(*p.Task.TTL)*time.Millisecond, maxTaskTTL)
	}
	now := time.Now()
	// The call outlives the request: its context is its own, ended by
	// tasks/cancel or Close.
	tctx, cancel := context.WithCancel(context.Background())
	t := &serveTask{
		id: rand.Text(), owner: taskOwner(ss), created: now, ttl: ttl, cancel: cancel,
		done: make(chan struct{}), status: taskWorking, updated: now,
	}
	runID, n := s.nextRun()
	if err := s.tasks.add(t, runID); err != nil {
		cancel()
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		s.tasks.finish(t, runID, canceledResult())
		close(t.done)
		return nil, ErrServerClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	req := &sdk.CallToolRequest{Session: ss, Params: &sdk.CallToolParamsRaw{Meta: p.Meta, Name: p.Name, Arguments: p.Arguments}}
	go func() {
		defer s.wg.Done()
		defer close(t.done)
		defer cancel()
		res := s.runCall(tctx, req, runID, n, true)
		s.tasks.finish(t, runID, res)
	}()
	info := s.tasks.snapshot(t)
	return &createTaskResult{Task: &info}, nil
}

// background reports whether the registry has the tool name, and whether
// it may run in the background.
func (s *Server) background(name string) (background, ok bool) {
	s.sync(context.Background())
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	for i := range s.specs {
		if s.specs[i].Name == name {
			return s.specs[i].Background, true
		}
	}
	return false, false
}

func (s *Server) getTask(_ context.Context, _ *sdk.ServerSession, p *taskIDParams) (*taskResult, error) {
	t, err := s.tasks.get(p.TaskID)
	if err != nil {
		return nil, err
	}
	return &taskResult{taskInfo: s.tasks.snapshot(t)}, nil
}

// taskResult answers tasks/result: it waits for the task to end, then
// sends the call's result.
func (s *Server) taskResult(ctx context.Context, _ *sdk.ServerSession, p *taskIDParams) (*sdk.CallToolResult, error) {
	t, err := s.tasks.get(p.TaskID)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.tasks.mu.Lock()
	res := t.result
	s.tasks.mu.Unlock()
	out := *res
	out.Meta = maps.Clone(res.Meta)
	if out.Meta == nil {
		out.Meta = sdk.Meta{}
	}
	out.Meta[metaRelatedTask] = map[string]any{"taskId": t.id}
	return &out, nil
}

// cancelTask answers tasks/cancel: it cancels the call's context and
// waits, at most taskCancelWait, for the call to return, so that nothing
// of it runs once the client is told it was canceled.
func (s *Server) cancelTask(ctx context.Context, _ *sdk.ServerSession, p *taskIDParams) (*taskResult, error) {
	t, err := s.tasks.get(p.TaskID)
	if err != nil {
		return nil, err
	}
	s.tasks.mu.Lock()
	if terminal(t.status) {
		status := t.status
		s.tasks.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "cannot cancel a task in terminal status " + status}
	}
	t.status, t.message, t.updated = taskCancelled, "the client canceled the task", time.Now()
	s.tasks.mu.Unlock()
	t.cancel()
	timer := time.NewTimer(taskCancelWait)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-timer.C:
		s.logger.Warn("mcp: serve: a canceled task's call did not return in time", "task", t.id, "wait", taskCancelWait)
	case <-ctx.Done():
	}
	return &taskResult{taskInfo: s.tasks.snapshot(t)}, nil
}

// listTasks answers tasks/list: the tasks of the client's session, in
// one page.
func (s *Server) listTasks(_ context.Context, ss *sdk.ServerSession, _ *listTasksParams) (*listTasksResult, error) {
	owner := taskOwner(ss)
	st := &s.tasks
	st.mu.Lock()
	defer st.mu.Unlock()
	st.purge(time.Now())
	out := &listTasksResult{Tasks: []taskInfo{}}
	for _, t := range st.order {
		if t.owner == owner {
			out.Tasks = append(out.Tasks, t.info())
		}
	}
	return out, nil
}

// tasksCapability is what the server declares of tasks.
var tasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// taskWire is a receiving middleware that adds to the SDK's answers what
// its types cannot hold: the tasks capability (initialize,
// server/discover), and execution.taskSupport "optional" for each tool
// that may run in the background (tools/list).
func (s *Server) taskWire(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil {
			return res, err
		}
		switch method {
		case "initialize", "server/discover":
			return patchResult(res, func(m map[string]json.RawMessage) error {
				var caps map[string]json.RawMessage
				if err := json.Unmarshal(m["capabilities"], &caps); err != nil || caps == nil {
					caps = map[string]json.RawMessage{}
				}
				caps["tasks"] = tasksCapability
				b, err := json.Marshal(caps)
				m["capabilities"] = b
				return err
			})
		case "tools/list":
			bg := s.backgroundTools()
			if len(bg) == 0 {
				return res, nil
			}
			return patchResult(res, func(m map[string]json.RawMessage) error {
				var tools []map[string]json.RawMessage
				if err := json.Unmarshal(m["tools"], &tools); err != nil {
					return err
				}
				for _, t := range tools {
					var name string
					if json.Unmarshal(t["name"], &name) == nil && bg[name] {
						t["execution"] = json.RawMessage(`{"taskSupport":"optional"}`)
					}
				}
				b, err := json.Marshal(tools)
				m["tools"] = b
				return err
			})
		}
		return res, nil
	}
}

func (s *Server) backgroundTools() map[string]bool {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	bg := map[string]bool{}
	for i := range s.specs {
		if s.specs[i].Background {
			bg[s.specs[i].Name] = true
		}
	}
	return bg
}

// rawResult is a result the SDK sends as it is: an SDK result with
// fields its type does not have. Its _meta is kept apart, as the SDK may
// add to it after the middleware.
type rawResult struct {
	sdk.ResultBase
	fields map[string]json.RawMessage
}

// MarshalJSON implements [json.Marshaler].
func (r *rawResult) MarshalJSON() ([]byte, error) {
	m := maps.Clone(r.fields)
	delete(m, "_meta")
	if len(r.Meta) > 0 {
		b, err := json.Marshal(r.Meta)
		if err != nil {
			return nil, err
		}
		m["_meta"] = b
	}
	return json.Marshal(m)
}

// patchResult returns res as a rawResult changed by edit; if it cannot,
// res as it is.
func patchResult(res sdk.Result, edit func(map[string]json.RawMessage) error) (sdk.Result, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return res, nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil || fields == nil || edit(fields) != nil {
		return res, nil
	}
	out := &rawResult{fields: fields}
	out.Meta = res.GetMeta()
	return out, nil
}

// renameTaskCall renames a tools/call with a task param to
// methodTaskCall, for startTask.
func renameTaskCall(req *jsonrpc.Request) bool {
	if req.Method != "tools/call" || !bytes.Contains(req.Params, []byte(`"task"`)) {
		return false
	}
	var p struct {
		Task json.RawMessage `json:"task"`
	}
	if json.Unmarshal(req.Params, &p) != nil || !isObject(p.Task) {
		return false
	}
	req.Method = methodTaskCall
	return true
}

// taskHandler is the streamable HTTP handler with tools/call requests
// that carry a task param renamed (see renameTaskCall): the SDK's
// handler decodes the body itself, so it is done on the body.
type taskHandler struct{ http.Handler }

func (h taskHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		h.Handler.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil || len(body) > maxRequestBody {
		// Leave the body, and its error, to the SDK's handler.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		h.Handler.ServeHTTP(w, r)
		return
	}
	if bytes.Contains(body, []byte(`"task"`)) {
		if msg, err := jsonrpc.DecodeMessage(body); err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && renameTaskCall(req) {
				if b, err := jsonrpc.EncodeMessage(req); err == nil {
					body = b
					if r.Header.Get("Mcp-Method") != "" {
						r.Header.Set("Mcp-Method", methodTaskCall)
					}
				}
			}
		}
	}
	r.Body = readCloser{bytes.NewReader(body), r.Body}
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	h.Handler.ServeHTTP(w, r)
}

type readCloser struct {
	io.Reader
	io.Closer
}
