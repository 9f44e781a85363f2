package anthropic

import (
	sdk "github.com/anthropics/anthropic-sdk-go"
)

// breakpoints places the cache breakpoints of Config.PromptCache in p,
// whose tools, system prompt and messages are all set.
func (m *Model) breakpoints(p *sdk.MessageNewParams) {
	c := m.cfg.PromptCache
	if c.breakpoints() == 0 {
		return
	}
	cc := sdk.NewCacheControlEphemeralParam()
	cc.TTL = sdk.CacheControlEphemeralTTL(c.TTL)
	if n := len(p.Tools); c.Tools && n > 0 {
		// The tool params are shared by every request (Model.tool caches
		// them): mark a copy.
		t := *p.Tools[n-1].OfTool
		t.CacheControl = cc
		p.Tools[n-1] = sdk.ToolUnionParam{OfTool: &t}
	}
	if n := len(p.System); c.System && n > 0 {
		p.System[n-1].CacheControl = cc
	}
	left := c.Turns
	for i := len(p.Messages) - 1; i >= 0 && left > 0; i-- {
		msg := &p.Messages[i]
		if msg.Role != sdk.MessageParamRoleUser || len(msg.Content) == 0 {
			continue
		}
		if mark := msg.Content[len(msg.Content)-1].GetCacheControl(); mark != nil {
			*mark = cc
			left--
		}
	}
}
