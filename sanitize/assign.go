package sanitize

import "strings"

// matchAssignment finds the value assigned to the name that holds the
// keyword at hit, when the name says it is a secret, in the forms that
// configuration, commands and code write it:
//
//	"password": "...", api_key = '...', PASSWORD: "...", 'token' => '...'
//	app.config['SECRET_KEY'] = "...", os.environ["API_KEY"] = "..."
//	DB_PASSWORD=... (an .env file; a command; --password=...; a URL query;
//	  a connection string ...;Password=...; .npmrc's :_authToken=...)
//	password: ... (YAML, INI, properties: the rest of the line)
//	X-Api-Key: ..., PRIVATE-TOKEN: ... (headers: a value that looks made)
//	--password ..., --token "..." (command-line flags)
//	<password>...</password> (XML)
//
// It is the credential rule of the catalogue, written as code rather than
// regular expressions: it runs at every keyword, and code costs nothing
// where no assignment follows, where the regexp package would search.
// It follows gitleaks' generic-api-key in what it looks for, and decides
// by the name and the value (literal, bare, keyAssigned) rather than by
// entropy alone.
func matchAssignment(s string, hit int, _ *matchState, found func(start, end, ctx int)) int {
	start, end := nameStart(s, hit), nameEnd(s, hit)
	if start == end {
		return 0
	}
	name := compact(s[start:end])
	keyName := !secretSuffix(name)
	if keyName && !strings.HasSuffix(name, "key") {
		return end
	}
	// emit reports the value s[vs:ve] if it passes valid. The next try
	// starts after the value if it was taken, or if it was long: a name
	// inside a long token is part of it, and skipping it keeps the work
	// per keyword bounded (see valueEnd). After a short value that was
	// not taken, the next keyword is tried even inside it.
	emit := func(vs, ve int, valid func(ctx, s string) bool) int {
		if ve-vs >= 3 && valid(s[start:vs], s[vs:ve]) {
			found(vs, ve, start)
			return ve
		}
		return skipLong(vs, ve)
	}
	quotedValid, bareValid := literal, bare
	if keyName {
		quotedValid, bareValid = keyAssigned, bareKeyValue
	}

	// <password>...</password>
	if elementOpen(s, start) {
		text, ok := elementClose(s, end)
		if !ok || keyName {
			return 0
		}
		ve, ok := elementText(s, text)
		if ok {
			return emit(text, ve, notPlaceholder)
		}
		return skipLong(text, ve)
	}

	// --password value
	if s[start] == '-' && flagStart(s, start) && !keyName && end < len(s) && (s[end] == ' ' || s[end] == '\t') {
		vs := skipSpace(s, end)
		if vs == len(s) || s[vs] == '-' {
			return 0
		}
		if ve, ok := quotedEnd(s, vs); ok {
			return emit(vs+quoteLen(s, vs), ve, flagValue)
		} else if ve-vs >= maxMatch {
			return ve
		}
		return emit(vs, valueEnd(s, vs, &spaceQuote), flagValue)
	}

	// NAME=value, with nothing between the name and the =.
	if end < len(s) && s[end] == '=' && (end+1 == len(s) || s[end+1] != '>' && s[end+1] != '=') {
		vs := end + 1
		if ve, ok := quotedEnd(s, vs); ok {
			return emit(vs+quoteLen(s, vs), ve, quotedValid)
		} else if ve-vs >= maxMatch {
			return ve
		}
		ve := valueEnd(s, vs, &shellValue)
		if ve == len(s) || strings.IndexByte(" \t\r\n;&|<>)]},\\\"'`", s[ve]) >= 0 {
			return emit(vs, ve, bareValid)
		}
		return skipLong(vs, ve)
	}

	// A quote or bracket that closes the name, then =, :, :=, =>.
	sep := end
	if sep < len(s) && s[sep] == '\\' {
		sep++
	}
	if sep < len(s) && strings.IndexByte("\"'`", s[sep]) >= 0 {
		sep++
	}
	if sep < len(s) && s[sep] == ']' {
		sep++
	}
	sep = skipSpace(s, sep)
	var op string
	for _, o := range []string{"=>", `=\u003e`, ":=", "=", ":"} {
		if strings.HasPrefix(s[sep:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return 0
	}
	vs := skipSpace(s, sep+len(op))
	if ve, ok := quotedEnd(s, vs); ok {
		return emit(vs+quoteLen(s, vs), ve, quotedValid)
	} else if ve-vs >= maxMatch {
		return ve
	}
	if vs == len(s) || op == "=>" || op == `=\u003e` {
		return 0
	}
	switch {
	case keyName:
		return emit(vs, valueEnd(s, vs, &keyValueEnd), bareKeyValue)
	case lineStarts(s, start):
		// The rest of the line, after spaces and before a comment.
		if strings.IndexByte("#\"'`\\", s[vs]) >= 0 {
			return 0
		}
		ve := valueEnd(s, vs, &spaceQuote)
		rest := skipSpace(s, ve)
		if rest < len(s) && s[rest] == '#' && rest > ve {
			rest += lineBreak(s[rest:])
		}
		if rest < len(s) && s[rest] == '\r' {
			rest++
		}
		if rest == len(s) || lineBreak(s[rest:]) == 0 {
			return emit(vs, ve, bare)
		}
		return skipLong(vs, ve)
	case op == ":":
		// A header or prose: the value must look made by a machine.
		ve := valueEnd(s, vs, &headerValue)
		if ve-vs >= 8 && (ve == len(s) || strings.IndexByte(" \t\r\n\"'`\\;", s[ve]) >= 0) {
			return emit(vs, ve, bareToken)
		}
		return skipLong(vs, ve)
	}
	return 0
}

// valueEnd returns the index of the first byte at or after i that is in
// stop, or len(s), looking no further than maxToken.
func valueEnd(s string, i int, stop *stopSet) int {
	return i + tokenEnd(s[i:min(len(s), i+maxToken)], 0, stop)
}

// skipLong returns where the next try may start after a value at
// s[vs:ve] that was not taken: after it if it is long, else anywhere (0).
func skipLong(vs, ve int) int {
	if ve-vs >= maxMatch {
		return ve
	}
	return 0
}

// elementText finds the end of an XML element's text that starts at i:
// the < (or \u003c) of the closing tag, on the same line.
func elementText(s string, i int) (int, bool) {
	for j := i; j < len(s) && j-i < lookAhead; j++ {
		switch s[j] {
		case '<':
			return j, true
		case '\n':
			return j, false
		case '\\':
			switch {
			case strings.HasPrefix(s[j:], `\u003c`):
				return j, true
			case j+1 < len(s) && (s[j+1] == 'n' || s[j+1] == 'r'):
				return j, false
			}
			j++
		}
	}
	return min(len(s), i+lookAhead), false
}

// bareKeyValue vets an unquoted value of a name that ends in key.
func bareKeyValue(ctx, s string) bool { return len(s) >= 16 && keyAssigned(ctx, s) }

// skipSpace returns the index of the first byte at or after i that is not
// a space or a tab.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// tokenEnd returns the index of the first byte at or after i that is in
// stop, or len(s).
func tokenEnd(s string, i int, stop *stopSet) int {
	for i < len(s) && !stop[s[i]] {
		i++
	}
	return i
}

// A stopSet is a set of bytes that end a token.
type stopSet [256]bool

func stops(chars string) (set stopSet) {
	for i := range len(chars) {
		set[chars[i]] = true
	}
	return set
}

// The bytes that end a value: a space, a quote, a backslash (an escape);
// for a value in a command, also what a shell gives meaning to; for a
// key, also brackets; for a header, commas and semicolons; for a token
// (see Rule.token), also angle brackets; after a secret cut short (see
// Rule.find), also commas and semicolons.
var (
	spaceQuote  = stops(" \t\r\n\"'`\\")
	shellValue  = stops(" \t\r\n\"'`;&|<>()[]{}\\,")
	keyValueEnd = stops(" \t\r\n\"'`\\,;&|(){}[]<>")
	headerValue = stops(" \t\r\n\"'`\\,;")
	tokenStops  = stops(" \t\r\n\"'`<>\\")
	secretTail  = stops(" \t\r\n\"'`<>\\,;")
)

// quoteLen returns the length of the opening quote at s[i]: 2 for an
// escaped double quote (\"), else 1.
func quoteLen(s string, i int) int {
	if s[i] == '\\' {
		return 2
	}
	return 1
}

// quotedEnd reports whether a quoted string on one line starts at s[i],
// and where its text ends: before the closing quote. A double quote may
// be escaped (\"), as inside a JSON string, and then so is its close. A
// string longer than lookAhead is not taken for a value.
func quotedEnd(s string, i int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	q, escaped := s[i], false
	if q == '\\' && i+1 < len(s) && s[i+1] == '"' {
		q, escaped = '"', true
		i++
	}
	if q != '"' && q != '\'' && q != '`' {
		return i, false
	}
	j := i + 1
	for ; j < len(s) && j-i < lookAhead; j++ {
		c := s[j]
		switch {
		case c == '\n' || c == '\r':
			return j, false
		case c == '\\' && q == '"' && j+1 < len(s):
			if s[j+1] == '"' {
				if escaped {
					return j, true // the \" that closes an escaped quote
				}
				j++ // an escaped quote inside the string
				continue
			}
			if s[j+1] == 'n' || s[j+1] == 'r' {
				return j, false // a line break, escaped
			}
			j++
		case c == q && !escaped:
			return j, true
		}
	}
	return j, false
}

// lineStarts reports whether the name at start begins its line, after
// spaces and export, set or a YAML list's dash.
func lineStarts(s string, start int) bool {
	line := start
	for line > 0 && s[line-1] != '\n' && !escapeBefore(s, line) && start-line < 64 {
		line--
	}
	before := strings.TrimSpace(s[line:start])
	for _, p := range []string{"export", "set", "-"} {
		before = strings.TrimSpace(strings.TrimPrefix(before, p))
	}
	return before == "" && (line == 0 || s[line-1] == '\n' || escapeBefore(s, line))
}

// flagStart reports whether the flag at start follows a space, a tab or a
// line break.
func flagStart(s string, start int) bool {
	return start == 0 || s[start-1] == ' ' || s[start-1] == '\t' || s[start-1] == '\n' || escapeBefore(s, start)
}

// elementOpen reports whether an XML tag opens just before start: < or
// its JSON escape \u003c.
func elementOpen(s string, start int) bool {
	return start >= 1 && s[start-1] == '<' || start >= 6 && strings.EqualFold(s[start-6:start], `\u003c`)
}

// elementClose reports whether the tag closes at end, and where its text
// starts.
func elementClose(s string, end int) (int, bool) {
	switch {
	case end < len(s) && s[end] == '>':
		return end + 1, true
	case strings.HasPrefix(strings.ToLower(s[end:min(end+6, len(s))]), `\u003e`):
		return end + 6, true
	}
	return 0, false
}
