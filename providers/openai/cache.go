package openai

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strings"

	"github.com/toolloop/toolloop"
)

// CacheKeyFunc returns the prompt_cache_key of a request; "" sends none.
// It runs on every request, possibly concurrently.
type CacheKeyFunc func(req *toolloop.Request) string

// ConversationKey is the default [Config].PromptCacheKey on OpenAI's own
// API: a key made of how the conversation starts, the messages up to and
// including its first user message (the system prompt and the task), which
// every request of one conversation repeats and which compaction and
// cleared results leave alone. It is "toolloop-" and 32 hex digits of
// their SHA-256, or "" for a request without messages. The tools are
// left out, so that a conversation whose tools change keeps its key.
// Conversations that start the same share a key, as they share a prefix.
func ConversationKey(req *toolloop.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	h := sha256.New()
	for i := range req.Messages {
		msg := &req.Messages[i]
		hashMessage(h, msg)
		if msg.Role == toolloop.RoleUser {
			break
		}
	}
	return "toolloop-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// hashMessage writes what a message says to h, each field prefixed with
// its length so that no two messages write the same bytes.
func hashMessage(h hash.Hash, msg *toolloop.Message) {
	field := func(b []byte) {
		h.Write(binary.AppendUvarint(nil, uint64(len(b))))
		h.Write(b)
	}
	field([]byte(msg.Role))
	for _, c := range msg.Content {
		field([]byte(c.Type))
		field([]byte(c.Text))
		field([]byte(c.MIMEType))
		field([]byte(c.URI))
		field(c.JSON)
		field(c.Data)
	}
	for _, tc := range msg.ToolCalls {
		field([]byte(tc.ID))
		field([]byte(tc.Name))
		field(tc.Arguments)
	}
}

// cacheKey returns the prompt_cache_key to send for req from a model
// talking to server: Config.PromptCacheKey's, or by default
// ConversationKey's on OpenAI's own API and none elsewhere. RequestOptions
// may send the requests elsewhere (the SDK's Azure options do), unseen,
// so with any of them the default is none.
func cacheKey(cfg *Config, server string, req *toolloop.Request) string {
	if cfg.PromptCacheKey != nil {
		return cfg.PromptCacheKey(req)
	}
	if isOpenAI(server) && len(cfg.RequestOptions) == 0 {
		return ConversationKey(req)
	}
	return ""
}

// isOpenAI reports whether server (see serverOf) is OpenAI's own API.
func isOpenAI(server string) bool {
	return server == openAIHost || strings.HasPrefix(server, openAIHost+"/")
}
