package toolloop_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// A tool that allows background runs (FuncTool.Background, or
// ToolSpec.Background for a Tool of your own) gets a "background"
// argument; a call that sets it returns at once with a job ID, and the
// model waits for the job, or goes on and is told when it ends.
func ExampleToolSpec_background() {
	suite := toolloop.NewTool("test_suite", "Run the test suite.", func(ctx context.Context, _ struct{}) (any, error) {
		select {
		case <-time.After(300 * time.Millisecond): // the slow part
			return "ok: 42 tests passed", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	suite.Background = true
	var tools toolloop.ToolRegistry
	tools.MustRegister(suite)
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "test_suite", `{"background":true}`)),
			looptest.Calls(looptest.Call("c2", toolloop.JobWaitName, `{"job":"job_1","timeout_seconds":60}`)),
			looptest.Text("The tests passed."),
		),
		Tools: &tools,
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("run the tests")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.SplitN(res.Messages[2].Result.Text(), ":", 2)[0])
	wait := res.Messages[4].Result.Text()
	fmt.Println(wait[:strings.Index(wait, " after")])
	for _, j := range res.Jobs {
		fmt.Println(j.ID, j.Tool, j.Status, j.Reported)
	}
	fmt.Println(res.FinalText)
	// Output:
	// Started background job job_1
	// [Job job_1 (test_suite, started by call c1) ended: ok
	// job_1 test_suite ok true
	// The tests passed.
}
