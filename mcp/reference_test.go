package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/mcp"
)

// npmServer returns the config that starts a reference server pinned in
// testdata/npm/package.json over stdio, or skips the test (fails it when
// MCP_EVERYTHING_REQUIRED=1, as CI sets) if Node or the server is missing.
func npmServer(t testing.TB, pkg string, args ...string) mcp.ServerConfig {
	t.Helper()
	entry := filepath.Join(pkg, "dist", "index.js")
	node, path := npmPeer(t, entry)
	return mcp.ServerConfig{Command: node, Args: append([]string{path}, args...)}
}

// npmPeer returns the node binary and the path of file, which is relative
// to the @modelcontextprotocol packages installed from testdata/npm; or
// skips the test (fails it when MCP_EVERYTHING_REQUIRED=1, as CI sets) if
// Node or the package is missing.
func npmPeer(t testing.TB, file string) (node, path string) {
	t.Helper()
	skip := t.Skip
	if os.Getenv("MCP_EVERYTHING_REQUIRED") == "1" {
		skip = t.Fatal
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node not found; the tests against npm peers need Node 20+")
	}
	path = filepath.Join("testdata", "npm", "node_modules", "@modelcontextprotocol", file)
	if _, err := os.Stat(path); err != nil {
		skip(strings.SplitN(file, string(filepath.Separator), 2)[0] + " not installed; run: npm ci --prefix mcp/testdata/npm")
	}
	return node, path
}

// runTurns runs the loop over a scripted model: the given turns of calls,
// then a final answer. It returns the results by call ID.
func runTurns(t *testing.T, reg *toolloop.ToolRegistry, turns ...[]toolloop.ToolCall) map[string]*toolloop.ToolResult {
	t.Helper()
	var script []looptest.Turn
	for _, calls := range turns {
		script = append(script, looptest.Turn{Reply: looptest.Calls(calls...)})
	}
	script = append(script, looptest.Turn{Reply: looptest.Text("done")})
	loop := &toolloop.AgentLoop{Model: looptest.NewModel(t, script...), Tools: reg}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := loop.Run(ctx, []toolloop.Message{toolloop.UserMessage("go")})
	require.NoError(t, err)
	looptest.AssertValid(t, res.Messages)
	return looptest.Results(res.Messages)
}

func TestReferenceFilesystem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// 40 KB of text: once it was sent twice (text and a JSON copy), and
	// the 64 KiB result budget cut out its middle.
	var b strings.Builder
	for i := 0; b.Len() < 40<<10; i++ {
		fmt.Fprintf(&b, "line %05d of a file the model asked to read\n", i)
	}
	file := b.String()
	path := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(path, []byte(file), 0o600))

	src, err := mcp.New("fs", npmServer(t, "server-filesystem", dir), nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close()) }()
	reg := registry(t, src)
	names := specNames(reg.Specs(context.Background()))
	for _, want := range []string{"read_text_file", "list_directory", "write_file", "get_file_info"} {
		assert.Contains(t, names, "fs__"+want)
	}

	got := runTurns(t, reg, []toolloop.ToolCall{
		looptest.Call("read", "fs__read_text_file", fmt.Sprintf(`{"path":%q}`, path)),
		looptest.Call("list", "fs__list_directory", fmt.Sprintf(`{"path":%q}`, dir)),
		looptest.Call("outside", "fs__read_text_file", `{"path":"/etc/hostname"}`),
		looptest.Call("bad", "fs__read_text_file", `{"path":3}`),
	})

	read := got["read"]
	require.False(t, read.IsError(), read.Text())
	assert.Equal(t, file, read.Text(), "the file comes back whole")
	assert.Len(t, read.Content, 1, "and once")
	assert.False(t, read.Meta.Truncated)

	assert.Equal(t, "[FILE] big.txt", got["list"].Text())

	require.True(t, got["outside"].IsError())
	assert.Equal(t, toolloop.KindExecutionFailed, got["outside"].Error.Kind)
	require.True(t, got["bad"].IsError())
	assert.Equal(t, toolloop.KindInvalidArgs, got["bad"].Error.Kind)

	// Files past what the budget leaves for the structured copy, and past
	// the budget itself: the copy the budget cut is known for one.
	tool, ok := reg.Lookup(context.Background(), "fs__read_text_file")
	require.True(t, ok)
	const budget = 1 << 20
	for _, size := range []int{700 << 10, 3 << 20 / 2} {
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "line %07d of a large file\n", i)
		}
		path := filepath.Join(dir, fmt.Sprintf("large%d.txt", size))
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
		res, err := tool.Run(context.Background(), &toolloop.Call{ID: "1", Name: "fs__read_text_file",
			Arguments: json.RawMessage(fmt.Sprintf(`{"path":%q}`, path)), MaxOutputBytes: budget})
		require.NoError(t, err)
		require.Len(t, res.Content, 1, "size %d: the structured copy is not sent", size)
		if b.Len() <= budget {
			assert.Equal(t, b.String(), res.Text())
			assert.False(t, res.Meta.Truncated)
		} else {
			assert.True(t, res.Meta.Truncated)
			assert.Equal(t, b.Len(), res.Meta.Bytes)
			assert.LessOrEqual(t, len(res.Text()), budget)
		}
	}
}

