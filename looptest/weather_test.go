package looptest_test

// This file is the complete test the package doc shows (but for the
// package name), so that the doc's test compiles and passes;
// TestPackageDocShowsACompleteTest keeps the two the same.

import (
	"context"
	"flag"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestWeatherAgent(t *testing.T) {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("get_weather", "Get the weather in a city.",
		func(_ context.Context, in struct {
			City string `json:"city"`
		}) (any, error) {
			return "18°C and sunny in " + in.City, nil
		}))
	model := looptest.NewModel(t,
		looptest.Turn{Reply: looptest.Calls(looptest.Call("c1", "get_weather", `{"city":"Paris"}`))},
		looptest.Turn{Reply: looptest.Text("It is 18°C and sunny in Paris.")},
	)
	loop := &toolloop.AgentLoop{Model: model, Tools: &tools}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Weather in Paris?")})
	if err != nil {
		t.Fatal(err)
	}
	looptest.AssertValid(t, res.Messages)
	looptest.AssertGolden(t, "testdata/weather.json", res.Messages, *update)
}
