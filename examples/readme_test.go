package examples_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readmeBlock is a Go code block of README.md.
type readmeBlock struct {
	line int // where the block starts
	code string
}

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	f, err := os.Open("../README.md")
	require.NoError(t, err)
	defer f.Close()
	var blocks []readmeBlock
	var cur *readmeBlock
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &readmeBlock{line: n}
			b.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = b.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "README.md ends inside a code block")
	return blocks
}

var packageRE = regexp.MustCompile(`(?m)^package (\w+)`)

// TestREADME builds every Go block of README.md as the program or test it
// must be, in this module (which requires every module of the
// repository), and runs the ones that work offline: programs that import
// no provider, with no API key in their environment, and every test.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds README.md's programs")
	}
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the README check needs the go command")
	here, err := os.Getwd()
	require.NoError(t, err)
	blocks := readmeBlocks(t)
	require.NotEmpty(t, blocks)
	for i, blk := range blocks {
		t.Run(fmt.Sprintf("line%d", blk.line), func(t *testing.T) {
			m := packageRE.FindStringSubmatch(blk.code)
			require.NotNil(t, m, "README.md:%d: a Go block must be a complete program or test, with its package clause and imports", blk.line)
			tmp := t.TempDir()
			src := filepath.Join(tmp, "block.go")
			isTest := strings.HasSuffix(m[1], "_test") || strings.Contains(blk.code, "\nfunc Test")
			name := "main.go"
			if isTest {
				name = "block_test.go"
			} else {
				require.Equal(t, "main", m[1], "README.md:%d: a program is package main, a test package x_test", blk.line)
			}
			require.NoError(t, os.WriteFile(src, []byte(blk.code), 0o644))
			// The block becomes a package of this module that exists only
			// in the build's overlay.
			pkgDir := filepath.Join(here, "internal", fmt.Sprintf("readme%d", i))
			overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkgDir, name): src}})
			require.NoError(t, err)
			ovPath := filepath.Join(tmp, "overlay.json")
			require.NoError(t, os.WriteFile(ovPath, overlay, 0o644))
			bin := filepath.Join(tmp, "block.bin")
			args := []string{"build", "-overlay", ovPath, "-o", bin, "./" + filepath.ToSlash(must(filepath.Rel(here, pkgDir)))}
			if isTest {
				args = []string{"test", "-c", "-vet=off", "-overlay", ovPath, "-o", bin, "./" + filepath.ToSlash(must(filepath.Rel(here, pkgDir)))}
			}
			out, err := exec.Command(goBin, args...).CombinedOutput()
			require.NoError(t, err, "README.md:%d does not build:\n%s", blk.line, out)
			if !isTest && strings.Contains(blk.code, "toolloop/providers/") {
				return // needs a provider's API: built, not run
			}
			run := func(args ...string) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, args...)
				cmd.Dir = tmp // a test's testdata/ is made here
				cmd.Env = offlineEnv()
				cmd.Stdin = strings.NewReader("") // nobody at the terminal
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "README.md:%d fails when run with %q:\n%s", blk.line, args, out)
				t.Logf("README.md:%d %q:\n%s", blk.line, args, out)
			}
			if isTest && strings.Contains(blk.code, `flag.Bool("update"`) {
				run("-test.v", "-update") // as the README says: go test -update once
			}
			if isTest {
				run("-test.v")
			} else {
				run()
			}
		})
	}
}

// offlineEnv is the environment without API keys or provider URLs.
func offlineEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
