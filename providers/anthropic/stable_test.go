package anthropic

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/providers/internal/replay"
)

// TestRequestByteStable checks that the same transcript and tools give
// the same request bytes, whatever order the tools were registered in and
// their schemas' keys were written in, from one request to the next and
// from one Model to another: what the prompt cache needs to hit.
func TestRequestByteStable(t *testing.T) {
	const models, rounds = 2, 8
	steps := make([]replay.Step, models*rounds)
	for i := range steps {
		steps[i] = replay.Step{Response: "plain.json"}
	}
	srv := serve(t, steps...)
	for range models { // a new Model converts the tools afresh
		m := modelFor(t, srv, Config{PromptCache: PromptCache{TTL: "1h"}})
		for i := range rounds {
			_, err := m.Generate(context.Background(), replay.StableRequest(t, i))
			require.NoError(t, err)
		}
	}
	replay.AssertSameBytes(t, srv.Bodies())
}
