package toolloop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coreGraph is every module a program that imports the core module may
// find in its module graph, and why. A new entry is a new cost for every
// user: it needs a reason here and in the closing note of the change that
// adds it.
var coreGraph = map[string]string{
	"github.com/toolloop/toolloop":             "the core module",
	"github.com/santhosh-tekuri/jsonschema/v5": "argument validation (the design's validator)",
	"github.com/invopop/jsonschema":            "schema inference for NewTool",
	"github.com/pb33f/ordered-map/v2":          "invopop/jsonschema's ordered properties",
	"github.com/bahlo/generic-list-go":         "pb33f/ordered-map's list",
	"github.com/buger/jsonparser":              "pb33f/ordered-map's JSON decoding",
	"go.yaml.in/yaml/v4":                       "pb33f/ordered-map's YAML support (compiled only if used)",
	"github.com/google/go-cmp":                 "looptest's readable transcript diffs",
	"github.com/stretchr/testify":              "the core's tests (go.mod lists test dependencies too)",
	"go.yaml.in/yaml/v3":                       "testify's YAML assertions (tests)",
	"github.com/davecgh/go-spew":               "testify and invopop/jsonschema's tests",
	"github.com/pmezard/go-difflib":            "testify and invopop/jsonschema's tests",
	"gopkg.in/yaml.v3":                         "invopop/jsonschema's tests",
	"go.uber.org/goleak":                       "the core's tests: no goroutine outlives its call",
}

// heavy are the module path prefixes that must never reach a program that
// imports only the core: they belong to the nested modules.
var heavy = []string{
	"go.temporal.io/",
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
	"google.golang.org/genai",
	"go.opentelemetry.io/",
	"github.com/go-git/",
	"github.com/hashicorp/",
	"github.com/modelcontextprotocol/",
	"github.com/openai/",
	"github.com/anthropics/",
	"mvdan.cc/sh/",
	"github.com/dop251/goja",
	"github.com/dlclark/regexp2",
	"golang.org/x/net",
	"github.com/jackc/",
	"modernc.org/",
}

// TestCoreModuleGraph is the promise that importing the loop pulls in only
// the loop. It builds a scratch module that imports every public package
// of the core module through a replace to this checkout, runs go mod tidy
// and go list -m all there, and checks the modules listed against
// coreGraph. It works offline: the go command reads only the module cache,
// which testing this module has filled.
func TestCoreModuleGraph(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := os.Getwd()
	require.NoError(t, err)
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		if strings.Contains(stderr, "lookup disabled") {
			stderr += "\n(the go command needed a module that testing the core did not download: the core's module graph has grown)"
		}
		require.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, stderr)
		return string(out)
	}

	// Every importable package of the core module (not internal ones, not
	// commands).
	var imports []string
	for _, line := range strings.Split(strings.TrimSpace(run(root, "list", "-f", "{{.Name}} {{.ImportPath}}", "./...")), "\n") {
		name, path, _ := strings.Cut(line, " ")
		if name == "main" || strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal") {
			continue
		}
		imports = append(imports, path)
	}
	require.Contains(t, imports, "github.com/toolloop/toolloop")
	require.Contains(t, imports, "github.com/toolloop/toolloop/looptest")

	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range imports {
		src.WriteString("\t_ \"" + p + "\"\n")
	}
	src.WriteString(")\n\nfunc main() {}\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644))
	gomod := "module scratch\n\ngo 1.26.0\n\n" +
		"require github.com/toolloop/toolloop v0.0.0-00010101000000-000000000000\n\n" +
		"replace github.com/toolloop/toolloop => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	// The core's checksums, so that tidy needs no checksum database.
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644))

	run(dir, "mod", "tidy")
	var mods []string
	for _, line := range strings.Split(strings.TrimSpace(run(dir, "list", "-m", "-e", "-f", "{{.Path}}", "all")), "\n") {
		if line != "scratch" {
			mods = append(mods, line)
		}
	}
	require.Contains(t, mods, "github.com/toolloop/toolloop")
	for _, m := range mods {
		for _, h := range heavy {
			assert.False(t, strings.HasPrefix(m, h), "importing the core pulls in %s, which belongs to a nested module", m)
		}
		_, ok := coreGraph[m]
		assert.True(t, ok, "importing the core pulls in %s: justify it in coreGraph or remove it", m)
	}
	// An entry no longer needed is a stale justification.
	for m := range coreGraph {
		assert.True(t, slices.Contains(mods, m), "coreGraph lists %s, which the core no longer pulls in", m)
	}
}
