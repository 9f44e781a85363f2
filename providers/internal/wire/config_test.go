package wire

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop/providers"
)

func TestConfigErrors(t *testing.T) {
	cause := errors.New("sdk: project and location are needed")
	tests := []struct {
		name    string
		err     error
		matches []error
		not     []error
	}{
		{"missing key", MissingKey("x: no API key"), []error{providers.ErrConfig, providers.ErrAuth}, []error{providers.ErrContextLength}},
		{"config", ConfigError("x: bad"), []error{providers.ErrConfig}, []error{providers.ErrAuth}},
		{"config with a cause", ConfigError("x: "+cause.Error(), cause), []error{providers.ErrConfig, cause}, []error{providers.ErrAuth}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, target := range tt.matches {
				assert.ErrorIs(t, tt.err, target)
			}
			for _, target := range tt.not {
				assert.NotErrorIs(t, tt.err, target)
			}
		})
	}
	assert.Equal(t, "x: no API key", MissingKey("x: no API key").Error())
}
