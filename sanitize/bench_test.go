package sanitize_test

import (
	"context"
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
