package toolloop

import "strings"

// ModelInfo is what the loop knows about a model: the size of its context
// window and its price. The loop looks a model up by the name its
// responses report (see [LookupModel]); AgentLoop.ModelTable adds to or
// overrides the built-in table.
type ModelInfo struct {
	// ContextWindow is how many tokens the model's context holds, input
	// and output together; 0 means unknown.
	ContextWindow int `json:"context_window,omitempty"`
	// Price is what the model costs; nil means unknown.
	Price *Price `json:"price,omitempty"`
}

// Price is what a model costs, in US dollars per million tokens.
//
// The cost of a [Usage] counts InputTokens less the cache reads and writes
// at Input, CacheReadTokens at CacheRead, CacheWriteTokens at CacheWrite,
// and OutputTokens at Output, except ReasoningTokens, which cost Reasoning
// when it is set. A zero CacheRead or CacheWrite means the provider bills
// those tokens as ordinary input.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read,omitempty"`
	CacheWrite float64 `json:"cache_write,omitempty"`
	Reasoning  float64 `json:"reasoning,omitempty"`
}

// Cost returns what u costs at p, in US dollars.
func (p Price) Cost(u Usage) float64 {
	cacheRead, cacheWrite := p.CacheRead, p.CacheWrite
	if cacheRead == 0 {
		cacheRead = p.Input
	}
	if cacheWrite == 0 {
		cacheWrite = p.Input
	}
	reasoning := p.Reasoning
	if reasoning == 0 {
		reasoning = p.Output
	}
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	answer := max(u.OutputTokens-u.ReasoningTokens, 0)
	return (float64(plain)*p.Input + float64(u.CacheReadTokens)*cacheRead +
		float64(u.CacheWriteTokens)*cacheWrite + float64(answer)*p.Output +
		float64(u.ReasoningTokens)*reasoning) / 1e6
}

// ModelTable maps model names to what the loop knows about them. A name is
// looked up as [ModelTable.Lookup] describes.
type ModelTable map[string]ModelInfo

// Lookup returns the entry for model: the entry of that exact name (the
// empty name included, for models that report none), or
// else of the longest name that model extends with a dated or versioned
// suffix ("gpt-4.1" for "gpt-4.1-2025-04-14", "claude-sonnet-4-5" for
// "claude-sonnet-4-5-20250929"). A provider prefix such as "openai/" or
// "models/" is ignored.
func (m ModelTable) Lookup(model string) (ModelInfo, bool) {
	if info, ok := m[model]; ok {
		return info, true
	}
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
		if info, ok := m[model]; ok {
			return info, true
		}
	}
	if model == "" {
		return ModelInfo{}, false
	}
	// The longest key that is a prefix of model ending where a suffix
	// begins.
	best, found := "", false
	for name := range m {
		if len(name) <= len(best) || len(name) >= len(model) || !strings.HasPrefix(model, name) {
			continue
		}
		switch model[len(name)] {
		case '-', '@', ':', '.', '_':
			best, found = name, true
		}
	}
	if !found {
		return ModelInfo{}, false
	}
	return m[best], true
}

// LookupModel returns what the built-in table knows about a model, by the
// name its responses report, as [ModelTable.Lookup] matches names.
//
// The table holds the context windows and list prices (standard tier,
// prompts within the lowest price tier, five-minute cache writes) that
// OpenAI, Anthropic and Google published for their current models when it
// was written. Prices change: check them, and put the prices you pay in
// AgentLoop.ModelTable, which the loop consults first.
func LookupModel(model string) (ModelInfo, bool) {
	return builtinModels.Lookup(model)
}

func price(in, out, cacheRead, cacheWrite float64) *Price {
	return &Price{Input: in, Output: out, CacheRead: cacheRead, CacheWrite: cacheWrite}
}

