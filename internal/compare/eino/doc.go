// Package eino holds benchmarks that set one tool call through toolloop
// beside the same call through eino's ToolsNode (github.com/cloudwego/eino),
// the comparison of issue 38, in one process so that every ratio is taken
// against a baseline measured in the same run.
//
// It is a module of its own, never published or imported, so that eino
// and what it needs reach no user's module graph and no other module's
// go.mod. It is kept out of go.work too: adding it there would raise
// dependency versions that the workspace's other modules build with (see
// BENCHMARKS.md, "Cost per task: the per-call path"). Run it with GOWORK=off:
//
//	cd internal/compare/eino && GOWORK=off go test -run '^$' -bench . -benchmem -count 8
package eino
