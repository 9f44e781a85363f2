package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop/eval"
)

// evalScript reads a.txt and answers with what it holds.
const evalScript = `[
 {"role":"user","content":[{"type":"text","text":"go"}]},
 {"role":"assistant","content":[{"type":"text","text":"Reading."}],"tool_calls":[
   {"id":"c1","name":"read_file","arguments":{"path":"a.txt"}}]},
 {"role":"assistant","content":[{"type":"text","text":"It says hello."}]}
]`

const hostile = `</script><img src=x onerror=alert(1)>`

// passingDataset holds what evalScript does; failingDataset adds a case
// whose expectation it does not meet, with a hostile ID and prompt.
const passingDataset = `// the script's own run
{"id": "reads", "prompt": "What does a.txt say?", "expect": [{"type": "trajectory", "tools": ["read_file"]}, {"type": "text_contains", "text": "hello"}]}
{"id": "fixture", "prompt": "What does a.txt say?", "tools": ["read_file"], "fixtures": {"read_file": {"results": [{"text": "hello from a fixture"}]}}, "expect": [{"type": "tool_called", "name": "read_file", "arguments": {"path": "a.txt"}}]}
`

var failingDataset = passingDataset +
	`{"id": "` + strings.ReplaceAll(hostile, `"`, `\"`) + `", "prompt": "` + hostile + `", "expect": [{"type": "text_contains", "text": "goodbye"}]}
`

// evalEnv is a test env with a workspace holding a.txt, the script and a
// dataset.
func evalEnv(t *testing.T, dataset string) (te *testEnv, script, data string) {
	t.Helper()
	te = newTestEnv(t, "")
	writeFile(t, te.dir, "a.txt", "hello\n")
	tmp := t.TempDir()
	return te, writeFile(t, tmp, "script.json", evalScript), writeFile(t, tmp, "cases.jsonl", dataset)
}

// junitSuite is what the tests read of report.xml.
type junitSuite struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Cases    []struct {
		Name    string `xml:"name,attr"`
		Failure *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"failure"`
	} `xml:"testcase"`
}

func readJUnit(t *testing.T, path string) junitSuite {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var s junitSuite
	if err := xml.Unmarshal(b, &s); err != nil {
		// A testsuites root holding one suite.
		var all struct {
			Suites []junitSuite `xml:"testsuite"`
		}
		require.NoError(t, xml.Unmarshal(b, &all))
		require.Len(t, all.Suites, 1)
		s = all.Suites[0]
	}
	return s
}

func readJSONReport(t *testing.T, path string) *eval.Report {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep, err := eval.ReadReport(f)
	require.NoError(t, err)
	return rep
}

func TestEvalPasses(t *testing.T) {
	te, script, data := evalEnv(t, passingDataset)
	out := filepath.Join(t.TempDir(), "out")
	require.Equal(t, exitOK, te.run(t, "eval", "-script", script, "-C", te.dir, "-o", out, "-trials", "2", data), te.errOut.String())
	assert.Contains(t, te.out.String(), "2 passed, 0 failed, 0 skipped of 2 cases")

	rep := readJSONReport(t, filepath.Join(out, "report.json"))
	require.Len(t, rep.Cases, 2)
	for _, c := range rep.Cases {
		assert.Equal(t, eval.StatusPassed, c.Status, c.ID)
		require.Len(t, c.Trials, 2)
		for _, tr := range c.Trials {
			assert.FileExists(t, tr.LogPath)
		}
	}
	s := readJUnit(t, filepath.Join(out, "report.xml"))
	assert.Equal(t, 2, s.Tests)
	assert.Zero(t, s.Failures)

	// Every trial links to its own page, which exists.
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	require.NoError(t, err)
	links := regexp.MustCompile(`href="([^"]+)"`).FindAllStringSubmatch(string(page), -1)
	require.Len(t, links, 4)
	for _, l := range links {
		assert.True(t, strings.HasPrefix(l[1], "runs/"), l[1])
		assert.FileExists(t, filepath.Join(out, filepath.FromSlash(l[1])))
	}
}

