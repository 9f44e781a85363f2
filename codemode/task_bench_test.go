package codemode_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/codemode"
	"github.com/toolloop/toolloop/looptest"
)

// The task benchmark of issue 34: three tasks that need 20 to 60 tool
// calls, each run as a plain loop and in code mode, on scripted models
// that act as a model would (they read the transcript to decide), with a
// fixed simulated latency per model turn. It reports model turns, the
// bytes of every request summed over the run (the transcript and the
// tool specs, as JSON), an estimate of their tokens (bytes/4) and the
// wall time.
//
// The plain loop's model asks for at most taskBatch independent calls per
// turn, as models commonly do, and one call per turn where each depends
// on the last; in code mode it writes one program, then answers from its
// output. TestCodeModeSaves checks the targets on the same runs.

// taskBatch is how many independent calls the plain loop's model makes in
// one turn.
const taskBatch = 5

// taskLatency is the simulated latency of each model turn.
const taskLatency = 10 * time.Millisecond

// benchTask is one task of the benchmark.
type benchTask struct {
	name  string
	tools func(*toolloop.ToolRegistry)
	// plain decides the plain loop's next turn from the transcript;
	// turn counts from 1.
	plain func(turn int, msgs []toolloop.Message) *toolloop.Response
	// program is what the model writes in code mode.
	program string
}

// taskFile is the text of Go file i of the first task: 2 to 60 KB.
func taskFile(i int) string {
	size := 2000 + (i*7919)%58000
	var b strings.Builder
	fmt.Fprintf(&b, "// Package pkg%02d holds file %02d of the task.\n", i, i)
	for b.Len() < size {
		fmt.Fprintf(&b, "func f%d() int { return %d } // filler line of file %02d\n", b.Len(), b.Len(), i)
	}
	return b.String()
}

// taskTestOutput is what run_tests prints for package i of the second
// task: every seventh package fails.
func taskTestOutput(i int) string {
	var b strings.Builder
	for k := range 20 {
		fmt.Fprintf(&b, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", k, k)
	}
	if i%7 == 3 {
		fmt.Fprintf(&b, "=== RUN   TestEdge\n    edge_test.go:%d: want %d, got %d\n--- FAIL: TestEdge (0.00s)\nFAIL\nFAIL\tmod/pkg%02d\t0.0%ds\n", 10+i, i, i+1, i, i%9)
		return b.String()
	}
	fmt.Fprintf(&b, "PASS\nok  \tmod/pkg%02d\t0.0%ds\n", i, i%9)
	return b.String()
}

// taskHit is one search hit of the third task.
type taskHit struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Score int    `json:"score"`
}

type taskPage struct {
	Hits []taskHit `json:"hits"`
	Next *int      `json:"next"`
}

// taskSearch is page p of the third task's 25 pages of 20 hits.
func taskSearch(p int) taskPage {
	var pg taskPage
	for k := range 20 {
		n := p*20 + k
		pg.Hits = append(pg.Hits, taskHit{ID: fmt.Sprintf("doc-%03d", n), Title: fmt.Sprintf("Document %d about the deploy pipeline and its retries", n), Score: (n * 7331) % 1000})
	}
	if p < 24 {
		next := p + 1
		pg.Next = &next
	}
	return pg
}

type pathArg struct {
	Path string `json:"path" jsonschema:"description=The file's path."`
}

