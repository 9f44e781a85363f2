package golden

import (
	"bytes"
	"encoding/json"

	"github.com/toolloop/toolloop"
)

// CompactReplies compacts the arguments of every tool call in replies read
// from an indented golden file, so a scripted model sends them as a
// provider would (looptest delivers replies byte for byte). Nil replies
// and arguments that are not valid JSON are left as they are.
func CompactReplies(rs []*toolloop.Response) {
	for _, r := range rs {
		if r == nil {
			continue
		}
		for i := range r.Message.ToolCalls {
			tc := &r.Message.ToolCalls[i]
			var b bytes.Buffer
			if json.Compact(&b, tc.Arguments) == nil {
				tc.Arguments = b.Bytes()
			}
		}
	}
}
