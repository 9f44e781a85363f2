package sanitize

import "strings"

// The anchors of the built-in rules (see Rule.anchor): each finds, from
// a keyword, where a match must start, with the checks that the start of
// a pattern would make: a word boundary, a name followed by = or :.

// atWord anchors a match at its keyword, which must start a word.
func atWord(s string, hit int) int {
	if wordBefore(s, hit) {
		return -1
	}
	return hit
}

// isNameByte reports whether c may be part of a name: a letter, digit,
// underscore, dot or hyphen.
func isNameByte(c byte) bool { return isWordByte(c) || c == '.' || c == '-' }

// nameStart returns where the name that holds s[hit] starts: after the
// last byte before hit that cannot be part of a name, or after a JSON
// escape (\n, \u0026).
func nameStart(s string, hit int) int {
	i := hit
	for i > 0 && isNameByte(s[i-1]) && !escapeBefore(s, i) {
		i--
	}
	return i
}

// atAnyName anchors a match at the start of the name that holds the
// keyword, if the name is followed by an assignment.
func atAnyName(s string, hit int) int {
	start, _, _ := assignment(s, hit, func(string) bool { return true })
	return start
}

// assignment finds the assignment whose name holds s[hit]: where the name
// starts, where its separator (= or :) is, and where the value after it
// starts, past spaces. The name, compacted, must pass ok. start is -1 if
// there is no such assignment.
func assignment(s string, hit int, ok func(name string) bool) (start, sep, value int) {
	start = nameStart(s, hit)
	end := nameEnd(s, hit)
	if !ok(compact(s[start:end])) {
		return -1, 0, 0
	}
	sep = end
	for sep < len(s) && strings.IndexByte("\\\"'`] \t", s[sep]) >= 0 {
		sep++
	}
	if sep == len(s) || s[sep] != '=' && s[sep] != ':' {
		return -1, 0, 0
	}
	value = sep + 1
	switch {
	case s[sep] == ':' && value < len(s) && s[value] == '=', s[sep] == '=' && value < len(s) && s[value] == '>':
		value++ // :=, =>
	case strings.HasPrefix(s[sep:], `=\u003e`):
		value += 6 // => in JSON that escapes HTML
	}
	for value < len(s) && (s[value] == ' ' || s[value] == '\t') {
		value++
	}
	return start, sep, value
}

// compact returns a name in lower case, without separators (_ . -) and
// without the digits it ends with: DB_PASSWORD_2 is dbpassword.
func compact(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '_' || c == '.' || c == '-':
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return strings.TrimRight(string(b), digits)
}

// secretSuffix reports whether a compacted name ends in a word that says
// it names a secret, as secretWords does.
func secretSuffix(name string) bool {
	for _, w := range []string{"password", "passwd", "passphrase", "passcode", "pass", "pwd", "secret", "token",
		"credentials", "credential", "creds", "cred", "auth", "apikey", "secretkeybase"} {
		if strings.HasSuffix(name, w) {
			return true
		}
	}
	if k, ok := strings.CutSuffix(name, "key"); ok {
		for _, w := range []string{"access", "private", "signing", "encryption", "master", "account", "subscription",
			"client", "app", "consumer", "license", "secret"} {
			if strings.HasSuffix(k, w) {
				return true
			}
		}
	}
	return false
}

// nameEnd returns where the name that holds s[hit] ends.
func nameEnd(s string, hit int) int {
	for hit < len(s) && isNameByte(s[hit]) {
		hit++
	}
	return hit
}

// escapeBefore reports whether a JSON escape (\n, \u0026) ends at s[i].
func escapeBefore(s string, i int) bool {
	return i >= 2 && s[i-2] == '\\' && strings.IndexByte("nrt", s[i-1]) >= 0 ||
		i >= 6 && s[i-6] == '\\' && s[i-5] == 'u'
}

// atCookie anchors a match at a Cookie or Set-Cookie header.
func atCookie(s string, hit int) int {
	start := hit
	if start >= 4 && strings.EqualFold(s[start-4:start], "set-") {
		start -= 4
	}
	return atWord(s, start)
}