var benchTasks = []benchTask{
	{
		name: "largest-files",
		tools: func(reg *toolloop.ToolRegistry) {
			reg.MustRegister(
				toolloop.NewTool("list_files", "List the Go files under a directory.", func(context.Context, struct {
					Dir string `json:"dir"`
				}) (any, error) {
					var out []string
					for i := range 50 {
						out = append(out, fmt.Sprintf("pkg/file%02d.go", i))
					}
					return out, nil
				}),
				toolloop.NewTool("read_file", "Read a file.", func(_ context.Context, in pathArg) (any, error) {
					var i int
					if _, err := fmt.Sscanf(in.Path, "pkg/file%02d.go", &i); err != nil {
						return nil, toolloop.Errorf(toolloop.KindNotFound, "no file %s", in.Path)
					}
					return taskFile(i), nil
				}),
			)
		},
		plain: func(turn int, msgs []toolloop.Message) *toolloop.Response {
			switch {
			case turn == 1:
				return looptest.Calls(looptest.Call("t1", "list_files", `{"dir":"pkg"}`))
			case turn <= 11:
				var calls []toolloop.ToolCall
				for k := range taskBatch {
					i := (turn-2)*taskBatch + k
					calls = append(calls, looptest.Call(fmt.Sprintf("t%d_%d", turn, k), "read_file", fmt.Sprintf(`{"path":"pkg/file%02d.go"}`, i)))
				}
				return looptest.Calls(calls...)
			}
			type file struct {
				path, first string
				size        int
			}
			var files []file
			for _, m := range msgs {
				if r := m.Result; r != nil {
					if r.Name == "read_file" {
						text := r.Text()
						first, _, _ := strings.Cut(text, "\n")
						files = append(files, file{r.CallID, first, len(text)})
					}
				}
			}
			slices.SortFunc(files, func(a, b file) int { return cmp.Compare(b.size, a.size) })
			var b strings.Builder
			for _, f := range files[:3] {
				fmt.Fprintf(&b, "%d bytes: %s\n", f.size, f.first)
			}
			return looptest.Text(b.String())
		},
		program: `const files = await tools.list_files({dir: "pkg"});
const texts = await Promise.all(files.map(path => tools.read_file({path})));
const sized = files.map((path, i) => ({path, size: texts[i].length, first: texts[i].split("\n")[0]}));
sized.sort((a, b) => b.size - a.size);
return sized.slice(0, 3).map(f => ` + "`${f.size} bytes: ${f.first}`" + `).join("\n");`,
	},
	{
		name: "failing-tests",
		tools: func(reg *toolloop.ToolRegistry) {
			reg.MustRegister(
				toolloop.NewTool("list_packages", "List the module's packages.", func(context.Context, struct{}) (any, error) {
					var out []string
					for i := range 40 {
						out = append(out, fmt.Sprintf("mod/pkg%02d", i))
					}
					return out, nil
				}),
				toolloop.NewTool("run_tests", "Run a package's tests (go test -v).", func(_ context.Context, in struct {
					Package string `json:"package"`
				}) (any, error) {
					var i int
					if _, err := fmt.Sscanf(in.Package, "mod/pkg%02d", &i); err != nil {
						return nil, toolloop.Errorf(toolloop.KindNotFound, "no package %s", in.Package)
					}
					return taskTestOutput(i), nil
				}),
				toolloop.NewTool("read_file", "Read a file.", func(_ context.Context, in pathArg) (any, error) {
					return strings.Repeat("// a line of the test file under "+in.Path+"\n", 60), nil
				}),
			)
		},
		plain: func(turn int, msgs []toolloop.Message) *toolloop.Response {
			switch {
			case turn == 1:
				return looptest.Calls(looptest.Call("t1", "list_packages", `{}`))
			case turn <= 9:
				var calls []toolloop.ToolCall
				for k := range taskBatch {
					i := (turn-2)*taskBatch + k
					calls = append(calls, looptest.Call(fmt.Sprintf("t%d_%d", turn, k), "run_tests", fmt.Sprintf(`{"package":"mod/pkg%02d"}`, i)))
				}
				return looptest.Calls(calls...)
			}
			var failing []string
			for _, m := range msgs {
				if r := m.Result; r != nil {
					if text := r.Text(); r.Name == "run_tests" && strings.Contains(text, "--- FAIL") {
						pkg, _, _ := strings.Cut(text[strings.LastIndex(text, "FAIL\t")+5:], "\t")
						failing = append(failing, pkg)
					}
				}
			}
			if turn <= 11 {
				var calls []toolloop.ToolCall
				for k, f := range failing {
					if k/taskBatch == turn-10 {
						calls = append(calls, looptest.Call(fmt.Sprintf("t%d_%d", turn, k), "read_file", fmt.Sprintf(`{"path":%q}`, f+"/edge_test.go")))
					}
				}
				return looptest.Calls(calls...)
			}
			return looptest.Text(fmt.Sprintf("%d packages fail: %s", len(failing), strings.Join(failing, ", ")))
		},
		program: `const pkgs = await tools.list_packages({});
const outs = await Promise.all(pkgs.map(p => tools.run_tests({package: p})));
const failing = [];
for (let i = 0; i < pkgs.length; i++) {
  if (!outs[i].includes("--- FAIL")) continue;
  const src = await tools.read_file({path: pkgs[i] + "/edge_test.go"});
  if (src.length > 0) failing.push(pkgs[i]);
}
return ` + "`${failing.length} packages fail: ${failing.join(\", \")}`" + `;`,
	},
	{
		name: "paged-search",
		tools: func(reg *toolloop.ToolRegistry) {
			reg.MustRegister(toolloop.NewTool("search", "Search the docs; one page of 20 hits at a time.", func(_ context.Context, in struct {
				Query string `json:"query"`
				Page  int    `json:"page"`
			}) (any, error) {
				if in.Page < 0 || in.Page > 24 {
					return nil, toolloop.Errorf(toolloop.KindInvalidArgs, "no page %d", in.Page)
				}
				return taskSearch(in.Page), nil
			}))
		},
		plain: func(turn int, msgs []toolloop.Message) *toolloop.Response {
			var hits []taskHit
			next := 0
			for _, m := range msgs {
				if r := m.Result; r != nil {
					var pg taskPage
					if len(r.Content) == 1 && json.Unmarshal(r.Content[0].JSON, &pg) == nil {
						hits = append(hits, pg.Hits...)
						next = -1
						if pg.Next != nil {
							next = *pg.Next
						}
					}
				}
			}
			if next >= 0 {
				return looptest.Calls(looptest.Call(fmt.Sprintf("t%d", turn), "search", fmt.Sprintf(`{"query":"deploy retries","page":%d}`, next)))
			}
			slices.SortStableFunc(hits, func(a, b taskHit) int { return cmp.Compare(b.Score, a.Score) })
			var ids []string
			for _, h := range hits[:5] {
				ids = append(ids, h.ID)
			}
			return looptest.Text("The best matches: " + strings.Join(ids, ", "))
		},
		program: `let page = 0;
const hits = [];
while (page !== null) {
  const r = await tools.search({query: "deploy retries", page});
  hits.push(...r.hits);
  page = r.next;
}
hits.sort((a, b) => b.score - a.score);
return "The best matches: " + hits.slice(0, 5).map(h => h.id).join(", ");`,
	},
}

