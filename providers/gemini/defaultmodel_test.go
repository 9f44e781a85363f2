package gemini

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/modelcheck"
)

// TestDefaultModelIsCurrent fails when the SDK version in go.mod marks
// DefaultModel deprecated, or no longer lists it (the constants are those
// of the SDK's Interactions API, the one list of Gemini models it has,
// which carries no deprecation notice today); and when the loop's model
// table does not know it, so that cost and the context window work with
// the default.
func TestDefaultModelIsCurrent(t *testing.T) {
	models := modelcheck.Find(t, "google.golang.org/genai", "interactions/models/interactions", DefaultModel)
	require.NotEmpty(t, models, "the SDK declares no model %q: pick a default it knows", DefaultModel)
	for _, m := range models {
		assert.Empty(t, m.Deprecated(), "the SDK marks DefaultModel %q deprecated (%s in %s): pick a current model", DefaultModel, m.Name, m.File)
	}
	info, ok := toolloop.LookupModel(DefaultModel)
	require.True(t, ok, "toolloop's model table does not know %q", DefaultModel)
	assert.NotZero(t, info.ContextWindow)
	assert.NotNil(t, info.Price)
}
