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

// jsonString follows a byte-by-byte scan of JSON text in and out of its
// strings, escapes included, for the scans that look only at the structure.
type jsonString struct{ in, esc bool }

// holds reports whether c, the next byte of the scan, belongs to a string,
// its quotes included.
func (s *jsonString) holds(c byte) bool {
	switch {
	case !s.in:
		s.in = c == '"'
		return s.in
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		s.in = false
	}
	return true
}

// tooDeep reports whether the JSON in b nests deeper than MaxJSONDepth. It
// only counts brackets outside strings: b need not be valid.
func tooDeep(b []byte) bool {
	if len(b) <= 2*MaxJSONDepth {
		return false // each level costs two brackets
	}
	depth := 0
	var str jsonString
	for _, c := range b {
		if str.holds(c) {
			continue
		}
		switch c {
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
