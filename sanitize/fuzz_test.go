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

// FuzzNeutralize builds forgeries of the envelope's delimiters inside
// arbitrary text (see forge: look-alikes, invisibles, escapes, separators
// and combining marks, placed by a byte code) and checks that no delimiter
// a model could read survives Neutralize, that Neutralize is idempotent
// and keeps UTF-8 valid, and that text that cannot open a delimiter comes
// back unchanged.
func FuzzNeutralize(f *testing.F) {
	for _, s := range neutralizeSeeds {
		f.Add(s.text, s.ops)
	}
	var e sanitize.Envelope
	f.Fuzz(func(t *testing.T, text string, ops []byte) {
		in := forge(fuzzText(text), ops)
		out := e.Neutralize(in)
		if n := refDelimiters(out); n > 0 {
			t.Fatalf("%d delimiters survived: %q -> %q", n, in, out)
		}
		if again := e.Neutralize(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("broke UTF-8: %q -> %q", in, out)
		}
		if !strings.ContainsAny(in, "<&\\%") && isASCII(in) && out != in {
			t.Fatalf("changed text that opens nothing: %q -> %q", in, out)
		}
	})
}
