package openai

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOverLimit(t *testing.T) {
	tests := map[string]bool{
		"Request too large for gpt-4o in organization org-test on tokens per min (TPM): Limit 30000, Requested 45000.":             true,
		"Rate limit reached for gpt-4.1 in organization org-test on tokens per min (TPM): Limit 30000, Used 29876, Requested 512.": false,
		"Rate limit reached for o3 in organization org-test on tokens per min (TPM): Limit 30000, Used 100, Requested 31000.":      true,
		"Rate limit reached for requests": false,
		"":                                false,
	}
	for msg, want := range tests {
		assert.Equal(t, want, overLimit(msg), msg)
	}
}
