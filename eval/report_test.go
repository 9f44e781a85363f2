package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
	"github.com/toolloop/toolloop/looptest"
)

// sampleReport runs three cases: one passing, one failing (twice, for
// different reasons), one skipped by the budget.
func sampleReport(t *testing.T) *eval.Report {
	t.Helper()
	cases := []eval.Case{
		{ID: "pass", Prompt: "x", Expect: []eval.Expectation{exp(`{"type": "text_contains", "text": "ok"}`)}},
		{ID: "fail <&>", Prompt: "x", Trials: 2, Expect: []eval.Expectation{
			exp(`{"type": "text_contains", "text": "ok"}`), exp(`{"type": "tool_called", "name": "search"}`)}},
		{ID: "later", Prompt: "x"},
	}
	reply := looptest.Text("ok")
	reply.Usage = toolloop.Usage{InputTokens: 10}
	r := &eval.Runner{Name: "sample", Concurrency: 1, Budget: eval.Budget{MaxTokens: 30}, LogDir: t.TempDir(),
		Loop: func(c *eval.Case) (*toolloop.AgentLoop, error) {
			if c.ID == "pass" {
				return &toolloop.AgentLoop{Model: looptest.Script(reply)}, nil
			}
			no := looptest.Text("no")
			no.Usage = reply.Usage
			return &toolloop.AgentLoop{Model: looptest.Script(no)}, nil
		}}
	rep, err := r.Run(context.Background(), cases)
	require.NoError(t, err)
	return rep
}

func TestReportJSON(t *testing.T) {
	rep := sampleReport(t)
	var b bytes.Buffer
	require.NoError(t, rep.WriteJSON(&b))

	// The field names are stable: check a few by name.
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	for _, k := range []string{"name", "started", "duration_ns", "summary", "stopped", "cases"} {
		assert.Contains(t, doc, k)
	}
	c0 := doc["cases"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "status", "passed", "failed", "skipped", "pass_rate", "min_pass_rate", "pass_at_k", "scorers", "trials"} {
		assert.Contains(t, c0, k)
	}
	t0 := c0["trials"].([]any)[0].(map[string]any)
	for _, k := range []string{"trial", "status", "scores", "log_path", "run_id", "turns", "usage", "cost_usd", "duration_ns", "final_text"} {
		assert.Contains(t, t0, k)
	}
	s0 := t0["scores"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"scorer": `text_contains("ok")`, "pass": true, "value": 1.0}, s0)

	back, err := eval.ReadReport(&b)
	require.NoError(t, err)
	assert.Equal(t, rep.Summary, back.Summary)
	assert.Equal(t, rep.Cases, back.Cases)
	assert.True(t, rep.Started.Equal(back.Started))

	_, err = eval.ReadReport(strings.NewReader("{"))
	assert.Error(t, err)
}

// junitShape is what each element of the JUnit XML may hold, after the
// common JUnit schema (the one Jenkins, GitLab and the GitHub reporters
// read): its required attributes and its allowed children.
var junitShape = map[string]struct {
	attrs    []string
	children []string
}{
	"testsuites": {[]string{"tests", "failures"}, []string{"testsuite"}},
	"testsuite":  {[]string{"name", "tests", "failures", "errors", "skipped", "time"}, []string{"properties", "testcase"}},
	"properties": {nil, []string{"property"}},
	"property":   {[]string{"name", "value"}, nil},
	"testcase":   {[]string{"name", "classname", "time"}, []string{"failure", "skipped", "system-out"}},
	"failure":    {[]string{"message"}, nil},
	"skipped":    {nil, nil},
	"system-out": {nil, nil},
}

// checkJUnit fails the test if the document is not well-formed JUnit XML
// of that shape.
func checkJUnit(t *testing.T, doc []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []string
	props := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			shape, ok := junitShape[name]
			require.True(t, ok, "unknown element %s", name)
			if len(stack) == 0 {
				require.Equal(t, "testsuites", name)
			} else {
				parent := stack[len(stack)-1]
				require.Contains(t, junitShape[parent].children, name, "%s in %s", name, parent)
			}
			for _, a := range shape.attrs {
				require.True(t, slices.ContainsFunc(el.Attr, func(x xml.Attr) bool { return x.Name.Local == a }), "%s without %s", name, a)
			}
			stack = append(stack, name)
		case xml.EndElement:
			if el.Name.Local == "properties" {
				require.Positive(t, props, "properties without a property")
			}
			if el.Name.Local == "property" {
				props++
			}
			stack = stack[:len(stack)-1]
		}
	}
	require.Empty(t, stack)
}

func TestReportJUnit(t *testing.T) {
	rep := sampleReport(t)
	var b bytes.Buffer
	require.NoError(t, rep.WriteJUnit(&b))
	checkJUnit(t, b.Bytes())

	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
				Out string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b.Bytes(), &doc))
	assert.Equal(t, 3, doc.Tests)
	assert.Equal(t, 1, doc.Failures)
	assert.Equal(t, 1, doc.Skipped)
	require.Len(t, doc.Suites, 1)
	suite := doc.Suites[0]
	assert.Equal(t, "sample", suite.Name)
	require.Len(t, suite.Cases, 3)

	pass, fail, later := suite.Cases[0], suite.Cases[1], suite.Cases[2]
	assert.Equal(t, "pass", pass.Name)
	assert.Nil(t, pass.Failure)
	assert.Contains(t, pass.Out, rep.Cases[0].Trials[0].LogPath)

	assert.Equal(t, "fail <&>", fail.Name)
	require.NotNil(t, fail.Failure)
	assert.Equal(t, "2 of 2 trials failed", fail.Failure.Message)
	assert.Contains(t, fail.Failure.Text, "trial 2:")
	assert.Contains(t, fail.Failure.Text, `text_contains("ok"): the final text does not contain "ok"`)
	assert.Contains(t, fail.Failure.Text, "tool_called(search): search was never called")

	assert.Equal(t, "later", later.Name)
	require.NotNil(t, later.Skipped)
	assert.Contains(t, later.Skipped.Message, "tokens")
	assert.Equal(t, 1, rep.ExitCode())
}

