package sanitize

import (
	"context"
	"encoding/json"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/toolloop/toolloop"
)

// ExtraKey is the key under which a Redactor records, in a result's
// Meta.Extra, how many secrets of each kind it replaced: a map[string]int
// from kind to count. It is absent when nothing was replaced.
const ExtraKey = "redactions"

// Redactor replaces secrets with [REDACTED:<kind>]. The zero value uses
// [DefaultRules]. Set Rules before use; a Redactor is then safe for
// concurrent use.
type Redactor struct {
	// Rules are the shapes to look for, in order; nil means DefaultRules.
	Rules []Rule
}

func (r *Redactor) rules() []Rule {
	if r.Rules != nil {
		return r.Rules
	}
	return defaultRules
}

// Redact returns s with every secret replaced, and the number replaced by
// kind (nil if none).
func (r *Redactor) Redact(s string) (string, map[string]int) {
	var counts map[string]int
	s = r.redact(s, &counts)
	return s, counts
}

const marker = "[REDACTED:"

func (r *Redactor) redact(s string, counts *map[string]int) string {
	if s == "" {
		return s
	}
	var lower string
	rules := r.rules()
	for i := range rules {
		rule := &rules[i]
		if rule.Pattern == nil {
			continue
		}
		var out string
		var n int
		switch {
		case len(rule.Keywords) == 0:
			out, n = apply(rule, s)
		default:
			if lower == "" {
				lower = asciiLower(s)
			}
			if !containsAny(lower, rule.Keywords) {
				continue
			}
			if rule.near {
				out, n = applyNear(rule, s, lower)
			} else {
				out, n = apply(rule, s)
			}
		}
		if n == 0 {
			continue
		}
		s, lower = out, ""
		if *counts == nil {
			*counts = make(map[string]int)
		}
		(*counts)[rule.Kind] += n
	}
	return s
}

// asciiLower lower-cases ASCII letters only, so that offsets into the
// result are offsets into s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// applyNear is apply on each line that holds one of the rule's keywords.
func applyNear(rule *Rule, s, lower string) (string, int) {
	type span struct{ start, end int }
	var spans []span
	for _, w := range rule.Keywords {
		w = strings.ToLower(w)
		for off := 0; ; {
			i := strings.Index(lower[off:], w)
			if i < 0 {
				break
			}
			i += off
			start := strings.LastIndexByte(s[:i], '\n') + 1
			end := lineEnd(s, i)
			spans = append(spans, span{start, end})
			off = i + len(w)
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	last, total := 0, 0
	for k := 0; k < len(spans); {
		sp := spans[k]
		for k++; k < len(spans) && spans[k].start < sp.end; k++ {
			sp.end = max(sp.end, spans[k].end)
		}
		out, n := apply(rule, s[sp.start:sp.end])
		if n == 0 {
			continue
		}
		b.WriteString(s[last:sp.start])
		b.WriteString(out)
		last = sp.end
		total += n
	}
	if total == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), total
}

// lineEnd returns the index just past the newline that ends the line at
// i, or len(s).
func lineEnd(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}

// apply replaces the rule's secrets in s and returns how many it replaced.
func apply(rule *Rule, s string) (string, int) {
	var b strings.Builder
	last, n := 0, 0
	for start, end := range matches(rule, s) {
		if start < last {
			continue
		}
		secret := s[start:end]
		if secret == "" || strings.HasPrefix(secret, marker) || (rule.valid != nil && !rule.valid(secret)) {
			continue
		}
		if n == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString(marker + rule.Kind + "]")
		last = end
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// matches yields the span of each secret the rule finds in s: the whole
// match, or its Group.
func matches(rule *Rule, s string) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		group := func(loc []int) (int, int) {
			g := 0
			if rule.Group > 0 && 2*rule.Group+1 < len(loc) {
				g = rule.Group
			}
			return loc[2*g], loc[2*g+1]
		}
		if !rule.boundary {
			for _, loc := range rule.Pattern.FindAllStringSubmatchIndex(s, -1) {
				if start, end := group(loc); start >= 0 && !yield(start, end) {
					return
				}
			}
			return
		}
		for pos := 0; pos < len(s); {
			loc := rule.Pattern.FindStringSubmatchIndex(s[pos:])
			if loc == nil {
				return
			}
			for i := range loc {
				if loc[i] >= 0 {
					loc[i] += pos
				}
			}
			if loc[0] > 0 && isWordByte(s[loc[0]-1]) {
				pos = loc[0] + 1 // as \b would: try again further on
				continue
			}
			if start, end := group(loc); start >= 0 && !yield(start, end) {
				return
			}
			pos = max(loc[1], loc[0]+1)
		}
	}
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// redactJSON redacts the string values (and keys) of a JSON document in
// place, leaving its layout alone: only strings that held a secret are
// re-encoded.
func (r *Redactor) redactJSON(raw json.RawMessage, counts *map[string]int) json.RawMessage {
	s := string(raw)
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			break // not valid JSON; leave the rest
		}
		lit := s[i : j+1]
		var v string
		if err := json.Unmarshal([]byte(lit), &v); err == nil {
			if red := r.redact(v, counts); red != v {
				enc, _ := json.Marshal(red)
				b.WriteString(s[last:i])
				b.Write(enc)
				last = j + 1
			}
		}
		i = j
	}
	if last == 0 {
		return raw
	}
	b.WriteString(s[last:])
	return json.RawMessage(b.String())
}