// taskModel is the scripted model of a task run: it answers from a
// policy and measures every request.
type taskModel struct {
	policy  func(turn int, msgs []toolloop.Message) *toolloop.Response
	latency time.Duration

	mu           sync.Mutex
	turns, bytes int
}

func (m *taskModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.turns++
	m.bytes += len(b)
	turn := m.turns
	m.mu.Unlock()
	if m.latency > 0 {
		select {
		case <-time.After(m.latency):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return m.policy(turn, req.Messages), nil
}

// taskRun is what one run of a task cost.
type taskRun struct {
	turns, bytes, calls int
	answer              string
}

// runTask runs task t as a plain loop, or in code mode.
func runTask(t benchTask, code bool, latency time.Duration) (taskRun, error) {
	var reg toolloop.ToolRegistry
	t.tools(&reg)
	m := &taskModel{policy: t.plain, latency: latency}
	l := &toolloop.AgentLoop{Model: m, Tools: &reg, Budget: toolloop.Budget{MaxTurns: 40}}
	if code {
		reg.MustRegister(codemode.New(&reg, nil))
		// The model is sent the code tool alone: the other tools are the
		// program's.
		l.ToolFilter = toolloop.Only(toolloop.SelectNames("run_code"))
		m.policy = func(turn int, msgs []toolloop.Message) *toolloop.Response {
			if turn == 1 {
				args, _ := json.Marshal(map[string]string{"code": t.program})
				return looptest.Calls(looptest.Call("code_1", "run_code", string(args)))
			}
			last := msgs[len(msgs)-1]
			return looptest.Text(last.Result.Text())
		}
	}
	res, err := l.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Do the task: " + t.name)})
	if err != nil {
		return taskRun{}, err
	}
	return taskRun{turns: m.turns, bytes: m.bytes, calls: res.ToolCalls, answer: res.FinalText}, nil
}

// BenchmarkTask runs each task as a plain loop and in code mode.
func BenchmarkTask(b *testing.B) {
	for _, t := range benchTasks {
		for _, mode := range []string{"plain", "code"} {
			b.Run(t.name+"/"+mode, func(b *testing.B) {
				b.ReportAllocs()
				var last taskRun
				for b.Loop() {
					r, err := runTask(t, mode == "code", taskLatency)
					if err != nil {
						b.Fatal(err)
					}
					last = r
				}
				b.ReportMetric(float64(last.turns), "turns/op")
				b.ReportMetric(float64(last.calls), "calls/op")
				b.ReportMetric(float64(last.bytes), "req-bytes/op")
				b.ReportMetric(float64(last.bytes)/4, "est-tokens/op")
			})
		}
	}
}

// TestCodeModeSaves checks the targets on the benchmark's tasks:
// in code mode, at least 5× fewer model turns and at least 70% fewer
// request bytes than the plain loop, with the same answer.
func TestCodeModeSaves(t *testing.T) {
	for _, task := range benchTasks {
		t.Run(task.name, func(t *testing.T) {
			plain, err := runTask(task, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			code, err := runTask(task, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("plain: %d turns, %d calls, %d request bytes; code: %d turns, %d calls, %d request bytes",
				plain.turns, plain.calls, plain.bytes, code.turns, code.calls, code.bytes)
			if plain.calls < 20 || plain.calls > 61 {
				t.Errorf("the task takes %d calls, not 20 to 60", plain.calls)
			}
			if code.calls != plain.calls+1 {
				t.Errorf("code mode made %d calls (with its own), the plain loop %d: the program should make the same calls", code.calls, plain.calls)
			}
			if code.turns*5 > plain.turns {
				t.Errorf("code mode took %d turns, the plain loop %d: less than 5× fewer", code.turns, plain.turns)
			}
			if code.bytes*10 > plain.bytes*3 {
				t.Errorf("code mode sent %d request bytes, the plain loop %d: less than 70%% fewer", code.bytes, plain.bytes)
			}
			if !sameAnswer(plain.answer, code.answer) {
				t.Errorf("the answers differ:\nplain: %s\ncode:  %s", plain.answer, code.answer)
			}
		})
	}
}

// sameAnswer compares the two runs' answers, whitespace aside.
func sameAnswer(plain, code string) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	return norm(plain) == norm(code)
}
