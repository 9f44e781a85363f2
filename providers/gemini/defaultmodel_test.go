package gemini

import (
	"testing"

	"github.com/toolloop/toolloop/providers/internal/modelcheck"
)

// TestDefaultModelIsCurrent fails when the SDK version in go.mod marks
// DefaultModel deprecated (the constants are those of the SDK's Interactions API, the one list of Gemini models it has, which carries no deprecation notice today), or no longer lists it; and when the
// loop's model table does not know it.
func TestDefaultModelIsCurrent(t *testing.T) {
	modelcheck.Current(t, "google.golang.org/genai", "interactions/models/interactions", DefaultModel)
}
