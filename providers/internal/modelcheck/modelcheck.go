// Package modelcheck reads the model constants a provider's SDK declares,
// so that the provider's tests fail when the SDK version in go.mod marks
// the provider's default model deprecated, or no longer lists it.
//
// It reads the SDK's source in the module cache, where the build put it,
// found with go list -m with the module proxy off: no network.
package modelcheck

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolloop/toolloop"
)

// Model is a constant an SDK declares for a model.
type Model struct {
	// Name is the constant's name, File the file that declares it.
	Name, File string
	// Doc is the constant's doc comment.
	Doc string
}

// Deprecated returns the deprecation notice of m's doc comment: the
// paragraph that begins "Deprecated:", as Go's convention has it, or "".
func (m Model) Deprecated() string {
	for _, para := range strings.Split(m.Doc, "\n\n") {
		if p := strings.TrimSpace(para); strings.HasPrefix(p, "Deprecated:") {
			return strings.Join(strings.Fields(p), " ")
		}
	}
	return ""
}

// Find returns the constants whose value is the string model, declared
// in the non-test Go files of the package at dir (relative to the root of
// module, the SDK's module path as go.mod requires it). It fails the test
// if the module or the package cannot be read.
func Find(t testing.TB, module, dir, model string) []Model {
	t.Helper()
	root := moduleDir(t, module)
	pkg := filepath.Join(root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(pkg)
	if err != nil {
		t.Fatalf("modelcheck: reading %s of %s: %v", dir, module, err)
	}
	quoted := []byte(strconv.Quote(model))
	var out []Model
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(pkg, name)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("modelcheck: %v", err)
		}
		if !bytes.Contains(src, quoted) {
			continue // most files of a large SDK never name the model
		}
		out = append(out, constants(t, path, src, model)...)
	}
	return out
}

// constants returns the constants of one file whose value is model.
func constants(t testing.TB, path string, src []byte, model string) []Model {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments)
	if err != nil {
		t.Fatalf("modelcheck: %v", err)
	}
	var out []Model
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING || i >= len(vs.Names) {
					continue
				}
				if s, err := strconv.Unquote(lit.Value); err != nil || s != model {
					continue
				}
				doc := vs.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				out = append(out, Model{Name: vs.Names[i].Name, File: filepath.Base(path), Doc: doc.Text()})
			}
		}
	}
	return out
}

// moduleDir returns the directory of module in the module cache, as the
// go command resolves it for the current module (or workspace), with the
// module proxy off so that nothing is fetched.
func moduleDir(t testing.TB, module string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("modelcheck: the go command is needed to find %s: %v", module, err)
	}
	cmd := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("modelcheck: go list -m %s: %v\n%s", module, err, stderr.String())
	}
	return dir
}

// Current fails t unless model, a provider's default, is current: the
// package at dir of module (see [Find]) declares it, no declaration of it
// is deprecated, and toolloop's model table knows its context window and
// price, so that cost and the context managers work with the default.
func Current(t testing.TB, module, dir, model string) {
	t.Helper()
	models := Find(t, module, dir, model)
	if len(models) == 0 {
		t.Errorf("the SDK (%s, package %s) declares no model %q: pick a default it knows", module, dir, model)
	}
	for _, m := range models {
		if d := m.Deprecated(); d != "" {
			t.Errorf("the SDK marks the default model %q deprecated (%s in %s: %s): pick a current model", model, m.Name, m.File, d)
		}
	}
	info, ok := toolloop.LookupModel(model)
	switch {
	case !ok:
		t.Errorf("toolloop's model table does not know %q: add it to modeltable.go", model)
	case info.ContextWindow == 0 || info.Price == nil:
		t.Errorf("toolloop's model table has no context window or price for %q", model)
	}
}
