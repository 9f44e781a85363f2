package sanitize

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

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
// kind (nil if none). A JSON document stays valid JSON: only its strings
// change, and a string under a key that names a secret ("password",
// "apiKey", ...) is a secret as a whole.
//
// Redact costs one pass over s to find the rules' keywords, and then
// tries each rule only at its keywords, with bounded work at each: its
// cost is linear in len(s), whatever s holds.
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
	if looksJSON(s) {
		return string(r.redactJSON(json.RawMessage(s), counts))
	}
	return r.redactText(s, counts)
}

// looksJSON reports whether s is a JSON object or array.
func looksJSON(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t))
}

type span struct{ start, end int }

// cand is a secret found: where it is and the rule that found it.
type cand struct{ start, end, rule int }

// How far from a keyword a rule that matches near its keywords looks, on
// a long line; how far an anchored match may reach (maxToken for a token,
// maxMatch for anything else). Each bound keeps the work per keyword
// constant, so that no text, however hostile, costs more than linear
// time.
const (
	lookBehind = 1 << 10
	lookAhead  = 4 << 10
	maxToken   = 16 << 10
	maxMatch   = 256
)

// windowEnd returns how far an anchored match that starts at a may reach:
// to the end of the token, for a token; to the end of the line, for a
// rule that matches within a line; and never further than the rule's
// reach (maxMatch by default). A secret the window cuts short is taken
// whole anyway (see find); the bound only spares the regexp package,
// whose backtracker clears memory in proportion to what it is given.
func (rule *Rule) windowEnd(s string, a int) int {
	if rule.token {
		return a + tokenEnd(s[a:min(len(s), a+maxToken)], 0, &tokenStops)
	}
	reach := rule.reach
	if reach == 0 {
		reach = maxMatch
	}
	end := min(len(s), a+reach)
	if rule.near {
		end = a + lineBreak(s[a:end])
	}
	return end
}

func (r *Redactor) redactText(s string, counts *map[string]int) string {
	rules := r.rules()
	ix := indexFor(rules)
	var spans [][]span // by rule, allocated at the first keyword
	ix.scan(s, func(pos int, rs []int) {
		if spans == nil {
			spans = make([][]span, len(rules))
		}
		for _, i := range rs {
			sp := &spans[i]
			if rules[i].match != nil {
				*sp = append(*sp, span{pos, pos})
				continue
			}
			if at := rules[i].anchor; at != nil {
				// The match starts at the anchor: try it there only.
				a := at(s, pos)
				if a < 0 || len(*sp) > 0 && (*sp)[len(*sp)-1].start == a {
					continue
				}
				*sp = append(*sp, span{a, a}) // find computes the window
				continue
			}
			if !rules[i].near {
				if len(*sp) == 0 {
					*sp = append(*sp, span{lineStart(s, pos, len(s)), len(s)})
				}
				continue
			}
			w := span{lineStart(s, pos, lookBehind), lineEnd(s, pos, lookAhead)}
			if n := len(*sp); n > 0 && w.start <= (*sp)[n-1].end {
				(*sp)[n-1].end = max((*sp)[n-1].end, w.end)
				continue
			}
			*sp = append(*sp, w)
		}
	})
	if spans == nil && len(ix.always) == 0 {
		return s
	}
	var found []cand
	hasMarker := strings.Contains(s, marker)
	// add takes a secret rule ri found; made once, since a closure made
	// at each try would cost an allocation per keyword.
	var ri int
	add := func(start, end, ctx int) {
		secret := s[start:end]
		// A secret, or the name it is assigned to, inside a
		// [REDACTED:kind] is no secret: redacting twice changes
		// nothing.
		if secret == "" || hasMarker && inMarker(s, min(ctx, start), end) {
			return
		}
		if v := rules[ri].valid; v != nil && !v(s[ctx:start], secret) {
			return
		}
		found = accept(found, cand{start, end, ri})
	}
	for i := range rules {
		ri = i
		var in []span
		switch {
		case slices.Contains(ix.always, i):
			in = []span{{0, len(s)}}
		case spans != nil:
			in = spans[i]
		}
		var st matchState
		skip := 0 // keywords before this were inside what a try took in
		for _, sp := range in {
			if sp.start < skip {
				continue
			}
			skip = rules[i].find(s, sp, &st, add)
		}
	}
	if len(found) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	if *counts == nil {
		*counts = make(map[string]int)
	}
	for _, c := range found {
		kind := rules[c.rule].Kind
		b.WriteString(s[last:c.start])
		b.WriteString(marker + kind + "]")
		last = c.end
		(*counts)[kind]++
	}
	b.WriteString(s[last:])
	return b.String()
}