func TestEvalFails(t *testing.T) {
	te, script, data := evalEnv(t, failingDataset)
	out := filepath.Join(t.TempDir(), "out")
	require.Equal(t, exitFailed, te.run(t, "eval", "-script", script, "-C", te.dir, "-o", out, data), te.errOut.String())
	assert.Contains(t, te.out.String(), "2 passed, 1 failed")
	assert.Contains(t, te.out.String(), `text_contains("goodbye")`)
	assert.Contains(t, te.errOut.String(), "1 of 3 cases failed")

	rep := readJSONReport(t, filepath.Join(out, "report.json"))
	require.Len(t, rep.Cases, 3)
	assert.Equal(t, eval.StatusFailed, rep.Cases[2].Status)
	assert.Equal(t, hostile, rep.Cases[2].ID)

	s := readJUnit(t, filepath.Join(out, "report.xml"))
	assert.Equal(t, 3, s.Tests)
	assert.Equal(t, 1, s.Failures)
	for _, c := range s.Cases {
		if c.Name == hostile {
			require.NotNil(t, c.Failure)
			assert.Contains(t, c.Failure.Text, `does not contain "goodbye"`)
		} else {
			assert.Nil(t, c.Failure, c.Name)
		}
	}

	// The hostile ID and prompt are escaped: no markup of theirs, no
	// script at all, and a policy that loads nothing.
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	require.NoError(t, err)
	html := string(page)
	assert.NotContains(t, html, "<img")
	assert.NotContains(t, html, "<script")
	assert.Contains(t, html, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;")
	assert.Contains(t, html, "default-src 'none'")
	// The policy allows the page's own style, by its hash.
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(html)
	require.NotNil(t, style)
	sum := sha256.Sum256([]byte(style[1]))
	assert.Contains(t, html, "style-src &#39;sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"&#39;;")
	assert.Contains(t, html, "1 of 1 run; needs 100%")
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, html)
	// The hostile case's page has a safe file name.
	for _, f := range mustGlob(t, filepath.Join(out, "runs", "*")) {
		assert.Regexp(t, `^[0-9]{3}-[A-Za-z0-9_-]*-[0-9]+\.html$`, filepath.Base(f))
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.NotEmpty(t, m)
	return m
}

func TestEvalCompare(t *testing.T) {
	te, script, data := evalEnv(t, passingDataset)
	old := filepath.Join(t.TempDir(), "old")
	require.Equal(t, exitOK, te.run(t, "eval", "-script", script, "-C", te.dir, "-o", old, data), te.errOut.String())

	// The same cases, one now expecting what the script does not say.
	worse := strings.Replace(passingDataset, `"text": "hello"`, `"text": "goodbye"`, 1)
	te2, _, data2 := evalEnv(t, worse)
	te2.dir = te.dir
	out := filepath.Join(t.TempDir(), "new")
	code := te2.run(t, "eval", "-script", script, "-C", te.dir, "-o", out, "-compare", filepath.Join(old, "report.json"), data2)
	assert.Equal(t, exitFailed, code, te2.errOut.String())
	assert.Contains(t, te2.out.String(), "reads")
	assert.Contains(t, strings.ToLower(te2.out.String()), "regression")
	assert.Contains(t, te2.errOut.String(), "regressed since")

	// Compared with itself, nothing regressed.
	te3, _, _ := evalEnv(t, passingDataset)
	require.Equal(t, exitOK, te3.run(t, "eval", "-script", script, "-C", te.dir, "-o", filepath.Join(t.TempDir(), "again"), "-compare", filepath.Join(old, "report.json"), data), te3.errOut.String())
}

func TestEvalFromLog(t *testing.T) {
	te, script, _ := evalEnv(t, "")
	log := filepath.Join(t.TempDir(), "run.jsonl")
	require.Equal(t, exitOK, te.run(t, "run", "-script", script, "-C", te.dir, "-log", log, "What does a.txt say?"), te.errOut.String())

	// To stdout: one case, the run's input and trajectory.
	te2 := newTestEnv(t, "")
	require.Equal(t, exitOK, te2.run(t, "eval", "-from", log), te2.errOut.String())
	cases, err := eval.ReadDataset(strings.NewReader(te2.out.String()))
	require.NoError(t, err)
	require.Len(t, cases, 1)
	c := cases[0]
	assert.True(t, strings.HasPrefix(c.ID, "run"), c.ID)
	assert.Equal(t, "What does a.txt say?", c.Prompt)
	assert.Equal(t, defaultSystem, c.System)
	require.Len(t, c.Expect, 1)
	assert.Equal(t, "trajectory", c.Expect[0].Type)
	var params struct {
		Tools []string `json:"tools"`
		Mode  string   `json:"mode"`
	}
	require.NoError(t, json.Unmarshal(c.Expect[0].Params, &params))
	assert.Equal(t, []string{"read_file"}, params.Tools)
	assert.Equal(t, "in_order", params.Mode)

	// Appended to a dataset, which then runs and passes against the same
	// model; adding it twice is refused.
	data := writeFile(t, t.TempDir(), "cases.jsonl", strings.SplitN(passingDataset, "\n", 3)[1]) // no final newline
	te3 := newTestEnv(t, "")
	require.Equal(t, exitOK, te3.run(t, "eval", "-from", log, "-o", data), te3.errOut.String())
	got, err := eval.LoadDataset(data)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, c.ID, got[1].ID)
	te4 := newTestEnv(t, "")
	assert.Equal(t, exitUsage, te4.run(t, "eval", "-from", log, "-o", data))
	assert.Contains(t, te4.errOut.String(), "already")

	te5 := newTestEnv(t, "")
	require.Equal(t, exitOK, te5.run(t, "eval", "-script", script, "-C", te.dir, "-o", filepath.Join(t.TempDir(), "out"), data), te5.out.String()+te5.errOut.String())
	assert.Contains(t, te5.out.String(), "2 passed, 0 failed")
}

func TestEvalBadInput(t *testing.T) {
	badLine := passingDataset + `{"id": "x", "prompt": "hi", "expect": [{"type": "no_such_scorer"}]}` + "\n"
	badJSON := passingDataset + "{not json\n"
	for _, tc := range []struct {
		name    string
		dataset string
		args    []string
		stderr  string
	}{
		{"no dataset", "", []string{}, "give one dataset"},
		{"two datasets", "", []string{"a", "b"}, "give one dataset"},
		{"missing dataset", "", []string{"nope.jsonl"}, "no such dataset"},
		{"bad json", badJSON, nil, ":4:"},
		{"unknown scorer", badLine, nil, "no_such_scorer"},
		{"bad trials", passingDataset, []string{"-trials", "0"}, "-trials 0"},
		{"bad flag", passingDataset, []string{"-nope"}, "flag provided but not defined"},
		{"from with dataset", "", []string{"-from", "x.jsonl", "d.jsonl"}, "-from takes no dataset"},
		{"from missing log", "", []string{"-from", "nope.jsonl"}, "no such log"},
		{"compare missing", passingDataset, []string{"-compare", "nope.json"}, "-compare"},
		{"no model", passingDataset, []string{"-script", ""}, "no model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te, script, data := evalEnv(t, tc.dataset)
			args := []string{"eval", "-script", script, "-C", te.dir, "-o", filepath.Join(t.TempDir(), "out")}
			args = append(args, tc.args...)
			if tc.dataset != "" {
				args = append(args, data)
			}
			assert.Equal(t, exitUsage, te.run(t, args...))
			assert.Contains(t, te.errOut.String(), tc.stderr)
		})
	}
	te := newTestEnv(t, "")
	assert.Equal(t, exitOK, te.run(t, "eval", "-h"))
	assert.Contains(t, te.errOut.String(), "Usage: toolloop eval")
}

