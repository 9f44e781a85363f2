// Package secretcorpus reads the secrets corpus of the redaction tests
// (sanitize/testdata/redact/secrets.txt, whose header documents the
// format) and fills in its fake secrets, so that the sanitize tests and
// the telemetry leak test generate the same secrets the same way, and
// check for them the same way.
package secretcorpus

import (
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// classes are the character classes of the corpus's secret specs, [C:n].
var classes = map[string]string{
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

// Case is one document of the corpus: a format, where the format comes
// from, and the document with its secrets still as specs.
type Case struct {
	Format, Source string
	Doc            string
}

// Secret is a secret made up for a case: its value and its random parts,
// which must not survive redaction.
type Secret struct {
	Value string
	Runs  []string
}

// Load reads the corpus file at path.
func Load(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cases []Case
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if head, ok := strings.CutPrefix(line, "== "); ok {
			format, source, _ := strings.Cut(strings.TrimSpace(head), " | ")
			cases = append(cases, Case{Format: format, Source: source})
			continue
		}
		if len(cases) == 0 {
			continue // the header
		}
		cases[len(cases)-1].Doc += line
	}
	for i := range cases {
		cases[i].Doc = strings.TrimRight(cases[i].Doc, "\n") + "\n"
	}
	return cases, nil
}

// Generate fills in the case's secrets, at random but the same way for
// the same seed, and returns the document and its secrets.
func (c Case) Generate(seed uint64) (string, []Secret, error) {
	h := fnv.New64a()
	h.Write([]byte(c.Format))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	var b strings.Builder
	var secrets []Secret
	rest := c.Doc
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return "", nil, fmt.Errorf("case %q: an unclosed {{", c.Format)
		}
		b.WriteString(rest[:i])
		s, err := makeSecret(rest[i+2:i+j], rng)
		if err != nil {
			return "", nil, fmt.Errorf("case %q: %w", c.Format, err)
		}
		b.WriteString(s.Value)
		secrets = append(secrets, s)
		rest = rest[i+j+2:]
	}
	if len(secrets) == 0 {
		return "", nil, fmt.Errorf("case %q has no secret", c.Format)
	}
	return b.String(), secrets, nil
}

func makeSecret(spec string, rng *rand.Rand) (Secret, error) {
	var s Secret
	var b strings.Builder
	for spec != "" {
		if spec[0] != '[' {
			b.WriteByte(spec[0])
			spec = spec[1:]
			continue
		}
		end := strings.IndexByte(spec, ']')
		if end < 0 {
			return s, fmt.Errorf("bad spec %q", spec)
		}
		class, count, ok := strings.Cut(spec[1:end], ":")
		if !ok {
			return s, fmt.Errorf("bad spec %q", spec)
		}
		n, err := strconv.Atoi(count)
		if err != nil {
			return s, err
		}
		if class == "pemb64" {
			// Its first and last 48 characters encode the BEGIN and END
			// lines, which are no secret.
			pem := pemBase64(rng, n)
			b.WriteString(pem)
			s.Runs = append(s.Runs, pem[48:len(pem)-48])
		} else {
			alphabet, ok := classes[class]
			if !ok {
				return s, errors.New("unknown class " + strconv.Quote(class))
			}
			run := random(rng, alphabet, n)
			b.WriteString(run)
			s.Runs = append(s.Runs, run)
		}
		spec = spec[end+1:]
	}
	s.Value = b.String()
	return s, nil
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
	body := random(rng, classes["B"], n)
	var pem strings.Builder
	pem.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for len(body) > 64 {
		pem.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	pem.WriteString(body + "\n-----END RSA PRIVATE KEY-----\n")
	return base64.StdEncoding.EncodeToString([]byte(pem.String()))
}

// Window is how many characters of a secret in a row may not survive.
const Window = 8

// Leaks returns what survives of the secrets in out: any Window-long
// piece of a random part, or a random part between 5 and Window long.
func Leaks(out string, secrets []Secret) []string {
	var found []string
	for _, s := range secrets {
		for _, run := range s.Runs {
			switch {
			case len(run) < 5:
			case len(run) < Window:
				if strings.Contains(out, run) {
					found = append(found, fmt.Sprintf("%q of %q", run, s.Value))
				}
			default:
				for i := 0; i+Window <= len(run); i++ {
					if strings.Contains(out, run[i:i+Window]) {
						found = append(found, fmt.Sprintf("%q of %q", run[i:i+Window], s.Value))
						break
					}
				}
			}
		}
	}
	return found
}
