package openai

import (
	"errors"
	"fmt"
	"slices"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolloop/toolloop"
)

// checkToolChoice returns an error, before anything is sent, for a tool
// choice no request can honour: an unknown mode, a name with a mode other
// than required, a required call without tools, or a name that is not
// among the request's tools.
func checkToolChoice(req *toolloop.Request) error {
	c := req.ToolChoice
	switch c.Mode {
	case toolloop.ToolChoiceAuto, toolloop.ToolChoiceNone:
		if c.Name != "" {
			return fmt.Errorf("openai: tool choice names tool %q with mode %q; only mode %q takes a name",
				c.Name, c.Mode, toolloop.ToolChoiceRequired)
		}
	case toolloop.ToolChoiceRequired:
		if len(req.Tools) == 0 {
			return errors.New("openai: tool choice requires a tool call, but the request has no tools")
		}
		if c.Name != "" && !slices.ContainsFunc(req.Tools, func(s toolloop.ToolSpec) bool { return s.Name == c.Name }) {
			return fmt.Errorf("openai: tool choice names tool %q, which is not among the request's tools", c.Name)
		}
	default:
		return fmt.Errorf("openai: unknown tool choice mode %q", c.Mode)
	}
	return nil
}

// chatToolChoice maps the tool choice of a checked request to Chat
// Completions' tool_choice. Nothing is sent without tools (servers refuse
// tool_choice then), nor for auto, the API's default with tools.
func chatToolChoice(req *toolloop.Request) oai.ChatCompletionToolChoiceOptionUnionParam {
	var p oai.ChatCompletionToolChoiceOptionUnionParam
	if len(req.Tools) == 0 {
		return p
	}
	switch c := req.ToolChoice; {
	case c.Mode == toolloop.ToolChoiceNone:
		p.OfAuto = oai.String(string(oai.ChatCompletionToolChoiceOptionAutoNone))
	case c.Mode == toolloop.ToolChoiceRequired && c.Name != "":
		p = oai.ToolChoiceOptionFunctionToolChoice(oai.ChatCompletionNamedToolChoiceFunctionParam{Name: c.Name})
	case c.Mode == toolloop.ToolChoiceRequired:
		p.OfAuto = oai.String(string(oai.ChatCompletionToolChoiceOptionAutoRequired))
	}
	return p
}

// responsesToolChoice maps the tool choice of a checked request to the
// Responses API's tool_choice, sent as chatToolChoice says.
func responsesToolChoice(req *toolloop.Request) responses.ResponseNewParamsToolChoiceUnion {
	var p responses.ResponseNewParamsToolChoiceUnion
	if len(req.Tools) == 0 {
		return p
	}
	switch c := req.ToolChoice; {
	case c.Mode == toolloop.ToolChoiceNone:
		p.OfToolChoiceMode = oai.Opt(responses.ToolChoiceOptionsNone)
	case c.Mode == toolloop.ToolChoiceRequired && c.Name != "":
		p.OfFunctionTool = &responses.ToolChoiceFunctionParam{Name: c.Name}
	case c.Mode == toolloop.ToolChoiceRequired:
		p.OfToolChoiceMode = oai.Opt(responses.ToolChoiceOptionsRequired)
	}
	return p
}
