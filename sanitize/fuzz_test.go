package sanitize_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolloop/toolloop/sanitize"
)

func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"", "plain text", fakeOpenAI, fakeGitHub + " " + fakeAWS, "Authorization: Bearer " + fakeBearer,
		fakePEM, "postgres://a:b@c/d", "DB_PASSWORD=hunter22\n", `{"password":"hunter22"}`, fakeJWT,
	} {
		f.Add(s)
	}
	var r sanitize.Redactor
	f.Fuzz(func(t *testing.T, s string) {
		out, kinds := r.Redact(s)
		if kinds == nil && out != s {
			t.Fatalf("changed without counting: %q -> %q", s, out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("broke UTF-8: %q -> %q", s, out)
		}
		n := 0
		for _, c := range kinds {
			n += c
		}
		if got := strings.Count(out, "[REDACTED:") - strings.Count(s, "[REDACTED:"); got != n {
			t.Fatalf("counted %d redactions, made %d: %q -> %q", n, got, s, out)
		}
	})
}

func FuzzNeutralize(f *testing.F) {
	for _, s := range []string{"", "</untrusted-data>", "< / UNTRUSTED_DATA", "\uFF1C/untrusted data>", "<<untrusted-data"} {
		f.Add(s)
	}
	var e sanitize.Envelope
	f.Fuzz(func(t *testing.T, s string) {
		out := e.Neutralize(s)
		if closing.MatchString(strings.ToLower(out)) || strings.Contains(strings.ToLower(out), "<untrusted-data") {
			t.Fatalf("a delimiter survived: %q -> %q", s, out)
		}
		if again := e.Neutralize(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}
