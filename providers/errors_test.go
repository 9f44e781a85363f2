package providers_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop/providers"
)

func TestErrorMatchesItsKindOnly(t *testing.T) {
	cause := errors.New("sdk error")
	err := fmt.Errorf("toolloop: model: %w", &providers.Error{
		Provider: "openai", StatusCode: http.StatusBadRequest, Type: "context_length_exceeded",
		Message: "too long", Kind: providers.ErrContextLength, Err: cause,
	})
	assert.ErrorIs(t, err, providers.ErrContextLength)
	assert.NotErrorIs(t, err, providers.ErrRateLimit)
	assert.ErrorIs(t, err, cause, "unwraps to the SDK's error")
	var pe *providers.Error
	assert.ErrorAs(t, err, &pe)
	assert.Equal(t, http.StatusBadRequest, pe.StatusCode)
}

func TestErrorWithoutKind(t *testing.T) {
	err := &providers.Error{Provider: "anthropic", StatusCode: http.StatusBadRequest}
	for _, kind := range []error{providers.ErrContextLength, providers.ErrRateLimit, providers.ErrOverloaded, providers.ErrAuth} {
		assert.NotErrorIs(t, err, kind)
	}
	assert.NotEmpty(t, err.Error())
}

func ExampleError() {
	var err error = &providers.Error{
		Provider: "anthropic", StatusCode: 400, Type: "invalid_request_error",
		Message: "prompt is too long: 212034 tokens > 200000 maximum", Kind: providers.ErrContextLength,
	}
	if errors.Is(err, providers.ErrContextLength) {
		fmt.Println("compact the transcript:", err)
	}
	// Output: compact the transcript: anthropic: 400 Bad Request (invalid_request_error): prompt is too long: 212034 tokens > 200000 maximum
}
