package sanitize_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/internal/secretcorpus"
	"github.com/toolloop/toolloop/sanitize"
)

// loadSecretsCorpus reads the secrets corpus; internal/secretcorpus
// documents how its secrets are made and checked.
func loadSecretsCorpus(t testing.TB) []secretcorpus.Case {
	t.Helper()
	cases, err := secretcorpus.Load(filepath.Join("testdata", "redact", "secrets.txt"))
	require.NoError(t, err)
	return cases
}

// generate fills in c's secrets, the same way for the same seed.
func generate(t testing.TB, c secretcorpus.Case, seed uint64) (string, []secretcorpus.Secret) {
	t.Helper()
	text, secrets, err := c.Generate(seed)
	require.NoError(t, err)
	return text, secrets
}

// leaks returns what survives of the secrets in out.
func leaks(out string, secrets []secretcorpus.Secret) []string {
	return secretcorpus.Leaks(out, secrets)
}

// corpusSeeds are the seeds each case is generated with.
var corpusSeeds = []uint64{1, 2, 3}

// TestRedactCorpus runs each document of the secrets corpus through the
// Redactor in the ways secrets reach a log: as text (a tool's output), as
// a JSON argument of an event, as a JSON document in a tool's output, as
// JSON cut off mid-string (truncated output), and as an attribute of a
// log record. No part of any secret may survive any of them.
func TestRedactCorpus(t *testing.T) {
	cases := loadSecretsCorpus(t)
	formats := map[string]bool{}
	for _, c := range cases {
		formats[c.Format] = true
	}
	require.Len(t, formats, len(cases), "each case is a format of its own")
	require.GreaterOrEqual(t, len(formats), 52, "the corpus covers at least 52 formats")
	t.Logf("secrets corpus: %d formats", len(formats))

	var r sanitize.Redactor
	variants := []struct {
		name string
		run  func(t *testing.T, text string) []string
	}{
		{"text", func(t *testing.T, text string) []string {
			out, _ := r.Redact(text)
			return []string{out}
		}},
		{"event arguments", func(t *testing.T, text string) []string {
			args, err := json.Marshal(map[string]string{"input": text})
			require.NoError(t, err)
			e := r.RedactEvent(toolloop.Event{Type: toolloop.EventStart, Arguments: args})
			require.True(t, json.Valid(e.Arguments), "arguments stay valid JSON")
			var got map[string]string
			require.NoError(t, json.Unmarshal(e.Arguments, &got))
			return []string{string(e.Arguments), got["input"]}
		}},
		{"json text", func(t *testing.T, text string) []string {
			doc, err := json.Marshal([]any{map[string]any{"stdout": text, "exit_code": 0}})
			require.NoError(t, err)
			out, _ := r.Redact(string(doc))
			require.True(t, json.Valid([]byte(out)), "a JSON document stays valid JSON")
			var got []map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			return []string{out, fmt.Sprint(got[0]["stdout"])}
		}},
		{"truncated json", func(t *testing.T, text string) []string {
			doc, err := json.Marshal(map[string]string{"stdout": text})
			require.NoError(t, err)
			out, _ := r.Redact(string(doc[:len(doc)-2]))
			return []string{out}
		}},
		{"log record", func(t *testing.T, text string) []string {
			var buf bytes.Buffer
			log := slog.New(r.LogHandler(slog.NewJSONHandler(&buf, nil)))
			log.With("input", text).Error(text, "output", text, "err", errors.New(text), "raw", []byte(text))
			var rec map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
			return []string{buf.String(), fmt.Sprint(rec)}
		}},
	}
	for _, c := range cases {
		t.Run(c.Format, func(t *testing.T) {
			for _, seed := range corpusSeeds {
				text, secrets := generate(t, c, seed)
				require.Empty(t, leaks(text, nil))
				for _, v := range variants {
					for _, out := range v.run(t, text) {
						if found := leaks(out, secrets); len(found) > 0 {
							t.Errorf("seed %d, %s: %s survived in\n%s", seed, v.name, strings.Join(found, ", "), out)
						}
					}
				}
			}
		})
	}
}

// TestRedactFalsePositives runs the ordinary-text corpus (source code,
// docs, lockfiles, logs, API responses, none with a secret) through the
// Redactor and reports how many lines it changed. Each change is a false
// positive.
func TestRedactFalsePositives(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "redact", "ordinary", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var r sanitize.Redactor
	total, changed, bytesIn := 0, 0, 0
	for _, f := range files {
		if filepath.Base(f) == "SOURCES.md" {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		text := string(data)
		bytesIn += len(text)
		out, counts := r.Redact(text)
		lines := strings.Split(text, "\n")
		total += len(lines)
		if counts == nil {
			continue
		}
		outLines := strings.Split(out, "\n")
		require.Len(t, outLines, len(lines), "%s: a redaction spanned lines", f)
		for i := range lines {
			if lines[i] != outLines[i] {
				changed++
				t.Logf("false positive: %s:%d: %s", filepath.Base(f), i+1, outLines[i])
			}
		}
	}
	rate := float64(changed) / float64(total)
	t.Logf("ordinary corpus: %d files, %d bytes, %d lines; %d lines changed: false-positive rate %.4f%% of lines",
		len(files)-1, bytesIn, total, changed, 100*rate)
	// The bound: at most one line in 2,000. Each false positive changes
	// what a model reads in a file it may be asked to edit, so they must
	// be rare; the ones this corpus has are listed above.
	assert.LessOrEqual(t, rate, 1.0/2000, "false-positive rate")
}
