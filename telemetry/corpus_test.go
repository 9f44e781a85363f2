package telemetry_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/internal/secretcorpus"
)

// corpusDoc is a document of the sanitize package's secrets corpus with
// its fake secrets filled in (see internal/secretcorpus).
type corpusDoc struct {
	format, text string
	secrets      []secretcorpus.Secret
}

// loadCorpus reads the corpus and fills in every document with seed.
func loadCorpus(t *testing.T, seed uint64) []corpusDoc {
	t.Helper()
	cases, err := secretcorpus.Load(filepath.Join("..", "sanitize", "testdata", "redact", "secrets.txt"))
	require.NoError(t, err)
	docs := make([]corpusDoc, len(cases))
	for i, c := range cases {
		text, secrets, err := c.Generate(seed)
		require.NoError(t, err)
		docs[i] = corpusDoc{format: c.Format, text: text, secrets: secrets}
	}
	require.GreaterOrEqual(t, len(docs), 52)
	return docs
}

// leaks returns what survives in out of the documents' secrets.
func leaks(out string, docs []corpusDoc) []string {
	var found []string
	for _, d := range docs {
		for _, f := range secretcorpus.Leaks(out, d.secrets) {
			found = append(found, d.format+": "+f)
		}
	}
	return found
}
