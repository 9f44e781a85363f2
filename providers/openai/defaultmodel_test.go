package openai

import (
	"testing"

	"github.com/toolloop/toolloop/providers/internal/modelcheck"
)

// TestDefaultModelIsCurrent fails when the SDK version in go.mod marks
// DefaultModel deprecated (its constants carry OpenAI's announced shutdown dates), or no longer lists it; and when the
// loop's model table does not know it.
func TestDefaultModelIsCurrent(t *testing.T) {
	modelcheck.Current(t, "github.com/openai/openai-go/v3", "shared", DefaultModel)
}
