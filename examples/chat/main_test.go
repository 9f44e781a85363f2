package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop/providers/anthropic"
	"github.com/toolloop/toolloop/providers/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestOfflineRun(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), nil, strings.NewReader(""), &out, &errOut, env())
	require.NoError(t, err)
	assert.Contains(t, errOut.String(), "scripted model")
	assert.Contains(t, out.String(), "→ get_weather")
	assert.Contains(t, out.String(), "Paris: 18°C, light rain (64.4°F); Tokyo: 24°C, clear.")
	assert.Contains(t, out.String(), "[stop after 3 turn(s)]")
}

func TestInteractiveRun(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-i"}, strings.NewReader("hello\nweather in Sydney\n"), &out, &errOut, env())
	require.NoError(t, err)
	assert.Contains(t, out.String(), "scripted stand-in")
	assert.Contains(t, out.String(), "Sydney: 21°C, sunny.")
}

func TestPickModel(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		getenv   func(string) string
		want     any
	}{
		{"nothing set", "auto", env(), &scripted{}},
		{"compatible server", "auto", env("OPENAI_BASE_URL", "http://localhost:11434/v1", "ANTHROPIC_API_KEY", "k"), &openai.Model{}},
		{"anthropic", "auto", env("ANTHROPIC_API_KEY", "k", "OPENAI_API_KEY", "k"), &anthropic.Model{}},
		{"openai", "auto", env("OPENAI_API_KEY", "k"), &openai.Model{}},
		{"forced", "scripted", env("OPENAI_API_KEY", "k"), &scripted{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := pickModel(options{provider: tt.provider}, tt.getenv)
			require.NoError(t, err)
			assert.IsType(t, tt.want, m)
		})
	}
	_, _, err := pickModel(options{provider: "nope"}, env())
	assert.Error(t, err)
}