// builtinModels is the table behind LookupModel.
var builtinModels = ModelTable{
	// OpenAI.
	"gpt-6.1-sol":  {ContextWindow: 1_050_000, Price: price(2, 10, 0.10, 2.50)},
	"gpt-5.1":      {ContextWindow: 400_000, Price: price(1.25, 10, 0.125, 0)},
	"gpt-5":        {ContextWindow: 400_000, Price: price(1.25, 10, 0.125, 0)},
	"gpt-5-mini":   {ContextWindow: 400_000, Price: price(0.25, 2, 0.025, 0)},
	"gpt-5-nano":   {ContextWindow: 400_000, Price: price(0.05, 0.40, 0.005, 0)},
	"gpt-4.1":      {ContextWindow: 1_047_576, Price: price(2, 8, 0.50, 0)},
	"gpt-4.1-mini": {ContextWindow: 1_047_576, Price: price(0.40, 1.60, 0.10, 0)},
	"gpt-4.1-nano": {ContextWindow: 1_047_576, Price: price(0.10, 0.40, 0.025, 0)},
	"gpt-4o":       {ContextWindow: 128_000, Price: price(2.50, 10, 1.25, 0)},
	"gpt-4o-mini":  {ContextWindow: 128_000, Price: price(0.15, 0.60, 0.075, 0)},
	"o3":           {ContextWindow: 200_000, Price: price(2, 8, 0.50, 0)},
	"o3-mini":      {ContextWindow: 200_000, Price: price(1.10, 4.40, 0.55, 0)},
	"o4-mini":      {ContextWindow: 200_000, Price: price(1.10, 4.40, 0.275, 0)},
	// Anthropic: cache writes of five minutes cost 1.25 times the input.
	"claude-sonnet-5-5": {ContextWindow: 1_000_000, Price: price(2, 10, 0.20, 2.50)},
	"claude-opus-4-5":   {ContextWindow: 200_000, Price: price(5, 25, 0.50, 6.25)},
	"claude-opus-4-1":   {ContextWindow: 200_000, Price: price(15, 75, 1.50, 18.75)},
	"claude-opus-4":     {ContextWindow: 200_000, Price: price(15, 75, 1.50, 18.75)},
	"claude-sonnet-4-5": {ContextWindow: 200_000, Price: price(3, 15, 0.30, 3.75)},
	"claude-sonnet-4":   {ContextWindow: 200_000, Price: price(3, 15, 0.30, 3.75)},
	"claude-3-7-sonnet": {ContextWindow: 200_000, Price: price(3, 15, 0.30, 3.75)},
	"claude-haiku-4-5":  {ContextWindow: 200_000, Price: price(1, 5, 0.10, 1.25)},
	"claude-3-5-haiku":  {ContextWindow: 200_000, Price: price(0.80, 4, 0.08, 1)},
	// Google: prices of prompts up to 200,000 tokens; gemini-3.8-flash's
	// from 2027 (until then, $0.75 and $3.75).
	"gemini-3.8-flash":      {ContextWindow: 1_048_576, Price: price(1.50, 7.50, 0.15, 0)},
	"gemini-3-pro-preview":  {ContextWindow: 1_048_576, Price: price(2, 12, 0.20, 0)},
	"gemini-2.5-pro":        {ContextWindow: 1_048_576, Price: price(1.25, 10, 0.125, 0)},
	"gemini-2.5-flash":      {ContextWindow: 1_048_576, Price: price(0.30, 2.50, 0.03, 0)},
	"gemini-2.5-flash-lite": {ContextWindow: 1_048_576, Price: price(0.10, 0.40, 0.01, 0)},
}

// ModelInfo returns what the loop knows about a model, by the name its
// responses report: from l.ModelTable, and then from [LookupModel].
func (l *AgentLoop) ModelInfo(model string) (ModelInfo, bool) {
	return l.lookupModel(model)
}

// lookupModel consults the loop's table, then the built-in one.
func (l *AgentLoop) lookupModel(model string) (ModelInfo, bool) {
	if info, ok := l.ModelTable.Lookup(model); ok {
		return info, true
	}
	return LookupModel(model)
}

// Token estimates. A token of English prose or code is about four bytes
// in the tokenizers of every current model family; JSON and non-Latin
// text take more tokens per byte, so the estimate errs on the high side
// for them only a little. The loop corrects estimates with the usage the
// provider reports (see [AgentLoop.ContextManagers]).
const (
	bytesPerToken = 4
	// messageTokens is the framing each message costs (role, separators).
	messageTokens = 4
	// imageTokens is an image of unknown size: about what a 1,000 by
	// 1,000 image costs at Anthropic's and OpenAI's rates.
	imageTokens = 1_500
)

// EstimateTokens estimates how many tokens msgs take in a model's
// context: a byte count of their text, tool call arguments and tool
// results divided by four, four tokens of framing per message, and 1,500
// tokens per image or audio block. Reasoning blocks count their text and
// their encrypted form, which providers send back. It is a heuristic,
// meant to decide when to act, not to bill.
func EstimateTokens(msgs []Message) int {
	n := 0
	for i := range msgs {
		n += estimateMessage(&msgs[i])
	}
	return n
}

func estimateMessage(m *Message) int {
	bytes := 0
	n := messageTokens
	for _, c := range m.Content {
		b, t := estimateContent(c)
		bytes += b
		n += t
	}
	for _, tc := range m.ToolCalls {
		bytes += len(tc.Name) + len(tc.Arguments) + len(tc.ID)
	}
	if r := m.Result; r != nil {
		bytes += len(r.CallID) + len(r.Name)
		for _, c := range r.Content {
			b, t := estimateContent(c)
			bytes += b
			n += t
		}
	}
	return n + (bytes+bytesPerToken-1)/bytesPerToken
}

// estimateContent returns a block's size in bytes of text, and the tokens
// it costs besides.
func estimateContent(c Content) (bytes, tokens int) {
	switch c.Type {
	case ContentImage, ContentAudio:
		return len(c.URI), imageTokens
	case ContentJSON:
		return len(c.JSON), 0
	case ContentReasoning:
		b := len(c.Text)
		if r := c.Reasoning; r != nil {
			b += len(r.Encrypted) + len(r.Signature)
		}
		return b, 0
	case ContentResource:
		if len(c.Data) > 0 && c.Text == "" {
			return len(c.URI), imageTokens
		}
		return len(c.Text) + len(c.URI), 0
	}
	return len(c.Text), 0
}

// estimateSpecs estimates the tokens tool specs take in a request.
func estimateSpecs(specs []ToolSpec) int {
	bytes := 0
	for i := range specs {
		s := &specs[i]
		bytes += len(s.Name) + len(s.Description) + len(s.InputSchema) + 16
	}
	return (bytes + bytesPerToken - 1) / bytesPerToken
}
