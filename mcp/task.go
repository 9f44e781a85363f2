package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// This file holds the wire of MCP tasks, as the TypeScript SDK (1.32.2)
// speaks it: the experimental tasks of the 2025-11-25 protocol. A request
// with a "task" param is answered at once with a CreateTaskResult; the
// task is then read with tasks/get, its result fetched with tasks/result
// (which blocks until the task ends), and it is canceled with
// tasks/cancel. A server declares capabilities.tasks.requests.tools.call
// and marks each tool with execution.taskSupport.
//
// The Go SDK (v1.8.0) knows none of it: its types drop the "task" param,
// the CreateTaskResult's task, capabilities.tasks and a tool's execution.
// The tasks/* methods are the SDK's custom methods; what its types drop is
// read from the raw messages (see capture) and written by middleware (see
// serve_task.go).

// The methods and statuses of MCP tasks.
const (
	methodTasksGet    = "tasks/get"
	methodTasksResult = "tasks/result"
	methodTasksCancel = "tasks/cancel"
	methodTasksList   = "tasks/list"

	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"

	// metaRelatedTask is the _meta key that ties a message to a task.
	metaRelatedTask = "io.modelcontextprotocol/related-task"
)

func terminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// taskInfo is a task's state, as tasks/get and tasks/cancel answer it.
type taskInfo struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	// TTL is in milliseconds; null means unlimited, and the field must be
	// there.
	TTL           *int64 `json:"ttl"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
	StatusMessage string `json:"statusMessage,omitempty"`
}

// taskResult is the answer to tasks/get and tasks/cancel: the task's
// fields beside _meta.
type taskResult struct {
	sdk.ResultBase
	taskInfo
}

// createTaskResult answers a request made as a task.
type createTaskResult struct {
	sdk.ResultBase
	Task *taskInfo `json:"task"`
}

type taskIDParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

type listTasksParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listTasksResult struct {
	sdk.ResultBase
	Tasks      []taskInfo `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// taskParams asks that a request run as a task.
type taskParams struct {
	// TTL is how long, in milliseconds, the task is to be kept.
	TTL *int64 `json:"ttl,omitempty"`
}

// taskCallParams are the params of tools/call made as a task.
type taskCallParams struct {
	sdk.ParamsBase
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Task      *taskParams     `json:"task"`
}

// capture receives the raw answer to the request made under its context
// (see withCapture): the transport's wrapper (taskConn, or clipTransport
// for streamable HTTP) hands it the JSON-RPC response before the SDK
// decodes it, dropping what its types do not know.
type capture struct {
	mu     sync.Mutex
	result json.RawMessage
}

type captureKey struct{}

func withCapture(ctx context.Context, c *capture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

func captureOf(ctx context.Context) *capture {
	c, _ := ctx.Value(captureKey{}).(*capture)
	return c
}

// set records a response; only a result is kept.
func (c *capture) set(resp *jsonrpc.Response) {
	if resp.Error != nil || len(resp.Result) == 0 {
		return
	}
	c.mu.Lock()
	c.result = resp.Result
	c.mu.Unlock()
}

// raw returns what was captured, or nil.
func (c *capture) raw() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.result
}

// captureTransport wraps a client transport whose connections can be
// wrapped (stdio, SSE; not streamable HTTP, whose connection the SDK
// tells of the session through an unexported method, and which
// clipTransport serves instead) so that captures see their answers.
type captureTransport struct{ sdk.Transport }

func (t captureTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskConn{Connection: c, pending: map[jsonrpc.ID]*capture{}}, nil
}

// taskConn hands a capture the response to its request. Only requests
// made under a capture are tracked, and each until its answer or its
// context's end, so the map is as large as such requests in flight.
type taskConn struct {
	sdk.Connection
	mu      sync.Mutex
	pending map[jsonrpc.ID]*capture
}

func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if cp := captureOf(ctx); cp != nil {
			id := req.ID
			c.mu.Lock()
			c.pending[id] = cp
			c.mu.Unlock()
			context.AfterFunc(ctx, func() {
				c.mu.Lock()
				delete(c.pending, id)
				c.mu.Unlock()
			})
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		cp := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if cp != nil {
			cp.set(resp)
		}
	}
	return msg, err
}

// captureMessage hands a message read from an HTTP response (see
// clipTransport) to the capture of the request, if it is a response.
func captureMessage(cp *capture, msg []byte) {
	m, err := jsonrpc.DecodeMessage(msg)
	if resp, ok := m.(*jsonrpc.Response); ok && err == nil {
		cp.set(resp)
	}
}

// TaskError is the error of a call run as an MCP task (see
// [Source]) that the server ended without a result: the task failed, or
// the server canceled it. It wraps a [toolloop.ToolError] of kind
// execution_failed, which is what the loop reports to the model.
type TaskError struct {
	// Server is the server's name, Task the task's ID.
	Server, Task string
	// Status is the task's last status: "failed" or "cancelled".
	Status string
	// Message is the task's statusMessage, if any.
	Message string
	// Err is why its result could not be read, if it could not.
	Err error
}

// Error implements the error interface.
func (e *TaskError) Error() string { return e.toolError().Error() }

// Unwrap returns the [toolloop.ToolError] of the failure, and Err.
func (e *TaskError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.toolError()}
	}
	return []error{e.toolError(), e.Err}
}

func (e *TaskError) toolError() *toolloop.ToolError {
	what := "failed"
	if e.Status == taskCancelled {
		what = "was canceled by the server"
	}
	msg := fmt.Sprintf("the task %s of MCP server %q %s", e.Task, e.Server, what)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return toolloop.Errorf(toolloop.KindExecutionFailed, "%s", msg)
}

// Poll intervals: a server's pollInterval is honoured within these
// bounds; one that says none is polled every defaultPoll.
const (
	minPoll     = 100 * time.Millisecond
	maxPoll     = 5 * time.Second
	defaultPoll = time.Second
)

func pollInterval(ms int64) time.Duration {
	if ms <= 0 {
		return defaultPoll
	}
	return min(max(time.Duration(ms)*time.Millisecond, minPoll), maxPoll)
}
