package anthropic

import (
	"testing"

	"github.com/toolloop/toolloop/providers/internal/modelcheck"
)

// TestDefaultModelIsCurrent fails when the SDK version in go.mod marks
// DefaultModel deprecated (its constants carry Anthropic's end-of-life dates), or no longer lists it; and when the
// loop's model table does not know it.
func TestDefaultModelIsCurrent(t *testing.T) {
	modelcheck.Current(t, "github.com/anthropics/anthropic-sdk-go", ".", DefaultModel)
}
