package view_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/cmd/toolloop/internal/view"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/looptest"
)

// A run logged with eventlog, turned into a page that opens in a browser
// from the file.
func ExampleRender() {
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("get_weather", "The weather in a city.",
		func(_ context.Context, in struct {
			City string `json:"city"`
		}) (any, error) {
			return "18°C and sunny in " + in.City, nil
		}))
	var log bytes.Buffer
	w := eventlog.NewWriter(&log, eventlog.Options{NoSync: true})
	loop := &toolloop.AgentLoop{
		Model: looptest.Script(
			looptest.Calls(looptest.Call("c1", "get_weather", `{"city":"Paris"}`)),
			looptest.Text("It is sunny in Paris."),
		),
		Tools:   &tools,
		OnEvent: w.Record,
	}
	if _, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Weather in Paris?")}); err != nil {
		fmt.Println(err)
		return
	}
	_ = w.Close()

	var page bytes.Buffer
	if err := view.Render(&page, eventlog.Events(&log), view.Options{Title: "Weather in Paris"}); err != nil {
		fmt.Println(err)
		return
	}
	file := filepath.Join(os.TempDir(), "toolloop-example-run.html")
	defer os.Remove(file)
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	html := page.String()
	fmt.Println(strings.HasPrefix(html, "<!DOCTYPE html>"))
	fmt.Println(strings.Contains(html, "<title>Weather in Paris</title>"))
	fmt.Println(strings.Contains(html, `"tool":"get_weather"`))
	// Output:
	// true
	// true
	// true
}
