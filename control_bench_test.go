package toolloop

import (
	"context"
	"fmt"
	"testing"
)

// registry1000 registers n tools of varied names and descriptions, from
// 20 services of n/20 actions each.
func registry1000(b *testing.B, n int) *ToolRegistry {
	b.Helper()
	var reg ToolRegistry
	tools := make([]Tool, 0, n)
	verbs := []string{"get", "list", "create", "update", "delete"}
	for i := range n {
		svc := fmt.Sprintf("svc%02d", i%20)
		name := fmt.Sprintf("%s_%s_item%d", svc, verbs[i%len(verbs)], i)
		desc := fmt.Sprintf("%s an item of service %s: records, their owners and history. Use it to %s item %d.",
			verbs[i%len(verbs)], svc, verbs[i%len(verbs)], i)
		tools = append(tools, NewTool(name, desc, noop))
	}
	if err := reg.Register(tools...); err != nil {
		b.Fatal(err)
	}
	return &reg
}

// BenchmarkToolFilter1000 measures building a turn's request with 1,000
// registered tools: a filter that keeps a tenth, 900 deferred tools of
// which the transcript loaded some, and a filter whose choice changes on
// every turn (no reuse of the last turn's list).
func BenchmarkToolFilter1000(b *testing.B) {
	reg := registry1000(b, 1000)
	ctx := context.Background()
	msgs := []Message{UserMessage("go")}
	loaded := &ToolResult{Name: ToolSearchName, Status: StatusOK,
		Meta: ResultMeta{LoadedTools: []string{"svc03_list_item3", "svc04_create_item104"}}}
	msgs = append(msgs, ToolMessage(loaded))
	cases := map[string]*AgentLoop{
		"filter": {Tools: reg, ToolFilter: Only(SelectNames(firstNames(reg, 100)...))},
		"deferred": {Tools: reg, Deferred: func(t *ToolInfo) bool {
			return t.Name[3] != '0' || t.Name[4] != '0' // all but service 00
		}},
		"changing": {Tools: reg, ToolFilter: func(st *TurnState, t *ToolInfo) bool {
			return (len(t.Name)+st.Turn)%2 == 0
		}},
	}
	for name, l := range cases {
		b.Run(name, func(b *testing.B) {
			l.Model = nopModel{}
			rn := l.newRun("bench", nil)
			if err := rn.setup(nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var sent int
			for b.Loop() {
				rn.turn++
				turn, err := rn.request(ctx, msgs, ToolChoice{})
				if err != nil {
					b.Fatal(err)
				}
				sent = len(turn.Request.Tools)
			}
			b.ReportMetric(float64(sent), "tools/turn")
		})
	}
}

// BenchmarkToolSearch1000 measures one search of 1,000 deferred tools.
func BenchmarkToolSearch1000(b *testing.B) {
	reg := registry1000(b, 1000)
	infos := reg.Tools(context.Background())
	all := func(*ToolInfo) bool { return true }
	b.ReportAllocs()
	for b.Loop() {
		if got := searchTools(infos, all, "list owners of svc07 records", 5); len(got) != 5 {
			b.Fatal(len(got))
		}
	}
}

func firstNames(reg *ToolRegistry, n int) []string {
	var names []string
	for _, t := range reg.Tools(context.Background())[:n] {
		names = append(names, t.Name)
	}
	return names
}

type nopModel struct{}

func (nopModel) Generate(context.Context, *Request) (*Response, error) { return &Response{}, nil }
