package sanitize_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
)

// secretClasses are the character classes of the corpus's secret specs,
// [C:n].
var secretClasses = map[string]string{
	"U": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"L": "abcdefghijklmnopqrstuvwxyz",
	"D": "0123456789",
	"A": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	"a": "abcdefghijklmnopqrstuvwxyz0123456789",
	"H": "0123456789abcdef",
	"B": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
	"W": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
	// P: what people put in passwords, short of the characters that
	// would need quoting in a shell or encoding in a URL.
	"P": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#%^*_+=~.",
	// Q: the bech32 alphabet of age keys, upper case.
	"Q": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}

// corpusCase is one document of the secrets corpus.
type corpusCase struct {
	format, source string
	doc            string
}

// corpusSecret is a secret made up for a case: its value and its random
// parts, which must not survive redaction.
type corpusSecret struct {
	value string
	runs  []string
}

func loadSecretsCorpus(t testing.TB) []corpusCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "redact", "secrets.txt"))
	require.NoError(t, err)
	var cases []corpusCase
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if head, ok := strings.CutPrefix(line, "== "); ok {
			format, source, _ := strings.Cut(strings.TrimSpace(head), " | ")
			cases = append(cases, corpusCase{format: format, source: source})
			continue
		}
		if len(cases) == 0 {
			continue // the header
		}
		cases[len(cases)-1].doc += line
	}
	for i := range cases {
		cases[i].doc = strings.TrimRight(cases[i].doc, "\n") + "\n"
	}
	return cases
}

// generate fills in the case's secrets, at random but the same way for
// the same seed.
func (c corpusCase) generate(t testing.TB, seed uint64) (string, []corpusSecret) {
	h := fnv.New64a()
	h.Write([]byte(c.format))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	var b strings.Builder
	var secrets []corpusSecret
	rest := c.doc
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.Index(rest[i:], "}}")
		require.Positive(t, j, "case %q: an unclosed {{", c.format)
		b.WriteString(rest[:i])
		s := makeSecret(t, rest[i+2:i+j], rng)
		b.WriteString(s.value)
		secrets = append(secrets, s)
		rest = rest[i+j+2:]
	}
	require.NotEmpty(t, secrets, "case %q has no secret", c.format)
	return b.String(), secrets
}

func makeSecret(t testing.TB, spec string, rng *rand.Rand) corpusSecret {
	var s corpusSecret
	var b strings.Builder
	for spec != "" {
		if spec[0] != '[' {
			b.WriteByte(spec[0])
			spec = spec[1:]
			continue
		}
		end := strings.IndexByte(spec, ']')
		require.Positive(t, end, "bad spec %q", spec)
		class, count, ok := strings.Cut(spec[1:end], ":")
		require.True(t, ok, "bad spec %q", spec)
		n, err := strconv.Atoi(count)
		require.NoError(t, err)
		var run string
		if class == "pemb64" {
			// Its first and last 48 characters encode the BEGIN and END
			// lines, which are no secret.
			pem := pemBase64(rng, n)
			b.WriteString(pem[:48])
			run = pem[48 : len(pem)-48]
			s.runs = append(s.runs, run)
			b.WriteString(pem[48:])
			spec = spec[end+1:]
			continue
		} else {
			alphabet, ok := secretClasses[class]
			require.True(t, ok, "unknown class %q", class)
			run = random(rng, alphabet, n)
		}
		b.WriteString(run)
		s.runs = append(s.runs, run)
		spec = spec[end+1:]
	}
	s.value = b.String()
	return s
}

func random(rng *rand.Rand, alphabet string, n int) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(out)
}

// pemBase64 is a PEM private key with n characters of body, in base64, as
// Kubernetes secrets hold it.
func pemBase64(rng *rand.Rand, n int) string {
	body := random(rng, secretClasses["B"], n)
	var pem strings.Builder
	pem.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for len(body) > 64 {
		pem.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	pem.WriteString(body + "\n-----END RSA PRIVATE KEY-----\n")
	return base64.StdEncoding.EncodeToString([]byte(pem.String()))
}

// window is how many characters of a secret in a row may not survive.
const window = 8

// leaks returns what survives of the secrets in out: any window-long
// piece of a random part, or a random part between 5 and window long.
func leaks(out string, secrets []corpusSecret) []string {
	var found []string
	for _, s := range secrets {
		for _, run := range s.runs {
			switch {
			case len(run) < 5:
			case len(run) < window:
				if strings.Contains(out, run) {
					found = append(found, fmt.Sprintf("%q of %q", run, s.value))
				}
			default:
				for i := 0; i+window <= len(run); i++ {
					if strings.Contains(out, run[i:i+window]) {
						found = append(found, fmt.Sprintf("%q of %q", run[i:i+window], s.value))
						break
					}
				}
			}
		}
	}
	return found
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
		formats[c.format] = true
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
		t.Run(c.format, func(t *testing.T) {
			for _, seed := range corpusSeeds {
				text, secrets := c.generate(t, seed)
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
