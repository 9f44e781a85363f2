package mcp_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// TestTasksThroughTheLoop runs MCP tasks as the loop's background jobs,
// end to end with a scripted model: a job run to its end and read with
// job_wait, and a job canceled with job_cancel, against the TypeScript
// SDK's server (stdio) and the Go server (HTTP).
func TestTasksThroughTheLoop(t *testing.T) {
	node := nodeForConformance(t)
	for _, kind := range []string{"ts-stdio", "go-http"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var reg toolloop.ToolRegistry
			var tool, args, waitArgs string
			var seen func() int
			switch kind {
			case "ts-stdio":
				src := tsTaskServer(t, node, "stdio")
				require.NoError(t, reg.AddSource(context.Background(), src))
				tool, args, waitArgs = "ts__countdown", `{"steps":3,"background":true}`, `{"steps":1,"wait":true,"background":true}`
				seen = func() int { _, n := tsStats(t, src); return n }
			case "go-http":
				src := taskServer(t, "http")
				require.NoError(t, reg.AddSource(context.Background(), src))
				tool, args, waitArgs = "tasks__job", `{"steps":3,"background":true}`, `{"steps":1,"wait":true,"background":true}`
				seen = func() int { _, n := jobCounts(t, src); return int(n) }
			}
			before := seen()
			model := looptest.NewModel(t,
				looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", tool, args))},
				looptest.Turn{Reply: looptest.Calls(looptest.Call("w1", toolloop.JobWaitName, `{"job":"job_1","timeout_seconds":60}`))},
				looptest.Turn{Reply: looptest.Calls(looptest.Call("c2", tool, waitArgs))},
				// Give the second job time to be created on the server.
				looptest.Turn{Reply: looptest.Calls(looptest.Call("w2", toolloop.JobWaitName, `{"job":"job_2","timeout_seconds":1}`))},
				looptest.Turn{Reply: looptest.Calls(looptest.Call("k2", toolloop.JobCancelName, `{"job":"job_2"}`))},
				looptest.Turn{Reply: looptest.Text("done")},
			)
			loop := &toolloop.AgentLoop{Model: model, Tools: &reg}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("go")})
			require.NoError(t, err)
			looptest.AssertValid(t, res.Messages)
			results := looptest.Results(res.Messages)
			assert.Contains(t, results["c1"].Text(), "job_1")
			assert.Contains(t, results["w1"].Text(), "ended: ok")
			assert.Contains(t, results["w1"].Text(), "done after 3 steps")
			assert.Contains(t, results["k2"].Text(), "ended: canceled")
			require.Len(t, res.Jobs, 2)
			assert.Equal(t, toolloop.JobOK, res.Jobs[0].Status)
			assert.Positive(t, res.Jobs[0].OutputBytes, "the task's status messages are the job's output")
			assert.Equal(t, toolloop.JobCanceled, res.Jobs[1].Status)
			require.Eventually(t, func() bool { return seen() == before+1 }, 10*time.Second, 50*time.Millisecond,
				"the server's task saw the cancellation")
		})
	}
}
