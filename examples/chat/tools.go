package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
)

// weather is the made-up weather the example reports.
var weather = map[string]struct {
	TempC float64 `json:"temp_c"`
	Sky   string  `json:"sky"`
}{
	"paris":    {18, "light rain"},
	"tokyo":    {24, "clear"},
	"new york": {12, "windy"},
	"sydney":   {21, "sunny"},
}

// tools returns the example's tools.
func tools() *toolloop.ToolRegistry {
	type cityIn struct {
		City string `json:"city" jsonschema:"description=The city, such as Paris"`
	}
	type celsiusIn struct {
		Celsius float64 `json:"celsius" jsonschema:"description=A temperature in degrees Celsius"`
	}
	var reg toolloop.ToolRegistry
	reg.MustRegister(
		toolloop.NewTool("get_weather", "Get the current (simulated) weather for a city: temperature in Celsius and sky.",
			func(_ context.Context, in cityIn) (any, error) {
				w, ok := weather[strings.ToLower(strings.TrimSpace(in.City))]
				if !ok {
					return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "no weather for %q; try Paris, Tokyo, New York or Sydney", in.City)
				}
				return w, nil
			}),
		toolloop.NewTool("to_fahrenheit", "Convert a temperature from degrees Celsius to degrees Fahrenheit.",
			func(_ context.Context, in celsiusIn) (any, error) {
				return fmt.Sprintf("%.1f°F", in.Celsius*9/5+32), nil
			}),
	)
	return &reg
}
