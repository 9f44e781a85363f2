// Command sampleplugin is the plugin the tests of package plugin build
// and run: one tool for each behaviour they check.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"description=Text to echo back"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type slowIn struct {
	Steps   int `json:"steps" jsonschema:"minimum=1"`
	DelayMS int `json:"delay_ms,omitempty"`
}

type exitIn struct {
	Code int `json:"code"`
}

type hangIn struct {
	// Marker is a file the tool writes once its context is cancelled.
	Marker string `json:"marker"`
}

type failIn struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

type bigIn struct {
	Bytes int `json:"bytes"`
}

type floodIn struct {
	Bytes int `json:"bytes"`
	Chunk int `json:"chunk"`
}

type empty struct{}

func main() {
	if os.Getenv("SAMPLE_FOREIGN") != "" {
		// A go-plugin program speaking another protocol version.
		hs := wire.Handshake
		hs.ProtocolVersion = 99
		goplugin.Serve(&goplugin.ServeConfig{HandshakeConfig: hs, Plugins: goplugin.PluginSet{}})
		return
	}
	if os.Getenv("SAMPLE_OLD") != "" {
		serveOld()
		return
	}
	tools := []toolloop.Tool{
		toolloop.NewTool("echo", "Echo the text back.", func(_ context.Context, in echoIn) (any, error) {
			return "plugin: " + in.Text, nil
		}),
		toolloop.NewTool("add", "Add two integers.", func(_ context.Context, in addIn) (any, error) {
			return fmt.Sprint(in.A + in.B), nil
		}),
		&slowTool{},
		toolloop.NewTool("boom", "Panic.", func(context.Context, empty) (any, error) {
			panic("kaboom")
		}),
		toolloop.NewTool("exit", "Exit the plugin process.", func(_ context.Context, in exitIn) (any, error) {
			os.Exit(in.Code)
			return nil, nil
		}),
		toolloop.NewTool("hang", "Wait until cancelled.", func(ctx context.Context, in hangIn) (any, error) {
			<-ctx.Done()
			_ = os.WriteFile(in.Marker, []byte(ctx.Err().Error()), 0o600)
			return nil, ctx.Err()
		}),
		toolloop.NewTool("stuck", "Ignore cancellation and never return.", func(context.Context, empty) (any, error) {
			select {}
		}),
		toolloop.NewTool("fail", "Fail with the given error kind.", func(_ context.Context, in failIn) (any, error) {
			return nil, toolloop.Errorf(toolloop.ErrorKind(in.Kind), "%s", in.Message)
		}),
		toolloop.NewTool("pid", "Return the plugin's process ID.", func(context.Context, empty) (any, error) {
			return fmt.Sprint(os.Getpid()), nil
		}),
		toolloop.NewTool("big", "Return a long text.", func(_ context.Context, in bigIn) (any, error) {
			return strings.Repeat("x", in.Bytes-4) + " END", nil
		}),
		&floodTool{},
		toolloop.NewTool("print", "Write to standard output and error.", func(_ context.Context, in echoIn) (any, error) {
			fmt.Println("stdout: " + in.Text)
			fmt.Fprintln(os.Stderr, "stderr: "+in.Text)
			return nil, nil
		}),
	}
	// A tool that exists only while the file SAMPLE_EXTRA_FILE names does,
	// to test that a restarted plugin's new tool list is picked up.
	if f := os.Getenv("SAMPLE_EXTRA_FILE"); f != "" {
		if _, err := os.Stat(f); err == nil {
			tools = append(tools, toolloop.NewTool("extra", "A tool that came later.", func(context.Context, empty) (any, error) {
				return "extra", nil
			}))
		}
	}
	plugin.Serve(tools...)
}

// floodTool reports partial output as fast as it can: Bytes in all, in
// lines of Chunk bytes, each a run of one digit, cycling through 0-9.
type floodTool struct{}

func (*floodTool) Spec() toolloop.ToolSpec {
	schema, err := toolloop.SchemaFor[floodIn]()
	if err != nil {
		panic(err)
	}
	return toolloop.ToolSpec{Name: "flood", Description: "Report partial output as fast as possible.", InputSchema: schema}
}

func (*floodTool) Run(_ context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in floodIn
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	chunk := max(in.Chunk, 1)
	for i, sent := 0, 0; sent < in.Bytes; i++ {
		n := min(chunk, in.Bytes-sent)
		call.ReportPartial(strings.Repeat(string(rune('0'+i%10)), n-1) + "\n")
		sent += n
	}
	return toolloop.TextResult("flooded"), nil
}

// slowTool reports progress and partial output, as a hand-written Tool.
type slowTool struct{}

func (*slowTool) Spec() toolloop.ToolSpec {
	schema, err := toolloop.SchemaFor[slowIn]()
	if err != nil {
		panic(err)
	}
	return toolloop.ToolSpec{
		Name:        "slow",
		Description: "Work in steps, reporting each.",
		InputSchema: schema,
		Annotations: toolloop.Annotations{ReadOnly: true},
		Background:  true,
	}
}

func (*slowTool) Run(ctx context.Context, call *toolloop.Call) (*toolloop.ToolResult, error) {
	var in slowIn
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	for i := 1; i <= in.Steps; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(in.DelayMS) * time.Millisecond):
		}
		call.ReportProgress(toolloop.Progress{Message: fmt.Sprintf("step %d", i), Done: float64(i), Total: float64(in.Steps)})
		call.ReportPartial(fmt.Sprintf("line %d\n", i))
	}
	if call.Job != "" {
		return toolloop.TextResult(fmt.Sprintf("%d steps done as %s", in.Steps, call.Job)), nil
	}
	return toolloop.TextResult(fmt.Sprintf("%d steps done", in.Steps)), nil
}
