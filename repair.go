package toolloop

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// InterruptedMessage is the text of the result given to a call that has
// none because its run was interrupted.
const InterruptedMessage = "not completed: the run was interrupted before this call returned a result, and it was not run again. " +
	"It may or may not have taken effect; check before repeating it."

// RepairTranscript makes a transcript valid to send to a model: after each
// assistant message, exactly one tool message per call, in call order.
// A call without a result (the run crashed or was killed mid-turn) gets a
// canceled result saying the run was interrupted; the call is not run.
// Results that answer no call of the assistant message before them, and
// second results for one call, are dropped. It returns msgs itself, and no
// notes, when nothing needed repair; otherwise a new slice and one note per
// repair.
func RepairTranscript(msgs []Message) ([]Message, []string) {
	fixed, _, notes := repairTranscript(msgs)
	return fixed, notes
}

// repairTranscript is RepairTranscript that also returns the tool messages
// it synthesized.
func repairTranscript(msgs []Message) (fixed, synth []Message, notes []string) {
	if transcriptValid(msgs) {
		return msgs, nil, nil
	}
	return repairInvalid(msgs)
}

// repairInvalid is repairTranscript on a transcript that needs repair. It
// is apart so that every run does not pay for its stack frame, which is
// large enough to make a new run's goroutine grow its stack (a copy) and
// the garbage collector shrink it back (another) while the run waits.
func repairInvalid(msgs []Message) (fixed, synth []Message, notes []string) {
	out := make([]Message, 0, len(msgs))
	for i := 0; i < len(msgs); {
		m := msgs[i]
		i++
		if m.Role == RoleTool {
			notes = append(notes, fmt.Sprintf("dropped a tool result for %s that follows no tool call", resultID(m)))
			continue
		}
		out = append(out, m)
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		// Gather the tool messages that follow.
		got := make(map[string]Message)
		for ; i < len(msgs) && msgs[i].Role == RoleTool; i++ {
			t := msgs[i]
			id := resultID(t)
			switch {
			case t.Result == nil:
				notes = append(notes, "dropped a tool message without a result")
			case !hasCall(m.ToolCalls, id):
				notes = append(notes, fmt.Sprintf("dropped a tool result for %s that answers no call of the turn", id))
			case hasKey(got, id):
				notes = append(notes, fmt.Sprintf("dropped a second result for call %s", id))
			default:
				got[id] = t
			}
		}
		for _, tc := range m.ToolCalls {
			if t, ok := got[tc.ID]; ok {
				out = append(out, t)
				continue
			}
			r := &ToolResult{CallID: tc.ID, Name: tc.Name, Status: StatusError,
				Error: &ToolError{Kind: KindCanceled, Message: InterruptedMessage}}
			r.Content = []Content{TextContent(InterruptedMessage)}
			tm := ToolMessage(r)
			out = append(out, tm)
			synth = append(synth, tm)
			notes = append(notes, fmt.Sprintf("gave interrupted call %s (%s) a canceled result", tc.ID, tc.Name))
		}
	}
	if len(notes) == 0 {
		// Only the order of results differed.
		notes = append(notes, "put tool results in call order")
	}
	return out, synth, notes
}

// transcriptValid reports whether every assistant turn with calls is
// followed by exactly its results, in call order, and no tool message
// stands anywhere else.
func transcriptValid(msgs []Message) bool {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == RoleTool {
			return false
		}
		if m.Role != RoleAssistant {
			continue
		}
		for _, tc := range m.ToolCalls {
			i++
			if i >= len(msgs) || msgs[i].Role != RoleTool || msgs[i].Result == nil || msgs[i].Result.CallID != tc.ID {
				return false
			}
		}
	}
	return true
}

func resultID(m Message) string {
	if m.Result == nil {
		return "(none)"
	}
	return m.Result.CallID
}

func hasCall(calls []ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

func hasKey(m map[string]Message, k string) bool {
	_, ok := m[k]
	return ok
}

// Repairer fixes common slips in a model's tool arguments before they are
// validated. It returns the fixed arguments and a short description of each
// fix; no fixes means it changed nothing. The loop calls it only for
// arguments that are not valid JSON or are a JSON string, records every fix
// in the result's Meta.Repairs and in an [EventArgumentsRepaired] event, and
// validates the outcome like any other arguments.
type Repairer func(raw json.RawMessage) (fixed json.RawMessage, repairs []string)

// RepairArguments is the stock [Repairer]. It removes a Markdown code fence
// around the JSON, removes trailing commas before a closing bracket or
// brace, and decodes an object that was sent as a JSON string. It never
// guesses at anything else.
func RepairArguments(raw json.RawMessage) (json.RawMessage, []string) {
	var repairs []string
	b := bytes.TrimSpace(raw)
	if s, ok := stripFence(b); ok {
		b = s
		repairs = append(repairs, "removed a code fence around the arguments")
	}
	if s, n := stripTrailingCommas(b); n > 0 {
		b = s
		repairs = append(repairs, "removed trailing commas")
	}
	if len(b) > 0 && b[0] == '"' {
		var inner string
		if json.Unmarshal(b, &inner) == nil {
			if ib := bytes.TrimSpace([]byte(inner)); len(ib) > 0 && ib[0] == '{' && json.Valid(ib) {
				b = ib
				repairs = append(repairs, "decoded arguments sent as a JSON string")
			}
		}
	}
	if len(repairs) == 0 {
		return raw, nil
	}
	return b, repairs
}

// stripFence removes ```json ... ``` (or a bare ``` fence) around b.
func stripFence(b []byte) ([]byte, bool) {
	if !bytes.HasPrefix(b, []byte("```")) || !bytes.HasSuffix(b, []byte("```")) || len(b) < 6 {
		return b, false
	}
	inner := b[3 : len(b)-3]
	if nl := bytes.IndexByte(inner, '\n'); nl >= 0 {
		// Drop an info string such as "json".
		if info := bytes.TrimSpace(inner[:nl]); len(info) == 0 || isWord(info) {
			inner = inner[nl+1:]
		}
	}
	return bytes.TrimSpace(inner), true
}

func isWord(b []byte) bool {
	for _, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// stripTrailingCommas removes commas followed only by space and then } or
// ], outside strings. It returns how many it removed.
func stripTrailingCommas(b []byte) ([]byte, int) {
	var out []byte
	n := 0
	var str jsonString
	for i := 0; i < len(b); i++ {
		c := b[i]
		if str.holds(c) || c != ',' {
			continue
		}
		j := i + 1
		for j < len(b) && (b[j] == ' ' || b[j] == '\n' || b[j] == '\r' || b[j] == '\t') {
			j++
		}
		if j < len(b) && (b[j] == '}' || b[j] == ']') {
			if out == nil {
				out = make([]byte, 0, len(b))
			}
			out = append(out, b[len(out)+n:i]...)
			n++
		}
	}
	if n == 0 {
		return b, 0
	}
	out = append(out, b[len(out)+n:]...)
	return out, n
}
