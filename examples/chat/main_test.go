package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/anthropic"
	"github.com/toolloop/toolloop/providers/gemini"
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
	assert.Contains(t, out.String(), "  ✓ get_weather city=Paris → {\"temp_c\":18,\"sky\":\"light rain\"}\n")
	assert.Contains(t, out.String(), "  ✓ to_fahrenheit celsius=18 → 64.4°F\n")
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
		{"gemini", "auto", env("GEMINI_API_KEY", "k", "OPENAI_API_KEY", "k"), &gemini.Model{}},
		{"google key", "auto", env("GOOGLE_API_KEY", "k"), &gemini.Model{}},
		{"openai", "auto", env("OPENAI_API_KEY", "k"), &openai.Model{}},
		{"responses", "responses", env("OPENAI_API_KEY", "k"), &openai.ResponsesModel{}},
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

// TestThinkingRun runs the scripted model with -thinking: its reasoning
// streams under a ┊ margin before each answer, stays in the transcript
// as reasoning blocks, and never reaches the answer's text.
func TestThinkingRun(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-thinking", "1024"}, strings.NewReader(""), &out, &errOut, env())
	require.NoError(t, err)
	got := out.String()
	assert.Contains(t, got, "┊ The cities are independent: ask for all 2 at once.\nLet me check.\n")
	assert.Contains(t, got, "┊ I have what I need; sum it up.\nHere is the (simulated) weather.")
	assert.Contains(t, got, "[stop after 3 turn(s)]")

	// The same flags without them: no reasoning at all.
	out.Reset()
	require.NoError(t, run(context.Background(), nil, strings.NewReader(""), &out, &errOut, env()))
	assert.NotContains(t, out.String(), "┊")

	_, _, err = pickModel(options{provider: "scripted", thinking: 1}, env())
	require.NoError(t, err)
	err = run(context.Background(), []string{"-thinking", "-5"}, strings.NewReader(""), &out, &errOut, env())
	assert.Error(t, err)
}

// TestScriptedReasoningBlocks checks that what the scripted model thinks
// is kept in its answer as a reasoning block, not as text.
func TestScriptedReasoningBlocks(t *testing.T) {
	m := &scripted{think: true}
	req := &toolloop.Request{Messages: []toolloop.Message{toolloop.UserMessage("weather in Tokyo")}}
	var final *toolloop.Response
	var reasoning string
	for ch, err := range m.Stream(context.Background(), req) {
		require.NoError(t, err)
		reasoning += ch.Reasoning
		if ch.Response != nil {
			final = ch.Response
		}
	}
	require.NotNil(t, final)
	require.NotEmpty(t, final.Message.Content)
	first := final.Message.Content[0]
	assert.Equal(t, toolloop.ContentReasoning, first.Type)
	assert.Equal(t, reasoning, first.Text)
	assert.NotContains(t, final.Message.Text(), reasoning)
}