// atScheme anchors a match at the scheme of the URL whose :// is at hit.
func atScheme(s string, hit int) int {
	start := hit
	for start > 0 && (isWordByte(s[start-1]) && s[start-1] != '_' || strings.IndexByte("+.-", s[start-1]) >= 0) {
		start--
	}
	for start < hit && !('a' <= s[start]|0x20 && s[start]|0x20 <= 'z') {
		start++ // a scheme starts with a letter
	}
	if start == hit {
		return -1
	}
	return atWord(s, start)
}

// atPair anchors a name and value pair at the "name" before the "value"
// at hit, on the same line or the one before. The value must be assigned
// (value: ...).
func atPair(s string, hit int) int {
	if wordBefore(s, hit) {
		return -1
	}
	if start, _, _ := assignment(s, hit, func(name string) bool { return name == "value" }); start < 0 {
		return -1
	}
	lo := lineStart(s, max(lineStart(s, hit, 256)-1, 0), 256)
	for i := hit - 4; i >= lo; i-- {
		if strings.EqualFold(s[i:i+4], "name") && !wordBefore(s, i) {
			return i
		}
	}
	return -1
}

// atHeader anchors a match at an Authorization header: the keyword starts
// a word and is followed by : or =.
func atHeader(s string, hit int) int {
	if atWord(s, hit) < 0 {
		return -1
	}
	start, _, _ := assignment(s, hit, func(string) bool { return true })
	if start < 0 {
		return -1
	}
	return hit
}

// atFlag anchors a match at the command-line flag that starts with the
// keyword: it follows a space, a tab or a line break.
func atFlag(s string, hit int) int {
	if !flagStart(s, hit) {
		return -1
	}
	return hit
}

// atBack anchors a match n bytes before the keyword, where the token
// starts: mailchimp's 32 hex digits before -us, terraform's 14 characters
// before .atlasv1., Azure's 4 before Q~.
func atBack(n int) func(s string, hit int) int {
	return func(s string, hit int) int {
		if hit < n {
			return -1
		}
		return atWord(s, hit-n)
	}
}

// atDigits anchors a match at the digits before the keyword: a Telegram
// bot's ID before :AA, which starts a word or follows the "bot" of the
// Bot API's URLs (api.telegram.org/bot123456789:AA.../sendMessage).
func atDigits(s string, hit int) int {
	i := hit
	for i > 0 && hit-i < 10 && '0' <= s[i-1] && s[i-1] <= '9' {
		i--
	}
	if i == hit {
		return -1
	}
	if i >= 3 && s[i-3:i] == "bot" && !wordBefore(s, i-3) {
		return i
	}
	return atWord(s, i)
}

// atDSN anchors a match at the user of user:password@tcp(...).
func atDSN(s string, hit int) int {
	i := hit
	for i > 0 && hit-i < maxMatch && strings.IndexByte(" \t\r\n:/\"'\\", s[i-1]) < 0 {
		i--
	}
	if i == 0 || s[i-1] != ':' || i == hit {
		return -1
	}
	j := i - 1
	for j > 0 && i-j < 64 && isNameByte(s[j-1]) {
		j--
	}
	return j
}

// atConfigureSet anchors a match at the "configure" of an aws configure
// set command whose setting is before+the keyword+after
// (aws_secret_access_key, aws_session_token), on the keyword's line.
func atConfigureSet(before, after string) func(s string, hit int) int {
	return func(s string, hit int) int {
		if hit < len(before) || len(s)-hit < len(after) ||
			!strings.EqualFold(s[hit-len(before):hit], before) || !strings.EqualFold(s[hit:hit+len(after)], after) {
			return -1
		}
		line := s[lineStart(s, hit, 256):hit]
		i := strings.LastIndex(line, "configure")
		if i < 0 {
			return -1
		}
		return atWord(s, hit-len(line)+i)
	}
}

// atPhrase anchors a match at its keyword if the phrase, in any case,
// starts there.
func atPhrase(phrase string) func(s string, hit int) int {
	return func(s string, hit int) int {
		if len(s)-hit < len(phrase) || !strings.EqualFold(s[hit:hit+len(phrase)], phrase) {
			return -1
		}
		return atWord(s, hit)
	}
}
