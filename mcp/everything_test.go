package mcp_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// everythingConfig returns the config that starts the reference server,
// pinned in testdata/npm/package.json, over stdio, or skips the test (see
// npmServer).
func everythingConfig(t *testing.T) mcp.ServerConfig {
	t.Helper()
	return npmServer(t, "server-everything", "stdio")
}

func TestEverything(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	logs := &logBuffer{}
	src, err := mcp.New("everything", cfg, &mcp.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close()) }()
	reg := registry(t, src)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	names := specNames(reg.Specs(ctx))
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"} {
		assert.Contains(t, names, "everything__"+want)
	}
	// Right after start-up the server registers more tools and announces
	// that its list changed; the registry picks them up.
	assert.Eventually(t, func() bool {
		return slices.Contains(specNames(reg.Specs(ctx)), "everything__simulate-research-query")
	}, 10*time.Second, 20*time.Millisecond, "the tool-list change was not picked up; logs:\n%s", logs)

	rec := &looptest.Recorder{}
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(
			looptest.Call("echo", "everything__echo", `{"message":"hello from Go"}`),
			looptest.Call("sum", "everything__get-sum", `{"a":2,"b":40}`),
			looptest.Call("image", "everything__get-tiny-image", `{}`),
			looptest.Call("long", "everything__trigger-long-running-operation", `{"duration":1.5,"steps":3}`),
			looptest.Call("bad", "everything__get-sum", `{"a":"two","b":1}`),
		)},
		looptest.Turn{Reply: looptest.Text("done")},
	)
	loop := &toolloop.AgentLoop{Model: model, Tools: reg, OnEvent: rec.Record}
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("exercise the server")})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	got := looptest.Results(res.Messages)

	for id, r := range got {
		assert.Equal(t, toolloop.SourceMCP, r.Meta.Source, id)
		assert.Equal(t, "everything", r.Meta.SourceName, id)
	}
	assert.Equal(t, "Echo: hello from Go", got["echo"].Text())
	assert.Contains(t, got["sum"].Text(), "42")
	var images int
	for _, c := range got["image"].Content {
		if c.Type == toolloop.ContentImage {
			images++
			assert.Equal(t, "image/png", c.MIMEType)
			assert.NotEmpty(t, c.Data)
		}
	}
	assert.Equal(t, 1, images, "get-tiny-image returned no image: %+v", got["image"].Content)
	assert.False(t, got["long"].IsError(), got["long"].Text())
	assert.True(t, strings.HasPrefix(got["long"].Text(), "Long running operation completed"), got["long"].Text())
	require.True(t, got["bad"].IsError())
	assert.Equal(t, toolloop.KindInvalidArgs, got["bad"].Error.Kind)

	var progress []toolloop.Progress
	for _, e := range rec.ForCall("long") {
		if e.Type == toolloop.EventProgress {
			assert.Equal(t, "everything", e.SourceName)
			progress = append(progress, *e.Progress)
		}
	}
	// The server reports steps 1, 2 and 3 of 3, half a second apart. The
	// last may trail the result and be dropped, and the loop coalesces
	// reports that come closer together than its progress interval (as
	// they may on a loaded machine), so what arrives is some of them, in
	// order.
	require.NotEmpty(t, progress, "no progress events")
	for i, p := range progress {
		assert.Equal(t, 3.0, p.Total, "progress %d: %+v", i, progress)
		assert.True(t, p.Done >= 1 && p.Done <= 3, "progress %d: %+v", i, progress)
		if i > 0 {
			assert.Greater(t, p.Done, progress[i-1].Done, "progress out of order: %+v", progress)
		}
	}
}