// redactContent redacts one block.
func (r *Redactor) redactContent(c toolloop.Content, counts *map[string]int) toolloop.Content {
	if c.Text != "" {
		c.Text = r.redact(c.Text, counts)
	}
	if len(c.JSON) > 0 {
		c.JSON = r.redactJSON(c.JSON, counts)
	}
	if c.URI != "" {
		c.URI = r.redact(c.URI, counts)
	}
	return c
}

// PostToolUse implements [toolloop.PostToolUseHook]. When it finds secrets
// it returns a new result, with the counts added to Meta.Extra[ExtraKey];
// it never changes res. The error of a failed result is redacted too, but
// not counted, since its text is usually the content's.
func (r *Redactor) PostToolUse(_ context.Context, _ *toolloop.Call, res *toolloop.ToolResult) (*toolloop.ToolResult, error) {
	if res == nil {
		return nil, nil
	}
	out, n := r.Result(res)
	if n == 0 {
		return nil, nil
	}
	return out, nil
}

// Result returns a redacted copy of res and how many secrets it replaced,
// recorded in Meta.Extra[ExtraKey]. With none, it returns res itself.
func (r *Redactor) Result(res *toolloop.ToolResult) (*toolloop.ToolResult, int) {
	var counts map[string]int
	content := make([]toolloop.Content, len(res.Content))
	for i, c := range res.Content {
		content[i] = r.redactContent(c, &counts)
	}
	if counts == nil {
		return res, 0
	}
	out := *res
	out.Content = content
	if res.Error != nil {
		e := *res.Error
		var discard map[string]int
		e.Message = r.redact(e.Message, &discard)
		out.Error = &e
	}
	out.Meta.Extra = maps.Clone(res.Meta.Extra)
	if out.Meta.Extra == nil {
		out.Meta.Extra = make(map[string]any)
	}
	total := 0
	merged := make(map[string]int, len(counts))
	if prev, ok := out.Meta.Extra[ExtraKey].(map[string]int); ok {
		maps.Copy(merged, prev)
	}
	for k, v := range counts {
		merged[k] += v
		total += v
	}
	out.Meta.Extra[ExtraKey] = merged
	return &out, total
}

// RedactEvent returns e with secrets redacted from what it carries of tool
// calls: arguments, partial output and the result. Use it to keep secrets
// out of an event log, whose partial output no post-tool-use hook sees:
//
//	loop.OnEvent = func(e toolloop.Event) { w.Record(redactor.RedactEvent(e)) }
//
// It never changes what e points to.
func (r *Redactor) RedactEvent(e toolloop.Event) toolloop.Event {
	var counts map[string]int
	if e.Text != "" {
		e.Text = r.redact(e.Text, &counts)
	}
	if len(e.Arguments) > 0 {
		e.Arguments = r.redactJSON(e.Arguments, &counts)
	}
	if e.Result != nil {
		e.Result, _ = r.Result(e.Result)
	}
	return e
}
