package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
)

// TimeoutError is the error of a server that did not finish starting (or
// listing its tools) within [Options.ConnectTimeout]. It is errors.Is
// [context.DeadlineExceeded].
type TimeoutError struct {
	// Server is the server's name.
	Server string
	// What it did not do: "finish starting" or "list its tools".
	What string
	// Limit is the time it had.
	Limit time.Duration
	// Stderr is the last lines a stdio server wrote to its stderr, if any
	// (see [Options.Logger]).
	Stderr []string
}

// Error implements the error interface.
func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("server %q did not %s within %v (Options.ConnectTimeout)", e.Server, e.What, e.Limit)
	return msg + stderrNote(e.Stderr)
}

// Unwrap returns [context.DeadlineExceeded].
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// ConnectionLostError is the error of a request whose connection to the
// server was lost: a stdio server's process exited, a remote server went
// away or forgot the session. The next call starts a new session (see
// [Source]). It wraps the cause, and a [toolloop.ToolError] of kind
// execution_failed, which is what the loop reports to the model.
type ConnectionLostError struct {
	// Server is the server's name.
	Server string
	// During says what was under way, such as `the call to "echo"`.
	During string
	// Err is what the transport reported, or nil.
	Err error
}

// Error implements the error interface.
func (e *ConnectionLostError) Error() string { return e.toolError().Error() }

// Unwrap returns the cause and the [toolloop.ToolError] of the failure.
func (e *ConnectionLostError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.toolError()}
	}
	return []error{e.toolError(), e.Err}
}

func (e *ConnectionLostError) toolError() *toolloop.ToolError {
	detail := ""
	if e.Err != nil {
		detail = " (" + e.Err.Error() + ")"
	}
	return toolloop.Errorf(toolloop.KindExecutionFailed,
		"the connection to MCP server %q was lost during %s%s; the next call reconnects", e.Server, e.During, detail)
}

// stderrNote renders the last lines of a server's stderr for an error.
func stderrNote(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return "; its stderr ended with:\n\t" + strings.Join(lines, "\n\t")
}
