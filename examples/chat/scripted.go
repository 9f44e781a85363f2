package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/toolloop/toolloop"
)

// scripted is the offline model: it asks for the weather of the cities a
// message names, converts the first temperature to Fahrenheit, and sums up
// what the tools said. It streams its answers word by word, like a real
// model. With think set it also reasons, briefly, before each answer, as a
// reasoning model does: the reasoning streams first and stays in the
// transcript as a reasoning block.
type scripted struct{ think bool }

// Generate implements toolloop.Model.
func (s *scripted) Generate(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	msgs := req.Messages
	var user string
	var results []*toolloop.ToolResult
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == toolloop.RoleUser {
			user = msgs[i].Text()
			break
		}
		if msgs[i].Result != nil {
			results = append([]*toolloop.ToolResult{msgs[i].Result}, results...)
		}
	}
	var cities []string
	for c := range weather {
		if strings.Contains(strings.ToLower(user), c) {
			cities = append(cities, c)
		}
	}
	switch {
	case len(cities) == 0:
		return answer("I'm a scripted stand-in for a real model. Ask me about the weather in Paris, Tokyo, New York or Sydney, " +
			"or set OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL to talk to a real one."), nil
	case len(results) == 0:
		var calls []toolloop.ToolCall
		for i, c := range sortedCities(cities, user) {
			calls = append(calls, call(fmt.Sprintf("call_weather_%d", i), "get_weather", map[string]any{"city": title(c)}))
		}
		return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant,
			Content: []toolloop.Content{toolloop.TextContent("Let me check.")}, ToolCalls: calls}}, nil
	case results[len(results)-1].Name == "get_weather" && strings.Contains(strings.ToLower(user), "fahrenheit"):
		var w struct {
			TempC float64 `json:"temp_c"`
		}
		if err := json.Unmarshal([]byte(jsonOf(results[0])), &w); err == nil {
			return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant,
				ToolCalls: []toolloop.ToolCall{call("call_convert", "to_fahrenheit", map[string]any{"celsius": w.TempC})}}}, nil
		}
	}
	return answer(summary(msgs)), nil
}

// Stream implements toolloop.Streamer: the answer, word by word.
func (s *scripted) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		resp, err := s.Generate(ctx, req)
		if err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		if s.think {
			thought := reasoningFor(resp)
			for _, w := range strings.SplitAfter(thought, " ") {
				if !yield(toolloop.Chunk{Reasoning: w}, nil) {
					return
				}
			}
			resp.Message.Content = append([]toolloop.Content{
				toolloop.ReasoningContent(thought, toolloop.Reasoning{Provider: "scripted"}),
			}, resp.Message.Content...)
		}
		for _, w := range strings.SplitAfter(resp.Message.Text(), " ") {
			if err := ctx.Err(); err != nil {
				yield(toolloop.Chunk{}, err)
				return
			}
			if !yield(toolloop.Chunk{Text: w}, nil) {
				return
			}
		}
		yield(toolloop.Chunk{Response: resp}, nil)
	}
}

// summary sums up the tool results since the last user message.
func summary(msgs []toolloop.Message) string {
	var parts []string
	var fahrenheit string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != toolloop.RoleUser; i-- {
		r := msgs[i].Result
		if r == nil {
			continue
		}
		switch {
		case r.IsError():
			parts = append([]string{"one lookup failed (" + r.Text() + ")"}, parts...)
		case r.Name == "to_fahrenheit":
			fahrenheit = r.Text()
		case r.Name == "get_weather":
			var w struct {
				TempC float64 `json:"temp_c"`
				Sky   string  `json:"sky"`
			}
			_ = json.Unmarshal([]byte(jsonOf(r)), &w)
			parts = append([]string{fmt.Sprintf("%s: %g°C, %s", cityOf(msgs, r.CallID), w.TempC, w.Sky)}, parts...)
		}
	}
	if fahrenheit != "" && len(parts) > 0 {
		parts[0] += " (" + fahrenheit + ")"
	}
	return "Here is the (simulated) weather. " + strings.Join(parts, "; ") + "."
}

// cityOf finds the city a get_weather call asked about.
func cityOf(msgs []toolloop.Message, id string) string {
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.ID == id {
				var in struct{ City string }
				_ = json.Unmarshal(tc.Arguments, &in)
				return in.City
			}
		}
	}
	return "?"
}

// sortedCities orders cities as the message names them.
func sortedCities(cities []string, text string) []string {
	lower := strings.ToLower(text)
	out := append([]string(nil), cities...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if strings.Index(lower, out[j]) < strings.Index(lower, out[i]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func title(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

func jsonOf(r *toolloop.ToolResult) string {
	for _, c := range r.Content {
		if c.Type == toolloop.ContentJSON {
			return string(c.JSON)
		}
	}
	return r.Text()
}

func answer(text string) *toolloop.Response {
	return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant,
		Content: []toolloop.Content{toolloop.TextContent(text)}}, StopReason: toolloop.StopEnd}
}

func call(id, name string, args map[string]any) toolloop.ToolCall {
	b, _ := json.Marshal(args)
	return toolloop.ToolCall{ID: id, Name: name, Arguments: b}
}

// reasoningFor is what the scripted model "thinks" before it answers resp.
func reasoningFor(resp *toolloop.Response) string {
	switch n := len(resp.Message.ToolCalls); {
	case n == 0:
		return "I have what I need; sum it up."
	case n == 1:
		return "One more tool call will settle it: " + resp.Message.ToolCalls[0].Name + "."
	default:
		return fmt.Sprintf("The cities are independent: ask for all %d at once.", n)
	}
}