// inMarker reports whether s[start:end] overlaps a [REDACTED:kind] that
// s already holds, so that redacting twice changes nothing.
func inMarker(s string, start, end int) bool {
	m := strings.LastIndex(s[:end], marker)
	if m < 0 {
		return false
	}
	close := strings.IndexByte(s[m:], ']')
	return close < 0 || m+close+1 > start
}

// accept adds c to found, which is sorted and without overlaps. A secret
// that overlaps one found before (by an earlier rule) is merged into it,
// so that no part of either is left.
func accept(found []cand, c cand) []cand {
	j, _ := slices.BinarySearchFunc(found, c.start, func(f cand, start int) int {
		if f.end <= start {
			return -1
		}
		return 1
	})
	if j == len(found) || found[j].start >= c.end {
		return slices.Insert(found, j, c)
	}
	f := &found[j]
	f.start, f.end = min(f.start, c.start), max(f.end, c.end)
	k := j + 1
	for k < len(found) && found[k].start < f.end {
		f.end = max(f.end, found[k].end)
		k++
	}
	return slices.Delete(found, j+1, k)
}

// lineStart returns the start of the line that holds pos, or pos-limit if
// the line starts before that.
func lineStart(s string, pos, limit int) int {
	lo := max(pos-limit, 0)
	if i := strings.LastIndexByte(s[lo:pos], '\n'); i >= 0 {
		return lo + i + 1
	}
	return lo
}

// lineEnd returns the index just past the newline that ends the line at
// pos, or pos+limit if it ends after that, or len(s).
func lineEnd(s string, pos, limit int) int {
	hi := min(pos+limit, len(s))
	if i := strings.IndexByte(s[pos:hi], '\n'); i >= 0 {
		return pos + i + 1
	}
	return hi
}

// find calls found with each secret the rule finds in s[sp.start:sp.end]
// (for an anchored rule, at sp.start; for a rule matched by code, at the
// keyword at sp.start): its span in s, and the start of the match it is
// part of. It returns the index before which later keywords need no try:
// they are inside what this try took in.
func (rule *Rule) find(s string, sp span, st *matchState, found func(start, end, ctx int)) int {
	switch {
	case rule.match != nil:
		return rule.match(s, sp.start, st, found)
	case rule.anchored != nil:
		sp.end = rule.windowEnd(s, sp.start)
		if rule.needs != "" && !strings.Contains(s[sp.start:sp.end], rule.needs) {
			return 0
		}
		loc := rule.anchored.FindStringSubmatchIndex(s[sp.start:sp.end])
		if loc == nil {
			if rule.token {
				return sp.end // the rest of the token is no start of one
			}
			return 0
		}
		start, end, ok := rule.secret(loc)
		if !ok {
			return sp.start + loc[1]
		}
		start, end = sp.start+start, sp.start+end
		if end == sp.end && !rule.token {
			// The window cut the secret short: take the rest of its
			// token too.
			end += tokenEnd(s[end:min(len(s), end+maxToken)], 0, &secretTail)
		}
		found(start, end, sp.start)
		return max(end, sp.start+loc[1])
	default:
		rule.findAll(s, sp, found)
	}
	return 0
}

// matchState is what a rule matched by code keeps between the keywords of
// one text. It is zero at the start of each text.
type matchState struct{ a, b int }

// lineBreak returns the index of the first line break in s, a newline or
// a JSON escape \n or \r, or len(s).
func lineBreak(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return i
		case '\\':
			if i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r') {
				return i
			}
			i++
		}
	}
	return len(s)
}

func (rule *Rule) findAll(s string, sp span, found func(start, end, ctx int)) {
	for _, loc := range rule.Pattern.FindAllStringSubmatchIndex(s[sp.start:sp.end], -1) {
		if start, end, ok := rule.secret(loc); ok {
			found(sp.start+start, sp.start+end, sp.start+loc[0])
		}
	}
}

// secret returns the span of the secret in a match.
func (rule *Rule) secret(loc []int) (start, end int, ok bool) {
	switch {
	case rule.anyGroup:
		for g := 1; 2*g+1 < len(loc); g++ {
			if loc[2*g] >= 0 {
				return loc[2*g], loc[2*g+1], true
			}
		}
		return 0, 0, false
	case rule.Group > 0 && 2*rule.Group+1 < len(loc):
		start, end = loc[2*rule.Group], loc[2*rule.Group+1]
		return start, end, start >= 0
	}
	return loc[0], loc[1], true
}

