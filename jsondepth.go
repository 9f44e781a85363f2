package toolloop

// MaxJSONDepth is the deepest nesting the loop accepts in a call's
// arguments and keeps as JSON in a tool's output. encoding/json refuses to
// read documents nested more than 10,000 levels, and a transcript, a pause
// state or an event log line wraps arguments and output in a few levels of
// its own, so a value near that limit could be written but never read
// back. Arguments nested deeper are refused as invalid_args; JSON output
// nested deeper reaches the model as text; and a transcript keeps such
// arguments as a string (see [ToolCall.MarshalJSON]), so it always
// round-trips.
const MaxJSONDepth = 1000

// tooDeep reports whether the JSON in b nests deeper than MaxJSONDepth. It
// only counts brackets outside strings: b need not be valid.
func tooDeep(b []byte) bool {
	if len(b) <= 2*MaxJSONDepth {
		return false // each level costs two brackets
	}
	depth := 0
	inStr, esc := false, false
	for _, c := range b {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			if depth++; depth > MaxJSONDepth {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}
