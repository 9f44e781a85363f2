package judgment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolloop/toolloop"
)

// errMalformed is the root of every reason an answer is refused.
var errMalformed = errors.New("not a valid verdict")

type answer struct {
	decision toolloop.Decision
	reason   string
}

// parse reads the judge's answer, strictly: one call to the verdict tool,
// or else a text that is exactly one verdict object.
func parse(resp *toolloop.Response) (answer, error) {
	if resp == nil {
		return answer{}, fmt.Errorf("%w: no response", errMalformed)
	}
	switch resp.StopReason {
	case "", toolloop.StopEnd, toolloop.StopToolUse:
	default:
		return answer{}, fmt.Errorf("%w: the turn ended with %q", errMalformed, resp.StopReason)
	}
	msg := resp.Message
	switch len(msg.ToolCalls) {
	case 0:
		return parseObject([]byte(strings.TrimSpace(msg.Text())))
	case 1:
		c := msg.ToolCalls[0]
		if c.Name != VerdictTool {
			return answer{}, fmt.Errorf("%w: called tool %q", errMalformed, c.Name)
		}
		return parseObject(bytes.TrimSpace(c.Arguments))
	default:
		return answer{}, fmt.Errorf("%w: %d tool calls", errMalformed, len(msg.ToolCalls))
	}
}

// parseObject accepts exactly {"decision": "allow"|"deny", "reason": "..."}
// with both members once, in either order, and nothing else around or
// inside it.
func parseObject(b []byte) (answer, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return answer{}, fmt.Errorf("%w: not a JSON object", errMalformed)
	}
	var a answer
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return answer{}, fmt.Errorf("%w: %v", errMalformed, err)
		}
		key, _ := t.(string)
		if seen[key] {
			return answer{}, fmt.Errorf("%w: %q given twice", errMalformed, key)
		}
		seen[key] = true
		t, err = dec.Token()
		if err != nil {
			return answer{}, fmt.Errorf("%w: %v", errMalformed, err)
		}
		val, ok := t.(string)
		switch {
		case key != "decision" && key != "reason":
			return answer{}, fmt.Errorf("%w: unknown member %q", errMalformed, key)
		case !ok:
			return answer{}, fmt.Errorf("%w: %q is not a string", errMalformed, key)
		case key == "reason":
			a.reason = val
		case val == string(toolloop.Allow) || val == string(toolloop.Deny):
			a.decision = toolloop.Decision(val)
		default:
			return answer{}, fmt.Errorf("%w: unknown decision %q", errMalformed, val)
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return answer{}, fmt.Errorf("%w: unterminated object", errMalformed)
	}
	if _, err := dec.Token(); err != io.EOF {
		return answer{}, fmt.Errorf("%w: text after the object", errMalformed)
	}
	if !seen["decision"] || !seen["reason"] {
		return answer{}, fmt.Errorf("%w: decision and reason are both required", errMalformed)
	}
	return a, nil
}
