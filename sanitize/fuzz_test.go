package sanitize_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolloop/toolloop/sanitize"
)

func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"", "plain text", fakeOpenAI, fakeGitHub + " " + fakeAWS, "Authorization: Bearer " + fakeBearer,
		fakePEM, "postgres://a:b@c/d", "DB_PASSWORD=hunter22\n", `{"password":"hunter22"}`, fakeJWT,
		`{"env":"A=1\nDB_PASSWORD=hunter22x\n","k":[{"name":"API_TOKEN","value":"x9f8e7d6c5b4"}]}`,
		"password: 'a\\'b' token=\u0026x --token \"abc\" <password>p4ss</password>",
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
		if json.Valid([]byte(s)) && !json.Valid([]byte(out)) {
			t.Fatalf("broke JSON: %q -> %q", s, out)
		}
		n := 0
		for _, c := range kinds {
			n += c
		}
		if got := strings.Count(out, "[REDACTED:") - strings.Count(s, "[REDACTED:"); got != n {
			t.Fatalf("counted %d redactions, made %d: %q -> %q", n, got, s, out)
		}
		if again, _ := r.Redact(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
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
