package telemetry_test

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The secrets corpus of the sanitize package, read and filled in as its
// TestRedactCorpus does (see sanitize/corpus_test.go, which documents the
// format): each document holds fake secrets of real formats in the
// surroundings they are found in.

var secretClasses = map[string]string{
	"U": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"L": "abcdefghijklmnopqrstuvwxyz",
	"D": "0123456789",
	"A": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	"a": "abcdefghijklmnopqrstuvwxyz0123456789",
	"H": "0123456789abcdef",
	"B": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
	"W": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
	"P": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#%^*_+=~.",
	"Q": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}

// corpusDoc is a document of the corpus with its secrets filled in: the
// random parts of each secret, which must not survive anywhere.
type corpusDoc struct {
	format, text string
	runs         []string
}

// loadCorpus reads the corpus and fills in every document with seed.
func loadCorpus(t *testing.T, seed uint64) []corpusDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "sanitize", "testdata", "redact", "secrets.txt"))
	require.NoError(t, err)
	var docs []corpusDoc
	var format, body string
	flush := func() {
		if format != "" {
			docs = append(docs, fill(t, format, strings.TrimRight(body, "\n")+"\n", seed))
		}
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if head, ok := strings.CutPrefix(line, "== "); ok {
			flush()
			format, _, _ = strings.Cut(strings.TrimSpace(head), " | ")
			body = ""
			continue
		}
		if format != "" {
			body += line
		}
	}
	flush()
	require.GreaterOrEqual(t, len(docs), 52)
	return docs
}

func fill(t *testing.T, format, doc string, seed uint64) corpusDoc {
	h := fnv.New64a()
	h.Write([]byte(format))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	out := corpusDoc{format: format}
	var b strings.Builder
	for {
		i := strings.Index(doc, "{{")
		if i < 0 {
			b.WriteString(doc)
			break
		}
		j := strings.Index(doc[i:], "}}")
		require.Positive(t, j)
		b.WriteString(doc[:i])
		spec := doc[i+2 : i+j]
		for spec != "" {
			if spec[0] != '[' {
				b.WriteByte(spec[0])
				spec = spec[1:]
				continue
			}
			end := strings.IndexByte(spec, ']')
			class, count, _ := strings.Cut(spec[1:end], ":")
			n, err := strconv.Atoi(count)
			require.NoError(t, err)
			if class == "pemb64" {
				pem := pemBase64(rng, n)
				b.WriteString(pem)
				out.runs = append(out.runs, pem[48:len(pem)-48])
			} else {
				run := random(rng, secretClasses[class], n)
				b.WriteString(run)
				out.runs = append(out.runs, run)
			}
			spec = spec[end+1:]
		}
		doc = doc[i+j+2:]
	}
	out.text = b.String()
	return out
}

func random(rng *rand.Rand, alphabet string, n int) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(out)
}

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

// leaks returns what survives in out of the documents' secrets: any 8
// characters in a row of a random part (or a random part of 5 to 7).
func leaks(out string, docs []corpusDoc) []string {
	const window = 8
	var found []string
	for _, d := range docs {
		for _, run := range d.runs {
			switch {
			case len(run) < 5:
			case len(run) < window:
				if strings.Contains(out, run) {
					found = append(found, fmt.Sprintf("%s: %q", d.format, run))
				}
			default:
				for i := 0; i+window <= len(run); i++ {
					if strings.Contains(out, run[i:i+window]) {
						found = append(found, fmt.Sprintf("%s: %q", d.format, run[i:i+window]))
						break
					}
				}
			}
		}
	}
	return found
}
