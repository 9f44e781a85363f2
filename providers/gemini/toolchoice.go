package gemini

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
)

// toolConfig maps the request's tool choice to the function calling
// config: none as NONE, required as ANY, required with a name as ANY with
// that one allowed function. Auto sets nothing, the API's default; the
// config goes out only with tools.
//
// A choice no request can honour is an error, before anything is sent: an
// unknown mode, a name with a mode other than required, a required call
// without tools, a name that is not among the request's tools.
func toolConfig(req *toolloop.Request) (*genai.ToolConfig, error) {
	c := req.ToolChoice
	var mode genai.FunctionCallingConfigMode
	var allowed []string
	switch c.Mode {
	case toolloop.ToolChoiceAuto, toolloop.ToolChoiceNone:
		if c.Name != "" {
			return nil, fmt.Errorf("gemini: tool choice names tool %q with mode %q; only mode %q takes a name",
				c.Name, c.Mode, toolloop.ToolChoiceRequired)
		}
		if c.Mode == toolloop.ToolChoiceAuto {
			return nil, nil
		}
		mode = genai.FunctionCallingConfigModeNone
	case toolloop.ToolChoiceRequired:
		if len(req.Tools) == 0 {
			return nil, errors.New("gemini: tool choice requires a tool call, but the request has no tools")
		}
		mode = genai.FunctionCallingConfigModeAny
		if c.Name != "" {
			if !slices.ContainsFunc(req.Tools, func(s toolloop.ToolSpec) bool { return s.Name == c.Name }) {
				return nil, fmt.Errorf("gemini: tool choice names tool %q, which is not among the request's tools", c.Name)
			}
			allowed = []string{c.Name}
		}
	default:
		return nil, fmt.Errorf("gemini: unknown tool choice mode %q", c.Mode)
	}
	return &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: mode, AllowedFunctionNames: allowed}}, nil
}
