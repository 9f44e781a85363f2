package providertest

import (
	"context"
	"testing"

	"github.com/toolloop/toolloop"
)

// toolChoices are the tool choices every request can take, with the
// golden names of their requests; none is the loop's wrap-up turn.
var toolChoices = []struct {
	golden string
	choice toolloop.ToolChoice
	wrapUp bool
}{
	{"tool_choice_auto", toolloop.ToolChoice{}, false},
	{"tool_choice_none", toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone}, true},
	{"tool_choice_required", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired}, false},
	{"tool_choice_named", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "to_fahrenheit"}, false},
}

// badToolChoices are tool choices no request can honour.
var badToolChoices = []struct {
	name   string
	choice toolloop.ToolChoice
	tools  bool
}{
	{"unknown tool", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "get_time"}, true},
	{"required without tools", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired}, false},
	{"named without tools", toolloop.ToolChoice{Mode: toolloop.ToolChoiceRequired, Name: "get_weather"}, false},
	{"name with none", toolloop.ToolChoice{Mode: toolloop.ToolChoiceNone, Name: "get_weather"}, true},
	{"name with auto", toolloop.ToolChoice{Name: "get_weather"}, true},
	{"unknown mode", toolloop.ToolChoice{Mode: "any"}, true},
}

// toolChoice checks that each tool choice reaches the request, that
// without tools none sends what auto does, and that a choice no request
// can honour fails before anything is sent.
func (r *runner) toolChoice(t *testing.T) {
	t.Run("sent", func(t *testing.T) {
		srv, m := r.serve(t, 0)
		send := func(req *toolloop.Request, golden string) []byte {
			t.Helper()
			reply := r.first(t, turnText, req)
			if golden != "" && r.h.Golden != "" {
				reply.Golden, reply.Update = r.h.Golden+golden+".json", r.h.Update
			}
			srv.add(reply)
			if a := ask(context.Background(), m, req, false); a.err != nil {
				t.Fatalf("%s: %v", golden, a.err)
			}
			bodies := srv.Bodies()
			return bodies[len(bodies)-1]
		}
		bodies := map[string][]byte{}
		for _, tc := range toolChoices {
			bodies[tc.golden] = send(toolChoiceRequest(tc.choice, tc.wrapUp), tc.golden)
		}
		same := func(a, b []byte) bool { return diffJSON(a, b) == "" }
		for _, pair := range [][2]string{
			{"tool_choice_auto", "tool_choice_required"},
			{"tool_choice_auto", "tool_choice_named"},
			{"tool_choice_required", "tool_choice_named"},
		} {
			if same(bodies[pair[0]], bodies[pair[1]]) {
				t.Errorf("%s and %s send the same request: the tool choice does not reach it", pair[0], pair[1])
			}
		}
		if auto := send(toolChoiceRequest(toolloop.ToolChoice{}, true), ""); same(auto, bodies["tool_choice_none"]) {
			t.Errorf("the wrap-up turn sends the same request with tool choice none as with auto: none does not reach it")
		}
		noTools := weatherRequest()
		noTools.Tools = nil
		auto := send(noTools, "")
		noTools.ToolChoice.Mode = toolloop.ToolChoiceNone
		if d := diffJSON(auto, send(noTools, "tool_choice_none_without_tools")); d != "" {
			t.Errorf("without tools, tool choice none sends what auto does not (a request without tools sends no tool choice):\n%s", d)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, tc := range badToolChoices {
			t.Run(tc.name, func(t *testing.T) {
				srv, m := r.serve(t, 0)
				req := weatherRequest()
				if !tc.tools {
					req.Tools = nil
				}
				req.ToolChoice = tc.choice
				r.failsBeforeSending(t, srv, m, req, false)
			})
		}
	})
}
