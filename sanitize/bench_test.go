package sanitize_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
)

// corpus returns 64 KiB of log-like text. dense puts a keyword that
// wakes some rule (token, password, ://) on most lines; secrets puts a
// secret on one line in forty.
func corpus(dense, secrets bool) string {
	lines := []string{
		"2024-05-01T12:00:00Z INFO request handled path=/api/v1/items status=200 duration=12ms id=123e4567-e89b-12d3-a456-426614174000",
		"2024-05-01T12:00:01Z WARN retrying upstream call attempt=2 backoff=200ms commit=da39a3ee5e6b4b0d3255bfef95601890afd80709",
		"    at com.example.Service.call(Service.java:42) caused by java.net.SocketTimeoutException: Read timed out",
		"2024-05-01T12:00:02Z DEBUG cache hit key=items:page:3 size=4812 ttl=300s shard=7",
	}
	if dense {
		lines[1] = "func (s *Server) handle(w http.ResponseWriter, r *http.Request) { token := r.Header.Get(\"Authorization\") }"
		lines[2] = "see https://docs.example.com/auth for the basic password reset flow and secret rotation"
	}
	leaks := []string{
		"export GITHUB_TOKEN=" + fakeGitHub,
		"curl -H 'Authorization: Bearer " + fakeBearer + "' https://api.example.com",
		"DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app key=" + fakeAWS,
	}
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		if secrets && i%40 == 39 {
			b.WriteString(leaks[(i/40)%len(leaks)])
		} else {
			b.WriteString(lines[i%len(lines)])
		}
		b.WriteByte('\n')
	}
	return b.String()[:64<<10]
}

func BenchmarkRedact64KiB(b *testing.B) {
	for _, bc := range []struct {
		name           string
		dense, secrets bool
	}{{"clean", false, false}, {"dense", true, false}, {"secrets", false, true}, {"dense_secrets", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			var r sanitize.Redactor
			text := corpus(bc.dense, bc.secrets)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				r.Redact(text)
			}
		})
	}
}

func BenchmarkEnvelope64KiB(b *testing.B) {
	var e sanitize.Envelope
	res := toolloop.TextResult(corpus(true, false))
	call := &toolloop.Call{Name: "read_file"}
	b.SetBytes(64 << 10)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = e.PostToolUse(context.Background(), call, res)
	}
}

// tenMB returns 10 MB of tool output: the ordinary corpus (source code,
// docs, lockfiles, logs) over and over, with a document of the secrets
// corpus every 100 KB or so, about a hundred secrets in all.
func tenMB(b *testing.B) (string, int) {
	b.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "redact", "ordinary", "*"))
	if err != nil || len(files) == 0 {
		b.Fatal("no ordinary corpus", err)
	}
	var ordinary []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		ordinary = append(ordinary, string(data))
	}
	cases := loadSecretsCorpus(b)
	var out strings.Builder
	secrets := 0
	for i := 0; out.Len() < 10<<20; i++ {
		out.WriteString(ordinary[i%len(ordinary)])
		if i%3 == 2 {
			text, s := generate(b, cases[(i/3)%len(cases)], uint64(i))
			out.WriteString(text)
			secrets += len(s)
		}
	}
	return out.String()[:10<<20], secrets
}

// BenchmarkRedact10MB measures redaction throughput on a large output,
// as a tool that prints a log or a file would produce.
func BenchmarkRedact10MB(b *testing.B) {
	text, secrets := tenMB(b)
	var r sanitize.Redactor
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var counts map[string]int
	for b.Loop() {
		_, counts = r.Redact(text)
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	b.ReportMetric(float64(secrets), "secrets")
	b.ReportMetric(float64(n), "redactions")
}

// BenchmarkRedactHostile measures redaction of text built to be costly:
// a keyword on every few bytes of one long line, or a token that never
// ends. Each costs a bounded amount of work per byte; none is quadratic.
func BenchmarkRedactHostile(b *testing.B) {
	const n = 256 << 10
	inputs := []struct{ name, text string }{
		{"assignments", strings.Repeat("password=", n/9)},
		{"quotes", strings.Repeat(`password: "`, n/11)},
		{"endless_value", "token: " + strings.Repeat("a", n)},
		{"key_names", strings.Repeat(`key="`, n/5)},
		{"pem_no_end", strings.Repeat("-----BEGIN RSA PRIVATE KEY-----\"\n", n/33)},
		{"token_prefixes", strings.Repeat("sk-", n/3)},
		{"headers", strings.Repeat("Authorization: ", n/15)},
		{"url_schemes", strings.Repeat("http://a:", n/9)},
		{"pairs", strings.Repeat("name: x_password\nvalue: ", n/24)},
		{"commands", strings.Repeat("mysql ", n/6)},
		{"inside_keywords", strings.Repeat("-us", n/3)},
		{"escaped_lines", strings.Repeat(`\npassword: x`, n/13)},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			var r sanitize.Redactor
			b.SetBytes(int64(len(in.text)))
			for b.Loop() {
				r.Redact(in.text)
			}
		})
	}
}
