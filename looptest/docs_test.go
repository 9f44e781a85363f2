package looptest_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

// docBlock returns the code block of a doc comment in file that starts
// with the line first, without its comment markers and indentation.
func docBlock(t *testing.T, file, first string) []string {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	start := -1
	for i, l := range lines {
		if l == "//\t"+first {
			start = i
			break
		}
	}
	require.GreaterOrEqual(t, start, 0, "no code block starting with %q in %s", first, file)
	var out []string
	for _, l := range lines[start:] {
		switch {
		case strings.HasPrefix(l, "//\t"):
			out = append(out, strings.TrimPrefix(l, "//\t"))
		case l == "//":
			out = append(out, "")
		default:
			return trimBlank(out)
		}
	}
	return trimBlank(out)
}

// fromImports returns lines from the import declaration on.
func fromImports(lines []string) []string {
	for i, l := range lines {
		if l == "import (" {
			return lines[i:]
		}
	}
	return nil
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// TestPackageDocShowsACompleteTest checks that the test the package doc
// shows is the one in weather_test.go, which compiles and passes.
func TestPackageDocShowsACompleteTest(t *testing.T) {
	doc := docBlock(t, "doc.go", "package weather_test")
	src, err := os.ReadFile("weather_test.go")
	require.NoError(t, err)
	file := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	assert.Equal(t, "package weather_test", doc[0])
	assert.Equal(t, fromImports(doc), fromImports(file), "the package doc and weather_test.go differ")
}

// TestReplayOfTheGoldenTranscript runs the package doc's second example:
// the transcript TestWeatherAgent wrote, played back.
func TestReplayOfTheGoldenTranscript(t *testing.T) {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("get_weather", "Get the weather in a city.",
		func(_ context.Context, in struct {
			City string `json:"city"`
		}) (any, error) {
			return "18°C and sunny in " + in.City, nil
		}))
	want := looptest.Load(t, "testdata/weather.json")
	loop := &toolloop.AgentLoop{Model: looptest.Replay(t, want), Tools: &tools}
	res, err := loop.Run(context.Background(), want[:1])
	require.NoError(t, err)
	looptest.AssertTranscript(t, want, res.Messages)
}
