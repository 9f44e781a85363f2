package mcp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// TestResourcesEverything lists, reads and subscribes to
// server-everything's resources, and gets its prompts.
func TestResourcesEverything(t *testing.T) {
	t.Parallel()
	ev := &looptest.Recorder{}
	src := newSource(t, "everything", everythingConfig(t), mcp.Options{OnEvent: ev.Record, MaxOutputBytes: 2048}, nil)
	ctx := testContext(t)

	var uris []string
	for r, err := range src.Resources(ctx) {
		require.NoError(t, err)
		uris = append(uris, r.URI)
	}
	require.NotEmpty(t, uris)
	var templates []string
	for rt, err := range src.ResourceTemplates(ctx) {
		require.NoError(t, err)
		templates = append(templates, rt.URITemplate)
	}
	assert.Contains(t, templates, "demo://resource/dynamic/text/{resourceId}")

	content, err := src.ReadResource(ctx, "demo://resource/dynamic/text/1")
	require.NoError(t, err)
	require.Len(t, content, 1)
	assert.Equal(t, toolloop.ContentResource, content[0].Type)
	assert.Equal(t, "demo://resource/dynamic/text/1", content[0].URI)
	assert.NotEmpty(t, content[0].Text)

	blob, err := src.ReadResource(ctx, "demo://resource/dynamic/blob/1")
	require.NoError(t, err)
	require.Len(t, blob, 1)
	assert.NotEmpty(t, blob[0].Data)

	// A document larger than the budget is cut to it.
	var big []toolloop.Content
	for _, u := range uris {
		c, err := src.ReadResource(ctx, u)
		require.NoError(t, err, u)
		if len(c) == 1 && strings.Contains(c[0].Text, "bytes cut from the middle") {
			big = c
			break
		}
	}
	require.NotNil(t, big, "no document of server-everything is over 2 KiB")
	assert.LessOrEqual(t, len(big[0].Text), 2048+128)

	_, err = src.ReadResource(ctx, "demo://resource/dynamic/text/nope")
	require.Error(t, err)

	// Subscriptions: the server reports updates once asked to simulate
	// them.
	require.NoError(t, src.Subscribe(ctx, "demo://resource/dynamic/text/1"))
	res := callTool(ctx, t, src, "everything__toggle-subscriber-updates", `{}`)
	require.False(t, res.IsError(), res.Text())
	require.Eventually(t, func() bool { return len(ev.Of(mcp.EventResourceUpdated)) > 0 }, 10*time.Second, 20*time.Millisecond)
	up := ev.Of(mcp.EventResourceUpdated)[0]
	assert.Equal(t, "demo://resource/dynamic/text/1", up.Text)
	assert.Equal(t, "everything", up.SourceName)
	require.NoError(t, src.Unsubscribe(ctx, "demo://resource/dynamic/text/1"))

	// Prompts.
	var prompts []string
	for p, err := range src.Prompts(ctx) {
		require.NoError(t, err)
		prompts = append(prompts, p.Name)
	}
	assert.Subset(t, prompts, []string{"simple-prompt", "args-prompt"})
	msgs, err := src.GetPrompt(ctx, "args-prompt", map[string]string{"city": "Paris", "state": "TX"})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, toolloop.RoleUser, msgs[0].Role)
	assert.Equal(t, "What's weather in Paris, TX?", msgs[0].Text())
	_, err = src.GetPrompt(ctx, "no-such-prompt", nil)
	require.Error(t, err)
}

// TestResourceToolsEverything offers the model the resource tools.
func TestResourceToolsEverything(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	cfg.ResourceTools = true
	src := newSource(t, "everything", cfg, mcp.Options{}, nil)
	ctx := testContext(t)
	tools, err := src.Tools(ctx)
	require.NoError(t, err)
	var list, read toolloop.Tool
	for _, tl := range tools {
		switch tl.Spec().Name {
		case "everything__list_resources":
			list = tl
		case "everything__read_resource":
			read = tl
		}
	}
	require.NotNil(t, list, "tools: %v", toolNames(tools))
	require.NotNil(t, read)
	for _, tl := range []toolloop.Tool{list, read} {
		a := tl.Spec().Annotations
		assert.True(t, a.ReadOnly)
		assert.False(t, a.Destructive)
	}

	// Through a registry, as the model calls them.
	reg := registry(t, src)
	listed := callTool(ctx, t, src, "everything__list_resources", `{}`)
	require.False(t, listed.IsError(), listed.Text())
	assert.Contains(t, listed.Text(), "demo://resource/static/document/")
	assert.Contains(t, listed.Text(), "demo://resource/dynamic/text/{resourceId}")
	got := callTool(ctx, t, src, "everything__read_resource", `{"uri":"demo://resource/dynamic/text/2"}`)
	require.False(t, got.IsError(), got.Text())
	require.Len(t, got.Content, 1)
	assert.Equal(t, "demo://resource/dynamic/text/2", got.Content[0].URI)
	bad := callTool(ctx, t, src, "everything__read_resource", `{"uri":"demo://nowhere"}`)
	require.True(t, bad.IsError())
	assert.Equal(t, toolloop.KindExecutionFailed, bad.Error.Kind)
	assert.Contains(t, specNames(reg.Specs(ctx)), "everything__read_resource")

	// Off by default.
	plain := newSource(t, "everything", everythingConfig(t), mcp.Options{}, nil)
	assert.False(t, hasTool(ctx, t, plain, "everything__list_resources"))
}
