package toolloop

import "fmt"

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
