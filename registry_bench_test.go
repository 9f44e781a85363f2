package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/toolloop/toolloop"
)

// Names for up to 10,000 distinct tools, the way MCP servers name them:
// server__verb_noun.
var (
	benchServers = []string{"github", "gitlab", "jira", "slack", "linear", "notion", "drive", "calendar", "gmail", "postgres",
		"mysql", "redis", "s3", "k8s", "docker", "sentry", "datadog", "stripe", "shopify", "zendesk"}
	benchVerbs = []string{"get", "list", "create", "update", "delete", "search", "read", "write", "move", "copy", "archive",
		"restore", "sync", "export", "import", "describe", "watch", "close", "open", "merge", "approve", "assign", "tag", "comment", "share"}
	benchNouns = []string{"issue", "file", "user", "project", "comment", "label", "branch", "commit", "message", "channel",
		"page", "record", "table", "event", "bucket", "object", "pod", "deployment", "invoice", "ticket"}
)

// benchToolName is the i-th of 10,000 distinct names.
func benchToolName(i int) string {
	noun := benchNouns[i%len(benchNouns)]
	i /= len(benchNouns)
	verb := benchVerbs[i%len(benchVerbs)]
	i /= len(benchVerbs)
	return benchServers[i%len(benchServers)] + "__" + verb + "_" + noun
}

// benchSchemas are a few realistic input schemas; typical tools share a
// handful of shapes.
var benchSchemas = []string{
	`{"type":"object","properties":{"id":{"type":"string","description":"Identifier."}},"required":["id"],"additionalProperties":false}`,
	`{"type":"object","properties":{"cursor":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":100}}}`,
	`{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}}},"required":["title"]}`,
	`{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer"},"order":{"type":"string","enum":["asc","desc"]}},"required":["query"]}`,
	`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"overwrite":{"type":"boolean","default":false}},"required":["path","content"]}`,
}

// benchTools returns n tools with distinct names. With distinct set, every
// tool's schema is different (its description names the tool, as real
// descriptions differ); otherwise the tools share five schemas.
func benchTools(n int, distinct bool) []toolloop.Tool {
	tools := make([]toolloop.Tool, n)
	for i := range tools {
		name := benchToolName(i)
		schema := benchSchemas[i%len(benchSchemas)]
		if distinct {
			schema = `{"type":"object","description":"Arguments of ` + name + `.","properties":{"id":{"type":"string","description":"The ` +
				strconv.Itoa(i) + `th identifier."},"limit":{"type":"integer","minimum":1}},"required":["id"]}`
		}
		tools[i] = &specTool{spec: toolloop.ToolSpec{Name: name, Description: "Tool " + name + ".", InputSchema: json.RawMessage(schema)}}
	}
	return tools
}

// register adds tools to a new registry, one Register call per tool or
// all in one call.
func register(tb testing.TB, tools []toolloop.Tool, oneByOne bool) *toolloop.ToolRegistry {
	reg := &toolloop.ToolRegistry{}
	if !oneByOne {
		if err := reg.Register(tools...); err != nil {
			tb.Fatal(err)
		}
		return reg
	}
	for _, t := range tools {
		if err := reg.Register(t); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}

// retainedPerTool is the heap a registry of tools keeps, per tool, after
// a collection, once it has listed its specs and made a suggestion, as a
// running loop has it: what each registered tool costs in memory, the
// tools themselves excluded.
func retainedPerTool(tb testing.TB, tools []toolloop.Tool, oneByOne bool) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	reg := register(tb, tools, oneByOne)
	reg.Specs(context.Background())
	reg.Suggest("no_such_tool")
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(reg)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(len(tools))
}

// BenchmarkRegister registers n tools into a new registry, one Register
// call per tool (how a program adds tools as it sets up) or all in one
// call, with a few shared schemas or all-distinct ones. ns/tool is the
// time per tool; B/tool is the heap the registry keeps per tool.
func BenchmarkRegister(b *testing.B) {
	for _, mode := range []string{"one-at-a-time", "one-call"} {
		for _, schemas := range []string{"few-schemas", "distinct-schemas"} {
			for _, n := range []int{100, 1000, 10000} {
				b.Run(fmt.Sprintf("%s/%s/%d", mode, schemas, n), func(b *testing.B) {
					tools := benchTools(n, schemas == "distinct-schemas")
					oneByOne := mode == "one-at-a-time"
					perTool := retainedPerTool(b, tools, oneByOne)
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						register(b, tools, oneByOne)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/tool")
					b.ReportMetric(perTool, "B/tool")
				})
			}
		}
	}
}

// BenchmarkNotFound10k is a call to a tool that does not exist, among
// 10,000: the failed lookup and the suggestions the model is told.
func BenchmarkNotFound10k(b *testing.B) {
	ctx := context.Background()
	reg := register(b, benchTools(10000, false), false)
	for _, q := range []struct{ name, query string }{
		{"typo", "github__crate_isue"}, // two slips in a long name
		{"unprefixed", "create_issue"}, // an MCP tool without its server
		{"unrelated", "deploy_to_production_now"},
		{"short", "rm"},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := reg.Lookup(ctx, q.query); ok {
					b.Fatal("found")
				}
				benchSink = reg.Suggest(q.query)
			}
		})
	}
}

var benchSink any

// BenchmarkLookup resolves names among 10,000 registered tools: all of
// them in turn (few in the processor's caches), from one goroutine and from
// all of them at once, and the same eight again and again, as a loop whose
// model uses a few tools does.
func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	const n = 10000
	reg := register(b, benchTools(n, false), false)
	names := make([]string, n)
	for i := range names {
		names[i] = benchToolName(i)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, ok := reg.Lookup(ctx, names[i%n]); !ok {
				b.Fatal("not found")
			}
			i++
		}
	})
	b.Run("same-eight", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, ok := reg.Lookup(ctx, names[i%8*1249]); !ok {
				b.Fatal("not found")
			}
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, ok := reg.Lookup(ctx, names[i%n]); !ok {
					b.Error("not found")
					return
				}
				i++
			}
		})
	})
}
