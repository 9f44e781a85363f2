package toolloop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status says whether a tool call succeeded.
type Status string

// The statuses of a [ToolResult].
const (
	StatusOK    Status = "ok"
	StatusError Status = "error"
)

// ErrorKind classifies a failed tool call. The model sees the message; code
// switches on the kind.
type ErrorKind string

// The error kinds. Every stage of the pipeline fails with one of these.
const (
	// KindNotFound: no source has a tool of that name.
	KindNotFound ErrorKind = "not_found"
	// KindInvalidArgs: the arguments are not JSON or break the schema.
	KindInvalidArgs ErrorKind = "invalid_args"
	// KindDenied: a guard, an approver or a hook refused the call.
	KindDenied ErrorKind = "denied"
	// KindTimeout: the call ran past its timeout.
	KindTimeout ErrorKind = "timeout"
	// KindCanceled: the run was cancelled or interrupted before the call
	// finished.
	KindCanceled ErrorKind = "canceled"
	// KindPanic: the tool or a hook panicked. The stack goes to the
	// completion event, never to the model.
	KindPanic ErrorKind = "panic"
	// KindExecutionFailed: the tool ran and failed.
	KindExecutionFailed ErrorKind = "execution_failed"
)

// ToolError is the error of a failed [ToolResult]. It is also an error a
// tool or hook may return to choose the kind of its failure: a tool that
// refuses a path returns &ToolError{Kind: KindDenied, Message: ...}.
type ToolError struct {
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
}

// Error implements the error interface.
func (e *ToolError) Error() string { return string(e.Kind) + ": " + e.Message }

// Errorf returns a *ToolError of the given kind.
func Errorf(kind ErrorKind, format string, args ...any) *ToolError {
	return &ToolError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// SourceKind is the kind of a tool [Source]. Kinds resolve in the order
// local, builtin, plugin, mcp (see [ToolRegistry]).
type SourceKind string

// The source kinds, in resolution order.
const (
	// SourceLocal: tools the program defines itself and adds with
	// [ToolRegistry.Register], in the source named [LocalSource].
	SourceLocal SourceKind = "local"
	// SourceBuiltin: tools that ship with toolloop, such as the builtin
	// package's workspace tools.
	SourceBuiltin SourceKind = "builtin"
	// SourcePlugin: tools served by a plugin process.
	SourcePlugin SourceKind = "plugin"
	// SourceMCP: tools of an MCP server.
	SourceMCP SourceKind = "mcp"
)

// ResultMeta is what the loop records about a result besides its content.
// It is not shown to the model.
type ResultMeta struct {
	// Bytes is the size of the content before truncation.
	Bytes int `json:"bytes"`
	// Truncated reports that the content was cut to the byte budget.
	Truncated bool `json:"truncated,omitempty"`
	// Cleared reports that a context manager replaced the content with a
	// stub, long after the call (see [ClearToolResults]).
	Cleared bool `json:"cleared,omitempty"`
	// MIMEType describes the content, when the tool knows it.
	MIMEType string `json:"mime,omitempty"`
	// Duration is how long the call took, from resolution to truncation.
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Source and SourceName are the provenance of the tool: its source's
	// kind and name (the MCP server or plugin).
	Source     SourceKind `json:"source,omitempty"`
	SourceName string     `json:"source_name,omitempty"`
	// Repairs lists the fixes the argument repairer made, if any.
	Repairs []string `json:"repairs,omitempty"`
	// Modified lists who rewrote the arguments (a guard verdict or a hook),
	// in order.
	Modified []string `json:"modified,omitempty"`
	// Synthesized: the call did not run; a [TurnProcessor] answered it.
	Synthesized bool `json:"synthesized,omitempty"`
	// LoadedTools, on a result of the tool search tool, names the
	// deferred tools it loaded: they are sent to the model from the next
	// turn on (see [AgentLoop.Deferred]).
	LoadedTools []string `json:"loaded_tools,omitempty"`
	// Unloaded: the call was to a deferred tool the model had not loaded
	// with the tool search tool. It ran as any other call.
	Unloaded bool `json:"unloaded,omitempty"`
	// Spent, on a result of an agent used as a tool (see [AgentTool]),
	// is what the agent's run spent. The loop adds its Usage, Cost and
	// UnpricedTurns to the run's [Accounting] when it appends the result.
	Spent *Accounting `json:"spent,omitempty"`
	// InnerCalls, on the result of a call whose tool made inner calls
	// (see [Inner]), counts those that went through the pipeline. The
	// loop adds them to Accounting.ToolCalls when it appends the result.
	InnerCalls int `json:"inner_calls,omitempty"`
	// Extra holds tool-specific facts, such as a shell command's exit code.
	Extra map[string]any `json:"extra,omitempty"`
}

// ToolResult is the one shape every tool call ends in, whatever its
// source. The loop sends Content to the model, marked as an error when
// Status is StatusError.
type ToolResult struct {
	CallID  string     `json:"call_id"`
	Name    string     `json:"name"`
	Status  Status     `json:"status"`
	Content []Content  `json:"content,omitempty"`
	Error   *ToolError `json:"error,omitempty"`
	Meta    ResultMeta `json:"meta"`
}

// Text returns the result as text, as the model is shown it: every block
// rendered by [Content.AsText], in order, a block that is not text
// starting on a new line; reasoning blocks are left out. A failed result
// whose content renders to nothing gives its error's message, as
// providers send. For results of text and JSON this is exactly the text
// the model sees; images, audio and binary resources, which providers
// pass to the model natively, give a short note in brackets.
func (r *ToolResult) Text() string {
	if len(r.Content) == 1 && r.Content[0].Type == ContentText {
		return r.Content[0].Text
	}
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == ContentReasoning {
			continue
		}
		if c.Type != ContentText && b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.AsText())
	}
	if b.Len() == 0 && r.Error != nil {
		return r.Error.Message
	}
	return b.String()
}

