package taskbench

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
)

// codeStep rewrites a step's calls as one program for the code tool:
// the calls are independent, so they run together, and the program
// returns what a model needs of each result: a file whole, the search
// hits whole, a test log cut to its failures and verdict, an edit's
// status.
func codeStep(resp *toolloop.Response) *toolloop.Response {
	calls := resp.Message.ToolCalls
	if len(calls) == 0 {
		return resp
	}
	var b strings.Builder
	b.WriteString("const [")
	for k := range calls {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "r%d", k)
	}
	b.WriteString("] = await Promise.all([\n")
	for _, c := range calls {
		fmt.Fprintf(&b, "  tools.%s(%s),\n", c.Name, c.Arguments)
	}
	b.WriteString("]);\nconst out = [];\n")
	for k, c := range calls {
		var args map[string]string
		_ = json.Unmarshal(c.Arguments, &args)
		label, _ := json.Marshal(c.Name + " " + args["path"] + args["pattern"] + args["package"] + args["dir"])
		switch c.Name {
		case "run_tests":
			fmt.Fprintf(&b, "out.push(%s + \":\\n\" + r%d.split(\"\\n\").filter(l => l.startsWith(\"    \") || l.startsWith(\"--- FAIL\") || l.startsWith(\"FAIL\") || l.startsWith(\"ok \") || l === \"PASS\").join(\"\\n\"));\n", label, k)
		default:
			fmt.Fprintf(&b, "out.push(%s + \":\\n\" + r%d);\n", label, k)
		}
	}
	b.WriteString("return out.join(\"\\n\\n\");")
	args, _ := json.Marshal(map[string]string{"code": b.String()})
	msg := resp.Message
	msg.ToolCalls = []toolloop.ToolCall{{ID: calls[0].ID, Name: "run_code", Arguments: args}}
	return &toolloop.Response{Message: msg, StopReason: resp.StopReason}
}