func TestEvalInterrupted(t *testing.T) {
	te, script, data := evalEnv(t, passingDataset)
	te.ints <- os.Interrupt // as the eval starts
	out := filepath.Join(t.TempDir(), "out")
	assert.Equal(t, exitInterrupted, te.run(t, "eval", "-script", script, "-C", te.dir, "-o", out, data))
	// The reports are written with what ran: the trials are quick, so
	// some may have ended before the interrupt canceled the rest.
	rep := readJSONReport(t, filepath.Join(out, "report.json"))
	assert.Equal(t, 2, rep.Summary.Passed+rep.Summary.Skipped)
	assert.Zero(t, rep.Summary.Failed)
}

// TestEvalJudge checks that judge expectations reach a judge model: the
// script, which answers the judge with a tool call rather than a grade,
// so the judge's score fails, saying why, and the case with it.
func TestEvalJudge(t *testing.T) {
	te, script, data := evalEnv(t, `{"id": "judged", "prompt": "What does a.txt say?", "expect": [{"type": "judge", "rubric": "The answer says what a.txt holds."}]}`+"\n")
	out := filepath.Join(t.TempDir(), "out")
	require.Equal(t, exitFailed, te.run(t, "eval", "-script", script, "-judge-model", "grader", "-C", te.dir, "-o", out, data), te.errOut.String())
	rep := readJSONReport(t, filepath.Join(out, "report.json"))
	require.Len(t, rep.Cases, 1)
	require.Len(t, rep.Cases[0].Trials, 1)
	scores := rep.Cases[0].Trials[0].Scores
	require.Len(t, scores, 1)
	assert.Equal(t, "judge", scores[0].Scorer)
	assert.False(t, scores[0].Pass)
	assert.NotEmpty(t, scores[0].Reason)
}
