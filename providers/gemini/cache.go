package gemini

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
)

// useCache points config at Config.CachedContent, if set, and takes out
// what the API refuses beside a cache, which holds it instead: the system
// instruction, the tools and the tool config.
func (m *Model) useCache(config *genai.GenerateContentConfig) {
	name := m.cfg.CachedContent
	if name == "" {
		return
	}
	if tc := config.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil {
		m.log.Debug("gemini: tool choice not sent: the API takes none beside a cached content",
			"mode", tc.FunctionCallingConfig.Mode, "cache", name)
	}
	config.CachedContent = name
	config.SystemInstruction, config.Tools, config.ToolConfig = nil, nil, nil
}

// CreateCache creates an explicit cache for this model holding req's
// system instruction and tools, mapped as a request maps them, to live
// for ttl (0 means the API's default, an hour), and returns its name for
// Config.CachedContent. The cache is billed for storage by the hour
// until it expires or is deleted (the SDK's Caches.Delete); the API
// refuses one smaller than the model's minimum, 1,024 to 4,096 tokens.
// Every request made with it must have the same system messages and
// tools, since they are not sent again.
func (m *Model) CreateCache(ctx context.Context, req *toolloop.Request, ttl time.Duration) (string, error) {
	_, config, err := m.mapRequest(&toolloop.Request{Messages: systemOnly(req.Messages), Tools: req.Tools})
	if err != nil {
		return "", err
	}
	ctx, x := withExchange(ctx)
	cc, err := m.client.Caches.Create(ctx, m.cfg.Model, &genai.CreateCachedContentConfig{
		TTL:               ttl,
		SystemInstruction: config.SystemInstruction,
		Tools:             config.Tools,
	})
	if err != nil {
		return "", mapError(err, x)
	}
	if cc.Name == "" {
		return "", fmt.Errorf("gemini: the API created a cache without a name")
	}
	return cc.Name, nil
}

// systemOnly returns the system messages of msgs.
func systemOnly(msgs []toolloop.Message) []toolloop.Message {
	var out []toolloop.Message
	for _, msg := range msgs {
		if msg.Role == toolloop.RoleSystem {
			out = append(out, msg)
		}
	}
	return out
}