// memoryServer returns the config of server-memory keeping its graph in a
// file of the test's.
func memoryConfig(t *testing.T) (mcp.ServerConfig, string) {
	cfg := npmServer(t, "server-memory")
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	cfg.Env = map[string]string{"MEMORY_FILE_PATH": file}
	return cfg, file
}

// createCalls are calls of create_entities, one entity each, in one turn.
func createCalls(n int) []toolloop.ToolCall {
	var calls []toolloop.ToolCall
	for i := range n {
		calls = append(calls, looptest.Call(fmt.Sprintf("create%d", i), "memory__create_entities",
			fmt.Sprintf(`{"entities":[{"name":"entity %d","entityType":"test","observations":["made in one turn"]}]}`, i)))
	}
	return calls
}

// storedEntities reads the names of the entities in server-memory's file.
func storedEntities(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var names []string
	for line := range strings.Lines(string(b)) {
		var e struct{ Type, Name string }
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Type == "entity" {
			names = append(names, e.Name)
		}
	}
	return names
}

func TestReferenceMemorySerialized(t *testing.T) {
	t.Parallel()
	cfg, file := memoryConfig(t)
	cfg.Serialize = true
	src, err := mcp.New("memory", cfg, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close()) }()
	reg := registry(t, src)

	const n = 4
	got := runTurns(t, reg, createCalls(n), []toolloop.ToolCall{
		looptest.Call("graph", "memory__read_graph", `{}`),
		looptest.Call("bad", "memory__create_entities", `{"entities":"none"}`),
	})
	for i := range n {
		r := got[fmt.Sprintf("create%d", i)]
		require.False(t, r.IsError(), r.Text())
	}
	// Every write landed: in the graph the server reads back, and in its
	// file.
	var graph struct{ Entities []struct{ Name string } }
	require.NoError(t, json.Unmarshal([]byte(got["graph"].Text()), &graph), got["graph"].Text())
	assert.Len(t, graph.Entities, n)
	assert.ElementsMatch(t, []string{"entity 0", "entity 1", "entity 2", "entity 3"}, storedEntities(t, file))
	require.True(t, got["bad"].IsError())
	assert.Equal(t, toolloop.KindInvalidArgs, got["bad"].Error.Kind)
}

// TestReferenceMemoryUnserialized documents why Serialize exists: the
// same calls without it race in server-memory (each reads the file, adds
// its entity, and writes the file back), and writes are lost. It skips
// when the race does not happen.
func TestReferenceMemoryUnserialized(t *testing.T) {
	t.Parallel()
	cfg, file := memoryConfig(t)
	src, err := mcp.New("memory", cfg, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close()) }()
	reg := registry(t, src)

	const n = 4
	got := runTurns(t, reg, createCalls(n))
	for i := range n {
		r := got[fmt.Sprintf("create%d", i)]
		require.False(t, r.IsError(), r.Text())
	}
	stored := storedEntities(t, file)
	if len(stored) == n {
		t.Skip("the concurrent writes did not race this time")
	}
	assert.Less(t, len(stored), n, "every call succeeded, yet writes were lost: %v", stored)
}

func TestReferenceSequentialThinking(t *testing.T) {
	t.Parallel()
	src, err := mcp.New("think", npmServer(t, "server-sequential-thinking"), nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close()) }()
	reg := registry(t, src)
	assert.Equal(t, []string{"think__sequentialthinking"}, specNames(reg.Specs(context.Background())))

	got := runTurns(t, reg, []toolloop.ToolCall{
		looptest.Call("one", "think__sequentialthinking", `{"thought":"first","thoughtNumber":1,"totalThoughts":2,"nextThoughtNeeded":true}`),
	}, []toolloop.ToolCall{
		looptest.Call("two", "think__sequentialthinking", `{"thought":"second","thoughtNumber":2,"totalThoughts":2,"nextThoughtNeeded":false}`),
		looptest.Call("bad", "think__sequentialthinking", `{"thought":1}`),
	})
	for _, id := range []string{"one", "two"} {
		r := got[id]
		require.False(t, r.IsError(), r.Text())
		require.Len(t, r.Content, 1, "structured content equal to the text is not sent again")
		var state struct {
			ThoughtNumber        int
			ThoughtHistoryLength int
		}
		require.NoError(t, json.Unmarshal([]byte(r.Text()), &state), r.Text())
		assert.Equal(t, state.ThoughtNumber, state.ThoughtHistoryLength, "the server kept the thoughts of one session")
	}
	require.True(t, got["bad"].IsError())
	assert.Equal(t, toolloop.KindInvalidArgs, got["bad"].Error.Kind)
}

