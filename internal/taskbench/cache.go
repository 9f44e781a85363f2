package taskbench

import (
	"bytes"
	"errors"
	"slices"
)

// estTokens estimates the tokens of n bytes, as the benchmarks of this
// repository do: bytes/4.
func estTokens(n int) int64 { return int64(n / 4) }

// commonPrefix returns how many bytes a and b share at their start.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	// Whole blocks first, compared by the runtime's memequal.
	const block = 4096
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// promptOrder rewrites a request body in the order the provider forms
// its prompt, which is the order its cache sees: the other fields (the
// model, the limits) first, sorted by key, then the fields of order, in
// order. A JSON object's keys may come in any order on the wire; the
// cache reads the tools, then the system prompt, then the messages.
func promptOrder(body []byte, order []string) ([]byte, error) {
	fields, err := topFields(body)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(len(body))
	var rest []string
	for k := range fields {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range append(rest, order...) {
		v, ok := fields[k]
		if !ok {
			continue
		}
		out.WriteString(k)
		out.WriteByte('=')
		out.Write(v)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// errNotObject reports a request body that is not a JSON object.
var errNotObject = errors.New("taskbench: the request body is not a JSON object")

// topFields splits a JSON object into its fields' raw values, by key,
// without decoding them (the request builders' output is valid JSON).
func topFields(b []byte) (map[string][]byte, error) {
	fields := map[string][]byte{}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errNotObject
	}
	for i = skipSpace(b, i+1); i < len(b) && b[i] != '}'; {
		if b[i] != '"' {
			return nil, errNotObject
		}
		e := stringEnd(b, i)
		key := string(b[i+1 : e])
		i = skipSpace(b, e+1)
		if i >= len(b) || b[i] != ':' {
			return nil, errNotObject
		}
		i = skipSpace(b, i+1)
		j := valueEnd(b, i)
		fields[key] = b[i:j]
		i = skipSpace(b, j)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	if i >= len(b) {
		return nil, errNotObject
	}
	return fields, nil
}

// skipSpace returns the index of the first byte of b from i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// cacheMarker starts an Anthropic cache breakpoint in a request.
var cacheMarker = []byte(`"cache_control":`)

// stripMarkers removes Anthropic's cache_control fields from a prompt,
// since the cache's key ignores them (a breakpoint moves from turn to
// turn, the content before it does not), and returns the positions, in
// the stripped prompt, of the breakpoints: the end of each block that
// held a marker.
func stripMarkers(b []byte) ([]byte, []int) {
	var out []byte
	var at []int
	for {
		i := bytes.Index(b, cacheMarker)
		if i < 0 {
			out = append(out, b...)
			break
		}
		end := valueEnd(b, skipSpace(b, i+len(cacheMarker)))
		start := i
		switch {
		case start > 0 && b[start-1] == ',':
			start--
		case end < len(b) && b[end] == ',':
			end++
		}
		out = append(out, b[:start]...)
		at = append(at, len(out))
		b = b[end:]
	}
	bps := make([]int, len(at))
	for k, p := range at {
		bps[k] = p + objectEnd(out[p:])
	}
	return out, bps
}

// valueEnd returns the index just past the JSON value that starts at
// b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i) + 1
	case '{', '[':
		return i + 1 + objectEnd(b[i+1:])
	}
	for i < len(b) && !bytes.ContainsRune([]byte(",}] \t\n\r"), rune(b[i])) {
		i++
	}
	return i
}

// objectEnd returns the length of b up to and including the brace (or
// bracket) that closes the object (or array) b is inside.
func objectEnd(b []byte) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return i + 1
			}
		}
	}
	return len(b)
}

// stringEnd returns the index of the quote closing the string that
// starts at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b)
}

// A cachePolicy simulates a provider's prompt cache: given the previous
// request's prompt and this one's, the tokens this one reads from the
// cache and writes to it.
type cachePolicy interface {
	// prompt prepares a request's prompt (in prompt order) for prefix
	// comparisons, and returns where its breakpoints are, if the cache
	// has any.
	prompt(p []byte) ([]byte, []int)
	// cached returns the tokens read and written, given the common
	// prefix of the previous and this prompt, in bytes.
	cached(lcp int, prevBPs, curBPs []int) (read, write int64)
}

// implicitCache is OpenAI's and Gemini's implicit prefix caching: the
// longest prefix shared with a recent request, counted in blocks of
// block tokens, once it reaches min tokens. (OpenAI documents 1,024
// tokens and increments of 128; Gemini documents a minimum of 1,024
// tokens for Flash and no block size, taken here to be the same.) No
// writes are billed.
type implicitCache struct {
	min, block int64
}

func (implicitCache) prompt(p []byte) ([]byte, []int) { return p, nil }

func (c implicitCache) cached(lcp int, _, _ []int) (read, write int64) {
	t := estTokens(lcp)
	if t < c.min {
		return 0, 0
	}
	return t - t%c.block, 0
}

// breakpointCache is Anthropic's cache: a request reads the longest
// prefix that the previous request wrote at one of its breakpoints
// (within the shared prefix and no further than this request's last
// breakpoint), and writes what lies between that and its own last
// breakpoint. Prefixes under min tokens are not cached.
type breakpointCache struct {
	min int64
}

func (breakpointCache) prompt(p []byte) ([]byte, []int) { return stripMarkers(p) }

func (c breakpointCache) cached(lcp int, prevBPs, curBPs []int) (read, write int64) {
	if len(curBPs) == 0 {
		return 0, 0
	}
	last := slices.Max(curBPs)
	hit := 0
	for _, q := range prevBPs {
		if q <= lcp && q <= last && q > hit {
			hit = q
		}
	}
	if estTokens(hit) >= c.min {
		read = estTokens(hit)
	}
	if estTokens(last) >= c.min {
		write = max(0, estTokens(last)-read)
	}
	return read, write
}