// withRates returns a report of one case whose scorers have the given
// pass rates, the case passing when every rate is 1.
func withRates(id string, rates map[string]float64) eval.CaseReport {
	c := eval.CaseReport{ID: id, Status: eval.StatusPassed, PassRate: 1, MinPassRate: 1}
	for _, name := range slices.Sorted(mapsKeys(rates)) {
		c.Scorers = append(c.Scorers, eval.ScorerReport{Name: name, PassRate: rates[name]})
		if rates[name] < 1 {
			c.Status, c.PassRate = eval.StatusFailed, rates[name]
		}
	}
	return c
}

func mapsKeys(m map[string]float64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestCompare(t *testing.T) {
	before := &eval.Report{Cases: []eval.CaseReport{
		withRates("steady", map[string]float64{"a": 1}),
		withRates("broke", map[string]float64{"a": 1, "b": 1}),
		withRates("fixed", map[string]float64{"a": 0.5}),
		withRates("gone", map[string]float64{"a": 1}),
		{ID: "was skipped", Status: eval.StatusSkipped},
	}}
	after := &eval.Report{Cases: []eval.CaseReport{
		withRates("new", map[string]float64{"a": 0}),
		withRates("steady", map[string]float64{"a": 1, "extra": 1}),
		withRates("broke", map[string]float64{"a": 1, "b": 0.5, "c": 0}),
		withRates("fixed", map[string]float64{"a": 1}),
		withRates("was skipped", map[string]float64{"a": 0}),
	}}
	cmp := eval.Compare(before, after)
	assert.Equal(t, []eval.Change{
		{Case: "broke", Before: 1, After: 0, BeforeStatus: eval.StatusPassed, AfterStatus: eval.StatusFailed},
		{Case: "broke", Scorer: "b", Before: 1, After: 0.5},
		{Case: "broke", Scorer: "c", Before: 1, After: 0},
	}, cmp.Regressions)
	assert.Equal(t, []eval.Change{
		{Case: "fixed", Before: 0.5, After: 1, BeforeStatus: eval.StatusFailed, AfterStatus: eval.StatusPassed},
		{Case: "fixed", Scorer: "a", Before: 0.5, After: 1},
	}, cmp.Improvements)
	assert.Equal(t, []string{"new"}, cmp.Added)
	assert.Equal(t, []string{"gone"}, cmp.Removed)
	assert.Equal(t, []string{"was skipped"}, cmp.Skipped)
	assert.Equal(t, 1, cmp.ExitCode())

	var b strings.Builder
	require.NoError(t, cmp.WriteText(&b))
	assert.Equal(t, `regressions: 3
  broke: passed -> failed (pass rate 1.00 -> 0.00)
  broke / b: pass rate 1.00 -> 0.50
  broke / c: pass rate 1.00 -> 0.00
improvements: 2
  fixed: failed -> passed (pass rate 0.50 -> 1.00)
  fixed / a: pass rate 0.50 -> 1.00
added: 1
  new
removed: 1
  gone
skipped: 1
  was skipped
`, b.String())

	same := eval.Compare(after, after)
	assert.Empty(t, same.Regressions)
	assert.Empty(t, same.Improvements)
	assert.Equal(t, 0, same.ExitCode())
}

// TestCompareRuns compares two real runs: the same dataset, the second
// with a model that stopped calling the tool.
func TestCompareRuns(t *testing.T) {
	cases, err := eval.LoadDataset("testdata/weather.jsonl")
	require.NoError(t, err)
	good := map[string][]*toolloop.Response{
		"paris":    {looptest.Calls(looptest.Call("c1", "get_weather", `{"city":"Paris"}`)), looptest.Text("It is 18°C.")},
		"greeting": {looptest.Text("Hello!")},
	}
	bad := map[string][]*toolloop.Response{
		"paris":    {looptest.Text("It is 18°C, I guess.")},
		"greeting": {looptest.Text("Hello!")},
	}
	before, err := (&eval.Runner{Loop: scripted(good)}).Run(context.Background(), cases)
	require.NoError(t, err)
	after, err := (&eval.Runner{Loop: scripted(bad)}).Run(context.Background(), cases)
	require.NoError(t, err)

	cmp := eval.Compare(before, after)
	assert.Equal(t, 1, cmp.ExitCode())
	require.Len(t, cmp.Regressions, 2)
	assert.Equal(t, "paris", cmp.Regressions[0].Case)
	assert.Equal(t, "tool_called(get_weather)", cmp.Regressions[1].Scorer)
	back := eval.Compare(after, before)
	assert.Equal(t, 0, back.ExitCode())
	assert.Len(t, back.Improvements, 2)
}
