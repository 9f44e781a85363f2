package sanitize

import "strings"

// matchPgpass finds the password of a PostgreSQL password file line,
// hostname:port:database:username:password, whose port (digits, or *)
// follows the colon at hit. The line is one of a .pgpass file, with the
// password the rest of it, or one written out by a command (echo
// "host:5432:db:user:password" >> ~/.pgpass), with the password ending at
// a space or the quote that opened it. The fields may escape ":" and "\"
// with a backslash. The host must start the line or follow a space or a
// quote, and be a name, an address, a socket directory or *: neither a
// clock (12:30:45) nor an IPv6 address nor a compiler's file:line:column
// is a line of a password file.
func matchPgpass(s string, hit int, _ *matchState, found func(start, end, ctx int)) int {
	i := pgpassPassword(s, hit)
	if i < 0 {
		return 0
	}
	// The host, which starts the line or follows a space or a quote.
	start := hit
	for start > 0 && hit-start < 256 && pgpassHostByte(s[start-1]) && !escapeBefore(s, start) {
		start--
	}
	if start == hit || strings.Trim(s[start:hit], digits) == "" {
		return 0
	}
	var quote byte
	lineStart := start == 0 || s[start-1] == '\n' || s[start-1] == '\r' || escapeBefore(s, start)
	if !lineStart {
		switch c := s[start-1]; c {
		case ' ', '\t':
		case '"', '\'', '`':
			quote = c
		default:
			return 0
		}
	}
	// The password: the rest of the line, or up to a space or the quote.
	vs, ve := i, i
	for ve < len(s) && ve-vs < maxMatch {
		c := s[ve]
		if c == '\n' || c == '\r' || c == quote && quote != 0 || !lineStart && (c == ' ' || c == '\t') {
			break
		}
		if c == '\\' && ve+1 < len(s) {
			switch s[ve+1] {
			case 'n', 'r', '"':
				// An escaped line break or quote: the text is inside a
				// JSON string, and this ends the line or the string.
			default:
				ve += 2
				continue
			}
			break
		}
		ve++
	}
	if lineStart {
		ve = vs + len(strings.TrimRight(s[vs:ve], " \t"))
	}
	if ve-vs > 0 && !placeholder(s[vs:ve]) {
		found(vs, ve, start)
		return ve
	}
	return 0
}

// pgpassFields is the rule's test of each keyword: whether the port, the
// database and the user, each ended by a colon, follow the colon at hit.
// Most colons before a digit (a clock, a file:line) are no such thing,
// and it tells at once.
func pgpassFields(s string, hit int) bool { return pgpassPassword(s, hit) >= 0 }

// pgpassPassword returns where the password starts, if the port, the
// database and the user follow the colon at hit, or -1.
func pgpassPassword(s string, hit int) int {
	i := hit + 1
	if s[i] == '*' {
		i++
	} else {
		for i < len(s) && i-hit <= 5 && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i >= len(s) || s[i] != ':' {
		return -1
	}
	for range 2 {
		j := pgpassField(s, i+1)
		if j == i+1 || j >= len(s) || s[j] != ':' {
			return -1
		}
		i = j
	}
	return i + 1
}

// pgpassHostByte reports whether c may be part of a password file's host:
// a name, an address, a socket directory or *.
func pgpassHostByte(c byte) bool {
	return isNameByte(c) || c == '*' || c == '/' || c == '[' || c == ']'
}

// pgpassField returns the end of the database or user field that starts
// at i: at the next colon that no backslash escapes, or at a space or a
// quote, which no such field holds.
func pgpassField(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; c {
		case ':', ' ', '\t', '\r', '\n', '"', '\'', '`':
			return i
		case '\\':
			if i+1 < len(s) && (s[i+1] == ':' || s[i+1] == '\\') {
				i += 2
				continue
			}
			return i
		}
		i++
	}
	return i
}