// AsText renders the block as text, the way providers render a block to
// a model that takes only text: a text block as its text, a JSON block as
// its JSON, a resource as its text when it is embedded. Any other block
// (an image, audio, a binary or unembedded resource) gives a note in
// brackets saying what it is, such as "[image (image/png, 5120 bytes)]"
// or "[resource file:///a.pdf (application/pdf, 0 bytes)]"; a reasoning
// block gives "".
func (c Content) AsText() string {
	switch c.Type {
	case ContentText:
		return c.Text
	case ContentJSON:
		return string(c.JSON)
	case ContentReasoning:
		return ""
	case ContentResource:
		if c.Text != "" {
			return c.Text
		}
		if c.URI != "" {
			return fmt.Sprintf("[resource %s (%s, %d bytes)]", c.URI, orUnknownType(c.MIMEType), len(c.Data))
		}
	case ContentImage:
		if c.URI != "" && len(c.Data) == 0 {
			return fmt.Sprintf("[image %s]", c.URI)
		}
	}
	return fmt.Sprintf("[%s (%s, %d bytes)]", c.Type, orUnknownType(c.MIMEType), len(c.Data))
}

func orUnknownType(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// IsError reports whether the call failed.
func (r *ToolResult) IsError() bool { return r.Status == StatusError }

// TextResult returns a successful result holding text.
func TextResult(text string) *ToolResult {
	return &ToolResult{Status: StatusOK, Content: []Content{TextContent(text)}}
}

// ErrorResult returns a failed result whose model-visible text is the
// error's message. A *ToolError in err's chain gives the kind; a context
// error gives timeout or canceled; anything else is execution_failed.
func ErrorResult(err error) *ToolResult {
	te := asToolError(err)
	return &ToolResult{
		Status:  StatusError,
		Content: []Content{TextContent(te.Message)},
		Error:   te,
	}
}

func errorResult(kind ErrorKind, format string, args ...any) *ToolResult {
	return ErrorResult(Errorf(kind, format, args...))
}

func asToolError(err error) *ToolError {
	var te *ToolError
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, context.DeadlineExceeded):
		return &ToolError{Kind: KindTimeout, Message: err.Error()}
	case errors.Is(err, context.Canceled):
		return &ToolError{Kind: KindCanceled, Message: err.Error()}
	default:
		return &ToolError{Kind: KindExecutionFailed, Message: err.Error()}
	}
}
