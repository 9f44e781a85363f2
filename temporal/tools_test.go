package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// goldenFile is the part of a core golden scenario (../testdata/golden)
// these tests use: the input, the model's replies and the transcript the
// in-process loop produced.
type goldenFile struct {
	Input      []toolloop.Message           `json:"input"`
	Replies    []*toolloop.Response         `json:"replies"`
	Decisions  map[string]toolloop.Approval `json:"decisions,omitempty"`
	Transcript []toolloop.Message           `json:"transcript"`
}

func readGolden(t *testing.T, name string) *goldenFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name+".json"))
	require.NoError(t, err)
	var g goldenFile
	require.NoError(t, json.Unmarshal(b, &g))
	return &g
}

// turns are the golden file's replies as a script.
func (g *goldenFile) turns() []looptest.Turn {
	ts := make([]looptest.Turn, len(g.Replies))
	for i, r := range g.Replies {
		ts[i] = looptest.Turn{Reply: r}
	}
	return ts
}

// The tools of the core golden scenarios, as golden_test.go defines them:
// their output depends only on their arguments.

type pathIn struct {
	Path string `json:"path" jsonschema:"description=Workspace-relative file path."`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type slowIn struct {
	Label string `json:"label"`
	MS    int    `json:"ms" jsonschema:"minimum=0,maximum=10000"`
}

type writeIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

var files = map[string]string{
	"src/math.go": "func Divide(a, b int) int { return a / b }\n",
	"README.md":   "# demo\n",
	".env":        "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n",
}

func goldenTools() *toolloop.ToolRegistry {
	readFile := toolloop.NewTool("read_file", "Read a UTF-8 text file under the workspace.",
		func(_ context.Context, in pathIn) (any, error) {
			s, ok := files[in.Path]
			if !ok {
				return nil, errors.New("no such file: " + in.Path)
			}
			return s, nil
		})
	readFile.Annotations.ReadOnly = true
	writeFile := toolloop.NewTool("write_file", "Write a file under the workspace.",
		func(_ context.Context, in writeIn) (any, error) {
			return "wrote " + in.Path, nil
		})
	writeFile.Annotations.Destructive = true
	slow := toolloop.NewTool("slow", "Wait ms milliseconds, then return the label.",
		func(ctx context.Context, in slowIn) (any, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return in.Label, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	var reg toolloop.ToolRegistry
	reg.MustRegister(readFile, writeFile, slow,
		toolloop.NewTool("add", "Add two integers.", func(_ context.Context, in addIn) (any, error) {
			return map[string]int{"sum": in.A + in.B}, nil
		}),
		toolloop.NewTool("boom", "A tool with a bug.", func(context.Context, struct{}) (any, error) {
			var m map[string]int
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

// destructiveAsks is a guard that asks before any destructive tool runs.
var destructiveAsks = &toolloop.RuleGuard{Rules: []toolloop.Rule{
	{Name: "confirm-writes", Destructive: true, Decision: toolloop.Ask, Reason: "writes need a human"},
}}

// approveByPath approves writes except to paths under secret/.
var approveByPath = toolloop.ApproverFunc(func(_ context.Context, call *toolloop.Call, _ string) (toolloop.Approval, error) {
	var in writeIn
	_ = json.Unmarshal(call.Arguments, &in)
	if strings.HasPrefix(in.Path, "secret/") {
		return toolloop.Approval{Approved: false, Reason: "not under secret/"}, nil
	}
	return toolloop.Approval{Approved: true}, nil
})

var secretRE = regexp.MustCompile(`sk-[A-Za-z0-9-]{20,}`)

// goldenSetups configure the loop of each core golden scenario, as
// golden_test.go does.
var goldenSetups = map[string]func(l *toolloop.AgentLoop){
	"deny": func(l *toolloop.AgentLoop) {
		l.Guard = &toolloop.RuleGuard{Rules: []toolloop.Rule{
			{Name: "no-env", Tools: []string{"read_file"}, Decision: toolloop.Allow},
			{Name: "read-only", Destructive: true, Decision: toolloop.Deny, Reason: "this agent is read-only"},
		}}
	},
	"modify": func(l *toolloop.AgentLoop) {
		l.Guard = toolloop.GuardFunc(func(_ context.Context, c *toolloop.Call) toolloop.Verdict {
			var in slowIn
			_ = json.Unmarshal(c.Arguments, &in)
			if c.Name != "slow" || in.MS <= 5 {
				return toolloop.Verdict{Decision: toolloop.Allow}
			}
			in.MS = 5
			b, _ := json.Marshal(in)
			return toolloop.Verdict{Decision: toolloop.Modify, Arguments: b, Reason: "waits are capped at 5ms", Rule: "cap-wait"}
		})
	},
	"ask_with_approver":    func(l *toolloop.AgentLoop) { l.Guard, l.Approver = destructiveAsks, approveByPath },
	"ask_without_approver": func(l *toolloop.AgentLoop) { l.Guard = destructiveAsks },
	"timeout":              func(l *toolloop.AgentLoop) { l.ToolTimeout = 20 * time.Millisecond },
	"max_iterations":       func(l *toolloop.AgentLoop) { l.MaxIterations = 2 },
	"truncation":           func(l *toolloop.AgentLoop) { l.MaxResultBytes = 1024 },
	"repaired_arguments":   func(l *toolloop.AgentLoop) { l.Repair = toolloop.RepairArguments },
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

// flaky is a tool that fails its first failures calls, then succeeds. It
// counts every run.
type flaky struct {
	name     string
	ann      toolloop.Annotations
	failures int32
	runs     atomic.Int32
}

func (f *flaky) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: f.name, Description: "Fails at first, then works.", Annotations: f.ann}
}

func (f *flaky) Run(context.Context, *toolloop.Call) (*toolloop.ToolResult, error) {
	if n := f.runs.Add(1); n <= f.failures {
		return nil, errors.New("transient failure " + string(rune('0'+n)))
	}
	return toolloop.TextResult("done by " + f.name), nil
}

// progressTool reports progress and output, then waits until released or
// cancelled.
type progressTool struct {
	reported chan struct{} // closed once the reports are sent
	release  chan struct{}
	once     sync.Once
}

func newProgressTool() *progressTool {
	return &progressTool{reported: make(chan struct{}), release: make(chan struct{})}
}

func (p *progressTool) Spec() toolloop.ToolSpec {
	return toolloop.ToolSpec{Name: "build", Description: "Build the project, reporting progress.",
		Annotations: toolloop.Annotations{ReadOnly: true}}
}

func (p *progressTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	call.ReportProgress(toolloop.Progress{Message: "compiling", Done: 3, Total: 4})
	call.ReportPartial("ok  pkg/a\n")
	p.once.Do(func() { close(p.reported) })
	select {
	case <-p.release:
		return toolloop.TextResult("build ok"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
