package toolloop

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Tool is something the model can call.
//
// Spec is read when the tool is registered; its schema is compiled then and
// never again. Run is called only with arguments that are valid JSON and
// satisfy the schema, possibly from several goroutines at once (unless the
// spec says Exclusive), and must honour ctx. Run reports a failure the
// model should see either by returning an error (a *ToolError picks the
// kind; any other error is execution_failed) or by returning a result with
// StatusError. A tool that runs its work elsewhere (another process) and
// learns of a panic there may return an error with a method
// PanicStack() string; the stack goes to the completion event, never to
// the model. The loop fills in CallID, Name and Meta's provenance, so a
// tool need not. Use looptest.TestTool to check an implementation.
type Tool interface {
	Spec() ToolSpec
	Run(ctx context.Context, call *Call) (*ToolResult, error)
}

// ToolSpec describes a tool to the model and to the loop.
type ToolSpec struct {
	// Name is what the model calls the tool: 1 to 64 of a-z, A-Z, 0-9, _ and -.
	Name string `json:"name"`
	// Description is written for the model: what the tool does, when to use
	// it, and its limits.
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the arguments. It must describe an
	// object. Nil means an object with no constraints.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputSchema, if set, is the JSON Schema of the tool's structured
	// output (its JSON content block), as an MCP server declares it. It is
	// information for the program, guards and hooks: providers do not send
	// it to the model, and the loop does not check results against it. A
	// source that knows it validates what its tool returns (the mcp
	// package turns a result that violates it into an execution_failed
	// error).
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Annotations describe the tool's effects to guards.
	Annotations Annotations `json:"annotations,omitzero"`
	// Timeout overrides the loop's per-call timeout for this tool.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Exclusive marks a tool that must not run alongside other calls of the
	// same turn: the calls before it finish first, and the calls after it
	// wait for it.
	Exclusive bool `json:"exclusive,omitempty"`
	// Background lets the model run the tool as a background job: the
	// loop offers a boolean argument named [BackgroundArg] (added to the
	// schema the model sees unless the schema declares it, and taken out
	// of the arguments before validation if added), and a call that sets
	// it true is answered at once with the job's ID while the tool runs
	// on, under the run's context and Limits.Jobs (see [Job]). The tool
	// sees Call.Job set; what it reports with Call.ReportPartial is the
	// job's output. Exclusive and Timeout apply to the call that starts
	// the job, not to the job.
	Background bool `json:"background,omitempty"`
}

// Annotations describe what a tool does, so a [RuleGuard] can tell tools
// apart without knowing their names. They mirror MCP's tool annotations.
type Annotations struct {
	// Title is a human-readable name.
	Title string `json:"title,omitempty"`
	// ReadOnly: the tool changes nothing.
	ReadOnly bool `json:"read_only,omitempty"`
	// Destructive: the tool may delete or overwrite data, or run commands.
	Destructive bool `json:"destructive,omitempty"`
	// Idempotent: calling it twice with the same arguments does no more
	// than calling it once.
	Idempotent bool `json:"idempotent,omitempty"`
	// OpenWorld: the tool reaches outside the agent's own world (the web).
	OpenWorld bool `json:"open_world,omitempty"`
	// JudgmentRequired: a judgment guard should look at each call.
	JudgmentRequired bool `json:"judgment_required,omitempty"`
}

// Progress is a progress report from a running tool.
type Progress struct {
	Message string `json:"message,omitempty"`
	// Done and Total measure progress in the tool's own units; Total is 0
	// when unknown.
	Done  float64 `json:"done,omitempty"`
	Total float64 `json:"total,omitempty"`
}

// Reporter receives what a tool reports while it runs. The loop installs
// one that turns reports into [EventProgress] and [EventPartialResult]
// events; a plugin host installs one that forwards them across processes.
// Implementations must be safe for concurrent use.
type Reporter interface {
	ReportProgress(call *Call, p Progress)
	ReportPartial(call *Call, text string)
}

// Call is one tool call on its way through the pipeline. Guards and hooks
// see it before the tool does; the tool gets it in Run.
type Call struct {
	// ID is the model's tool call ID.
	ID string
	// Name is the tool's name.
	Name string
	// Arguments are the arguments as they stand at this stage: validated,
	// and rewritten by any guard or hook that modified them.
	Arguments json.RawMessage

	// Annotations, Source and SourceName describe the resolved tool.
	Annotations Annotations
	Source      SourceKind
	SourceName  string

	// RunID and Turn place the call in its run; Turn counts from 1.
	RunID string
	Turn  int

	// Reporter receives progress and partial output; nil discards them.
	Reporter Reporter

	// MaxOutputBytes is how much of the tool's output the loop keeps: the
	// loop cuts anything beyond it before the post-hooks run, and then
	// cuts the result to the model's budget. A tool or source that can
	// stop reading early (a process's output, a plugin's or server's
	// reply) should keep no more than this many bytes of text, so a tool
	// that produces gigabytes costs no more memory than the budget. The
	// loop sets it on every call (see Limits.MaxOutputBytes); 0, as
	// on a Call made by hand, means no limit was given.
	MaxOutputBytes int

	// Job is the ID of the background job the call runs as (see
	// ToolSpec.Background), or empty for a call in the foreground. The
	// model was told the job started; the tool's result, when it
	// returns, is the job's end. Its context ends when the job is
	// canceled, runs past Limits.Jobs.MaxDuration, or the run ends.
	Job string

	cr *callRun // the loop's call, for Inner
}

// Bind decodes the call's arguments into v.
func (c *Call) Bind(v any) error {
	if err := json.Unmarshal(c.Arguments, v); err != nil {
		return Errorf(KindInvalidArgs, "decoding arguments of %s: %v", c.Name, err)
	}
	return nil
}

// ReportProgress reports progress. It is safe to call from any goroutine,
// and does nothing once the call has completed.
func (c *Call) ReportProgress(p Progress) {
	if c.Reporter != nil {
		c.Reporter.ReportProgress(c, p)
	}
}

// ReportPartial reports a piece of output while the tool runs, such as a
// line a command printed. It is safe to call from any goroutine, and does
// nothing once the call has completed.
func (c *Call) ReportPartial(text string) {
	if c.Reporter != nil {
		c.Reporter.ReportPartial(c, text)
	}
}

// String returns the call in a form fit for logs.
func (c *Call) String() string { return fmt.Sprintf("%s(%s)#%s", c.Name, c.Arguments, c.ID) }
