package toolloop

import (
	"bytes"
	"encoding/json"
)

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