// wordBefore reports whether s[i] is inside a word: a letter, digit or
// underscore comes before it that is not the end of a JSON escape (\n,
// \u0026).
func wordBefore(s string, i int) bool {
	return i > 0 && isWordByte(s[i-1]) && !escapeBefore(s, i)
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

var (
	secretKey = regexp.MustCompile(`(?i)^` + namePattern + `$`)
	keyKey    = regexp.MustCompile(`(?i)^[\w.-]*?key[0-9]*$`)
)

// keyedSecret reports whether value, a JSON string under key, is a secret
// by its key: {"password": "..."}.
func keyedSecret(key, value string) bool {
	ctx := key + `": "`
	switch {
	case secretKey.MatchString(key):
		return literal(ctx, value)
	case keyKey.MatchString(key):
		return keyAssigned(ctx, value)
	}
	return false
}

// redactJSON redacts the string values (and keys) of a JSON document in
// place, leaving its layout alone: only strings that held a secret are
// re-encoded. A string under a key that names a secret is replaced whole,
// as is the value of a {"name": "DB_PASSWORD", "value": "..."} pair.
func (r *Redactor) redactJSON(raw json.RawMessage, counts *map[string]int) json.RawMessage {
	s := string(raw)
	var b strings.Builder
	last := 0
	var (
		prev     byte   // the last byte outside strings that is not space
		key      string // the key of the member being read
		pairName string // the value of the object's "name" member
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '"' {
			switch c {
			case ' ', '\t', '\r', '\n':
			case '{', '}':
				pairName = ""
				prev = c
			default:
				prev = c
			}
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
		v, ok := unquote(lit)
		isKey := nextByte(s, j+1) == ':'
		member := prev == ':'
		prev = '"'
		i = j
		if !ok {
			continue
		}
		red := r.redact(v, counts)
		switch {
		case isKey:
			key = v
		case member && red == v && (keyedSecret(key, v) || strings.EqualFold(key, "value") && pairName != "" && secretKey.MatchString(pairName) && !placeholder(v)):
			red = marker + "credential]"
			if *counts == nil {
				*counts = make(map[string]int)
			}
			(*counts)["credential"]++
		case member && (strings.EqualFold(key, "name") || strings.EqualFold(key, "key")):
			pairName = v
		}
		if red == v {
			continue
		}
		enc, _ := json.Marshal(red)
		b.WriteString(s[last : i-len(lit)+1])
		b.Write(enc)
		last = j + 1
	}
	if last == 0 {
		return raw
	}
	b.WriteString(s[last:])
	return json.RawMessage(b.String())
}

// unquote decodes a JSON string literal.
func unquote(lit string) (string, bool) {
	inner := lit[1 : len(lit)-1]
	if !strings.ContainsRune(inner, '\\') && utf8.ValidString(inner) {
		return inner, true
	}
	var v string
	err := json.Unmarshal([]byte(lit), &v)
	return v, err == nil
}

// nextByte returns the first byte of s[i:] that is not JSON white space,
// or 0.
func nextByte(s string, i int) byte {
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return s[i]
		}
	}
	return 0
}

// PostToolUse implements [toolloop.PostToolUseHook]. When it finds secrets
// it returns a new result, with the counts added to Meta.Extra[ExtraKey];
// it never changes res. The error of a failed result is redacted too, but
// not counted, since its text is usually the content's.
func (r *Redactor) PostToolUse(_ context.Context, _ *toolloop.Call, res *toolloop.ToolResult) (*toolloop.ToolResult, error) {
	if res == nil {
		return nil, nil
	}
	if out, _ := r.Result(res); out != res {
		return out, nil
	}
	return nil, nil
}

// Result returns a redacted copy of res and how many secrets it replaced
// in its content, recorded in Meta.Extra[ExtraKey]. The error message and
// the text of Meta (repairs, modifications, the strings of Extra) are
// redacted as well, but not counted. With nothing to redact, it returns
// res itself.
func (r *Redactor) Result(res *toolloop.ToolResult) (*toolloop.ToolResult, int) {
	var counts, discard map[string]int
	out := *res
	w := walker{r: r, counts: &discard}
	changed := or(walker{r: r, counts: &counts}.contents(&out.Content), w.meta(&out.Meta))
	if out.Error != nil {
		e := *out.Error
		if w.str(&e.Message) {
			out.Error = &e
			changed = true
		}
	}
	if !changed {
		return res, 0
	}
	if counts == nil {
		return &out, 0
	}
	out.Meta.Extra = maps.Clone(out.Meta.Extra)
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
