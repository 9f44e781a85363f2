package modelcheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConstants(t *testing.T) {
	src := []byte(`package sdk

type Model = string

const (
	// Fast and cheap.
	ModelA Model = "model-a"
	// Old.
	//
	// Deprecated: Will reach end-of-life on
	// June 30, 2026. Please migrate to model-a.
	ModelOld Model = "model-old"
	ModelBare Model = "model-bare"
)

// ModelSolo is declared alone.
//
// Deprecated: use model-a.
const ModelSolo Model = "model-solo"

var ModelVar = "model-var"
`)
	path := filepath.Join(t.TempDir(), "models.go")
	require.NoError(t, os.WriteFile(path, src, 0o644))
	tests := []struct {
		model      string
		name       string
		deprecated string
	}{
		{"model-a", "ModelA", ""},
		{"model-old", "ModelOld", "Deprecated: Will reach end-of-life on June 30, 2026. Please migrate to model-a."},
		{"model-bare", "ModelBare", ""},
		{"model-solo", "ModelSolo", "Deprecated: use model-a."},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got := constants(t, path, src, tt.model)
			require.Len(t, got, 1)
			assert.Equal(t, tt.name, got[0].Name)
			assert.Equal(t, tt.deprecated, got[0].Deprecated())
		})
	}
	assert.Empty(t, constants(t, path, src, "model-var"), "only constants count")
	assert.Empty(t, constants(t, path, src, "model-z"))
}

// TestFind reads a package of a module this build needs, from the module
// cache: testify's assert, which declares no model.
func TestFind(t *testing.T) {
	assert.Empty(t, Find(t, "github.com/stretchr/testify", "assert", "gpt-6.1-sol"))
}
