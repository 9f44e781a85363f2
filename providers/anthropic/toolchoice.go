package anthropic

import (
	"errors"
	"fmt"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/toolloop/toolloop"
)

// toolChoice maps the request's tool choice to the API's tool_choice:
// none as none, required as any, required with a name as that tool. Auto
// sends nothing, the API's default; so does a request without tools,
// whatever its mode, since the API refuses tool_choice without tools.
//
// A choice no request can honour is an error, before anything is sent: an
// unknown mode, a name with a mode other than required, a required call
// without tools, a name that is not among the request's tools. With
// thinking on, the API takes only auto and none: a required call is an
// error wrapping [ErrConfig].
func (m *Model) toolChoice(req *toolloop.Request) (sdk.ToolChoiceUnionParam, error) {
	var p sdk.ToolChoiceUnionParam
	c := req.ToolChoice
	switch c.Mode {
	case toolloop.ToolChoiceAuto, toolloop.ToolChoiceNone:
		if c.Name != "" {
			return p, fmt.Errorf("anthropic: tool choice names tool %q with mode %q; only mode %q takes a name",
				c.Name, c.Mode, toolloop.ToolChoiceRequired)
		}
	case toolloop.ToolChoiceRequired:
		if len(req.Tools) == 0 {
			return p, errors.New("anthropic: tool choice requires a tool call, but the request has no tools")
		}
		if c.Name != "" && !slices.ContainsFunc(req.Tools, func(s toolloop.ToolSpec) bool { return s.Name == c.Name }) {
			return p, fmt.Errorf("anthropic: tool choice names tool %q, which is not among the request's tools", c.Name)
		}
		if m.cfg.Thinking.on() {
			return p, fmt.Errorf("%w: the request requires a tool call, and with thinking on the API allows only tool choice auto or none", ErrConfig)
		}
	default:
		return p, fmt.Errorf("anthropic: unknown tool choice mode %q", c.Mode)
	}
	if len(req.Tools) == 0 {
		return p, nil
	}
	switch {
	case c.Mode == toolloop.ToolChoiceNone:
		p.OfNone = &sdk.ToolChoiceNoneParam{}
	case c.Mode == toolloop.ToolChoiceRequired && c.Name != "":
		p.OfTool = &sdk.ToolChoiceToolParam{Name: c.Name}
	case c.Mode == toolloop.ToolChoiceRequired:
		p.OfAny = &sdk.ToolChoiceAnyParam{}
	}
	return p, nil
}