// everythingHTTP runs server-everything over streamable HTTP on port.
type everythingHTTP struct {
	cmd    *exec.Cmd
	stderr chan struct{} // closed once its stderr is drained
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

func startEverythingHTTP(t testing.TB, port int) *everythingHTTP {
	t.Helper()
	cfg := npmServer(t, "server-everything", "streamableHttp")
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	e := &everythingHTTP{cmd: cmd, stderr: make(chan struct{})}
	up := make(chan struct{})
	go func() {
		defer close(e.stderr)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				close(up)
			}
		}
	}()
	t.Cleanup(e.kill)
	select {
	case <-up:
	case <-e.stderr:
		t.Fatal("server-everything exited before listening")
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not start listening")
	}
	return e
}

// kill kills the server at once, as a crash would, and reaps it.
func (e *everythingHTTP) kill() {
	_ = e.cmd.Process.Kill()
	<-e.stderr
	_ = e.cmd.Wait()
}

type progressFunc func(toolloop.Progress)

func (f progressFunc) ReportProgress(_ *toolloop.Call, p toolloop.Progress) { f(p) }
func (progressFunc) ReportPartial(*toolloop.Call, string)                   {}

// TestEverythingHTTPDiesAndRestarts kills server-everything (streamable
// HTTP, with its event store, so the SDK would try to resume the broken
// stream) in the middle of a long call: the call fails at once with a lost
// connection. A new server on the same address knows nothing of the old
// session (it answers 400): the next call starts a new session and
// succeeds.
func TestEverythingHTTPDiesAndRestarts(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	srv := startEverythingHTTP(t, port)
	logs := &logBuffer{}
	src := (&server{cfg: mcp.ServerConfig{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}, logs: logs}).source(t, "everything", nil, nil)
	reg := registry(t, src)
	ctx := context.Background()
	long, ok := reg.Lookup(ctx, "everything__trigger-long-running-operation")
	require.True(t, ok)
	echo, ok := reg.Lookup(ctx, "everything__echo")
	require.True(t, ok)
	callEcho := func() (*toolloop.ToolResult, error) {
		return echo.Run(ctx, &toolloop.Call{ID: "e", Name: "everything__echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
	}
	res, err := callEcho()
	require.NoError(t, err)
	assert.Equal(t, "Echo: hi", res.Text())

	took, err := killMidCall(t, long, srv)
	var lost *mcp.ConnectionLostError
	require.ErrorAs(t, err, &lost, "logs:\n%s", logs)
	assert.Equal(t, "everything", lost.Server)
	var te *toolloop.ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, toolloop.KindExecutionFailed, te.Kind)
	assert.Contains(t, te.Message, `the connection to MCP server "everything" was lost`)
	// A regression bound; BenchmarkHTTPServerDies measures it.
	assert.Less(t, took, 5*time.Second)
	t.Logf("the call failed %v after the server was killed", took)

	startEverythingHTTP(t, port)
	res, err = callEcho()
	require.NoError(t, err, "logs:\n%s", logs)
	assert.Equal(t, "Echo: hi", res.Text())
	require.NoError(t, src.Close()) // while the server is up to end the session
}

// killMidCall starts a long call of server-everything's, kills the server
// (SIGKILL) once the call has reported progress, and returns the call's
// error and how long after the signal it came.
func killMidCall(t testing.TB, long toolloop.Tool, srv *everythingHTTP) (time.Duration, error) {
	t.Helper()
	progressed := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		call := &toolloop.Call{ID: "l", Name: long.Spec().Name,
			Arguments: json.RawMessage(`{"duration":60,"steps":60}`),
			Reporter: progressFunc(func(toolloop.Progress) {
				select {
				case progressed <- struct{}{}:
				default:
				}
			})}
		_, err := long.Run(context.Background(), call)
		done <- err
	}()
	select {
	case <-progressed:
	case err := <-done:
		t.Fatalf("the long call ended early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the long call made no progress")
	}
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	defer srv.kill() // reap it
	select {
	case err := <-done:
		return time.Since(killed), err
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not fail after the server died")
	}
	return 0, nil
}
