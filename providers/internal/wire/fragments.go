package wire

import (
	"encoding/json"
	"strings"
)

// Fragments reassembles a string that a provider streams in pieces, each
// piece a JSON string literal of its own (OpenAI's tool call arguments,
// Anthropic's partial_json).
//
// The SDKs decode each piece on its own, so a character split across two
// pieces is lost: a surrogate pair sent as two \u escapes becomes two
// U+FFFD. Fragments keeps each piece's raw literal and decodes the whole
// string once, at the end. Pieces without a raw literal fall back to their
// decoded text.
type Fragments struct {
	raw     []byte
	decoded strings.Builder
	lossy   bool
	n       int
}

// Add appends one piece: raw is its JSON string literal as received, text
// its decoded value.
func (f *Fragments) Add(raw, text string) {
	f.n++
	f.decoded.WriteString(text)
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		f.raw = append(f.raw, raw[1:len(raw)-1]...)
		return
	}
	if text != "" {
		f.lossy = true
	}
}

// Len reports how many pieces were added.
func (f *Fragments) Len() int { return f.n }

// String returns the reassembled string.
func (f *Fragments) String() string {
	if f.lossy {
		return f.decoded.String()
	}
	b := make([]byte, 0, len(f.raw)+2)
	b = append(b, '"')
	b = append(b, f.raw...)
	b = append(b, '"')
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return f.decoded.String()
	}
	return s
}
