package sanitize

import (
	"regexp"
	"strings"
)

var (
	pemBegin = regexp.MustCompile(`^-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	pemEnd   = regexp.MustCompile(`^-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
)

// maxPEM is the longest private key block looked for: an END line further
// from its BEGIN line is not taken for its end.
const maxPEM = 64 << 10

// matchPEM finds a PEM or PGP armoured private key (gitleaks'
// private-key) that starts at the -----BEGIN at hit: through its END
// line, or, cut off before one, through the base64 and headers that
// follow. It is code rather than a regular expression so that a text of
// many BEGIN lines and no END costs one pass: st keeps where the next END
// line is between keywords.
func matchPEM(s string, hit int, st *matchState, found func(start, end, ctx int)) int {
	head := pemBegin.FindStringIndex(s[hit:min(len(s), hit+160)])
	if head == nil {
		return 0
	}
	body := hit + head[1]
	if end := nextPEMEnd(s, body, st); end >= 0 && end-body <= maxPEM {
		tail := pemEnd.FindStringIndex(s[end:min(len(s), end+160)])
		found(hit, end+tail[1], hit)
		return end + tail[1]
	}
	// Cut off: the body runs as far as base64, armour headers and line
	// breaks (real or escaped) do.
	end := body
	for end < len(s) && end-body < maxPEM && pemBody(s[end]) {
		end++
	}
	if end-body >= 40 {
		found(hit, end, hit)
	}
	return end
}

func pemBody(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		strings.IndexByte("+/=:,.()@<>- \t\r\n\\", c) >= 0
}

// nextPEMEnd returns where the first private key END line at or after
// from starts, or -1. st.a is the last answer and st.b-1 where its search
// started: searches only move forward, so all of them cost one pass.
func nextPEMEnd(s string, from int, st *matchState) int {
	if st.b > 0 && st.b-1 <= from && (st.a < 0 || st.a >= from) {
		return st.a
	}
	start := from
	for {
		i := strings.Index(s[from:], "-----END")
		if i < 0 {
			st.a, st.b = -1, start+1
			return -1
		}
		if p := from + i; pemEnd.MatchString(s[p:min(len(s), p+160)]) {
			st.a, st.b = p, start+1
			return p
		}
		from += i + len("-----END")
	}
}
