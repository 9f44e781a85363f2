// Package golden holds the fixtures of the core's golden transcripts
// (testdata/golden at the module's root): the tools the scripted models
// call and the loop set-up of each scenario. The root package's tests and
// the temporal package's tests both run the scenarios with them, so the
// two can never drift apart.
package golden

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
)

// PathIn is the input of read_file.
type PathIn struct {
	Path string `json:"path" jsonschema:"description=Workspace-relative file path."`
}

// AddIn is the input of add.
type AddIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// SlowIn is the input of slow.
type SlowIn struct {
	Label string `json:"label"`
	MS    int    `json:"ms" jsonschema:"minimum=0,maximum=10000"`
}

// WriteIn is the input of write_file.
type WriteIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Files are the files read_file knows.
var Files = map[string]string{
	"src/math.go": "func Divide(a, b int) int { return a / b }\n",
	"README.md":   "# demo\n",
	".env":        "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n",
}

// Tools returns a registry of the scenarios' tools. Their output depends
// only on their arguments.
func Tools() *toolloop.ToolRegistry {
	readFile := toolloop.NewTool("read_file", "Read a UTF-8 text file under the workspace.",
		func(_ context.Context, in PathIn) (any, error) {
			s, ok := Files[in.Path]
			if !ok {
				return nil, errors.New("no such file: " + in.Path)
			}
			return s, nil
		})
	readFile.Annotations.ReadOnly = true
	writeFile := toolloop.NewTool("write_file", "Write a file under the workspace.",
		func(_ context.Context, in WriteIn) (any, error) {
			return "wrote " + in.Path, nil
		})
	writeFile.Annotations.Destructive = true
	slow := toolloop.NewTool("slow", "Wait ms milliseconds, then return the label.",
		func(ctx context.Context, in SlowIn) (any, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return in.Label, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	var reg toolloop.ToolRegistry
	reg.MustRegister(readFile, writeFile, slow,
		toolloop.NewTool("add", "Add two integers.", func(_ context.Context, in AddIn) (any, error) {
			return map[string]int{"sum": in.A + in.B}, nil
		}),
		toolloop.NewTool("boom", "A tool with a bug.", func(context.Context, struct{}) (any, error) {
			var m map[string]int
			//lint:ignore SA5000 the bug is the point: a runtime panic, as real tools have
			m["x"] = 1 // panics: assignment to entry in nil map
			return nil, nil
		}),
		toolloop.NewTool("hang", "A tool that ignores nothing but never finishes.", func(ctx context.Context, _ struct{}) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}),
		toolloop.NewTool("big_log", "Print a long build log.", func(context.Context, struct{}) (any, error) {
			var b strings.Builder
			b.WriteString("build started\n")
			for i := range 4000 {
				b.WriteString("compiling unit ")
				b.WriteString(strings.Repeat("x", i%40))
				b.WriteString("\n")
			}
			b.WriteString("error: main.go:12: undefined: Divide\n")
			return b.String(), nil
		}),
	)
	return &reg
}

// Scenario names a golden file (testdata/golden/<Name>.json) whose run
// ends with Err (nil for none). Pause-and-resume and cancellation
// scenarios need their own drivers and are not listed.
type Scenario struct {
	Name string
	Err  error
	// Limit is the limit a run that ends with toolloop.ErrBudget reached.
	Limit toolloop.Limit
}

// LongRun are the golden files of context management, budgets and the
// failure policy. In their replies, null stands for a context-length
// error from the model (providers.ErrContextLength).
var LongRun = []Scenario{
	{Name: "clear_old_results"},
	{Name: "compact_threshold"},
	{Name: "compact_overflow"},
	{Name: "budget_output_tokens", Err: toolloop.ErrBudget, Limit: toolloop.LimitOutputTokens},
	{Name: "budget_output_tokens_wrap_up", Err: toolloop.ErrBudget, Limit: toolloop.LimitOutputTokens},
	{Name: "budget_tool_calls_wrap_up", Err: toolloop.ErrBudget, Limit: toolloop.LimitToolCalls},
	{Name: "budget_cost", Err: toolloop.ErrBudget, Limit: toolloop.LimitCost},
	{Name: "stop_when", Err: toolloop.ErrBudget, Limit: toolloop.LimitStopWhen},
	{Name: "max_iterations_wrap_up", Err: toolloop.ErrBudget, Limit: toolloop.LimitTurns},
	{Name: "failures_consecutive", Err: toolloop.ErrBudget, Limit: toolloop.LimitFailures},
	{Name: "failures_stop_on", Err: toolloop.ErrBudget, Limit: toolloop.LimitFailures},
}

// scriptedPrice is what the scenarios' model, scripted-1, costs: a dollar
// per thousand input tokens and two per thousand output tokens.
var scriptedPrice = toolloop.ModelTable{"scripted-1": {ContextWindow: 2000, Price: &toolloop.Price{Input: 1000, Output: 2000}}}

// Scenarios are the golden files a plain Run replays.
var Scenarios = []Scenario{
	{Name: "happy_path"},
	{Name: "unknown_tool"},
	{Name: "invalid_then_corrected"},
	{Name: "deny"},
	{Name: "modify"},
	{Name: "ask_with_approver"},
	{Name: "ask_without_approver"},
	{Name: "panic"},
	{Name: "timeout"},
	{Name: "parallel_out_of_order"},
	{Name: "max_iterations", Err: toolloop.ErrBudget, Limit: toolloop.LimitTurns},
	{Name: "truncation"},
	{Name: "hooks"},
	{Name: "repaired_arguments"},
	{Name: "interrupted_transcript"},
	{Name: "length_stop", Err: toolloop.ErrLength},
	{Name: "refusal"},
}

// DestructiveAsks is a guard that asks before any destructive tool runs.
var DestructiveAsks = &toolloop.RuleGuard{Rules: []toolloop.Rule{
	{Name: "confirm-writes", Destructive: true, Decision: toolloop.Ask, Reason: "writes need a human"},
}}

// UndeclaredAsks asks as DestructiveAsks does, but does not say that it
// may (it is no toolloop.Asker), so a loop with no Approver runs and
// denies the ask at run time; with DestructiveAsks itself, Run would
// refuse to start (ErrNoApprover).
var UndeclaredAsks = toolloop.GuardFunc(DestructiveAsks.Check)

// ApproveByPath approves writes except to paths under secret/.
var ApproveByPath = toolloop.ApproverFunc(func(_ context.Context, call *toolloop.Call, _ string) (toolloop.Approval, error) {
	var in WriteIn
	_ = json.Unmarshal(call.Arguments, &in)
	if strings.HasPrefix(in.Path, "secret/") {
		return toolloop.Approval{Approved: false, Reason: "not under secret/"}, nil
	}
	return toolloop.Approval{Approved: true}, nil
})

var secretRE = regexp.MustCompile(`sk-[A-Za-z0-9-]{20,}`)

// Setups configure the loop of the scenarios that need more than the
// tools, by scenario name.
var Setups = map[string]func(l *toolloop.AgentLoop){
	"deny": func(l *toolloop.AgentLoop) {
		l.Guard = &toolloop.RuleGuard{Rules: []toolloop.Rule{
			{Name: "no-env", Tools: []string{"read_file"}, Decision: toolloop.Allow},
			{Name: "read-only", Destructive: true, Decision: toolloop.Deny, Reason: "this agent is read-only"},
		}}
	},
	"modify": func(l *toolloop.AgentLoop) {
		l.Guard = toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			var in SlowIn
			_ = json.Unmarshal(c.Arguments, &in)
			if c.Name != "slow" || in.MS <= 5 {
				return toolloop.Verdict{Decision: toolloop.Allow}
			}
			in.MS = 5
			b, _ := json.Marshal(in)
			return toolloop.Verdict{Decision: toolloop.Modify, Arguments: b, Reason: "waits are capped at 5ms", Rule: "cap-wait"}
		})
	},
	"ask_with_approver":    func(l *toolloop.AgentLoop) { l.Guard, l.Approver = DestructiveAsks, ApproveByPath },
	"ask_without_approver": func(l *toolloop.AgentLoop) { l.Guard = UndeclaredAsks },
	"timeout":              func(l *toolloop.AgentLoop) { l.Limits.ToolTimeout = 20 * time.Millisecond },
	"max_iterations":       func(l *toolloop.AgentLoop) { l.Budget.MaxTurns = 2 },
	"truncation":           func(l *toolloop.AgentLoop) { l.Limits.MaxResultBytes = 1024 },
	"repaired_arguments":   func(l *toolloop.AgentLoop) { l.Repair = toolloop.RepairArguments },
	"clear_old_results": func(l *toolloop.AgentLoop) {
		l.Limits.MaxResultBytes = 1024
		l.ContextManagers = []toolloop.ContextManager{&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1}, KeepTurns: 1}}
	},
	"compact_threshold": func(l *toolloop.AgentLoop) {
		l.Limits.MaxResultBytes = 1024
		l.ModelTable = scriptedPrice
		l.ContextManagers = []toolloop.ContextManager{&toolloop.Compactor{
			When: toolloop.Threshold{Fraction: 0.5}, KeepTurns: 1,
			Pin: func(m toolloop.Message) bool { return strings.HasPrefix(m.Text(), "Remember:") },
		}}
	},
	"compact_overflow": func(l *toolloop.AgentLoop) {
		l.Limits.MaxResultBytes = 1024
		l.ContextManagers = []toolloop.ContextManager{&toolloop.Compactor{When: toolloop.Threshold{Tokens: 1 << 30}}}
	},
	"budget_output_tokens": func(l *toolloop.AgentLoop) { l.Budget.MaxOutputTokens = 50 },
	"budget_output_tokens_wrap_up": func(l *toolloop.AgentLoop) {
		l.Budget.MaxOutputTokens, l.Budget.WrapUp = 50, true
	},
	"budget_tool_calls_wrap_up": func(l *toolloop.AgentLoop) {
		l.Budget.MaxToolCalls, l.Budget.WrapUp = 3, true
	},
	"budget_cost": func(l *toolloop.AgentLoop) {
		l.ModelTable = scriptedPrice
		l.Budget.MaxCost = 0.25
	},
	"stop_when": func(l *toolloop.AgentLoop) {
		l.Budget.StopWhen = func(st toolloop.RunStatus) bool {
			// Stop once the model has read the file it was asked about.
			for _, m := range st.Messages {
				if m.Result != nil && m.Result.Name == "read_file" && m.Result.Status == toolloop.StatusOK {
					return true
				}
			}
			return false
		}
	},
	"max_iterations_wrap_up": func(l *toolloop.AgentLoop) { l.Budget.MaxTurns, l.Budget.WrapUp = 2, true },
	"failures_consecutive":   func(l *toolloop.AgentLoop) { l.Budget.MaxConsecutiveFailures = 3 },
	"failures_stop_on": func(l *toolloop.AgentLoop) {
		l.Budget.StopOnFailure = []toolloop.ErrorKind{toolloop.KindPanic}
	},
	"hooks": func(l *toolloop.AgentLoop) {
		l.Hooks.PreToolUse = []toolloop.PreToolUseHook{
			func(_ context.Context, c *toolloop.Call) (toolloop.PreToolUse, error) {
				if c.Name == "read_file" && strings.Contains(string(c.Arguments), ".env") {
					return toolloop.PreToolUse{Context: "This file holds credentials; never repeat them."}, nil
				}
				return toolloop.PreToolUse{}, nil
			},
		}
		l.Hooks.PostToolUse = []toolloop.PostToolUseHook{
			func(_ context.Context, _ *toolloop.Call, r *toolloop.ToolResult) (*toolloop.ToolResult, error) {
				out := *r
				out.Content = slices.Clone(r.Content)
				for i := range out.Content {
					out.Content[i].Text = secretRE.ReplaceAllString(out.Content[i].Text, "[REDACTED]")
				}
				return &out, nil
			},
		}
		l.Hooks.PostToolUseFailure = []toolloop.PostToolUseFailureHook{
			func(context.Context, *toolloop.Call, *toolloop.ToolResult) string {
				return "Use list_directory to see which files exist before reading."
			},
		}
	},
}
