package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop/eval"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// junit is the part of report.xml that CI reads.
type junit struct {
	Suites []struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestRun runs the dataset: four cases pass, "oncall" fails on purpose,
// and the JUnit report shows that one failure with its scorers' reasons.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	code, err := run(t.Context(), &out, dir)
	require.NoError(t, err)
	assert.Equal(t, 1, code, "a case failed: exit 1 for CI")
	assert.Contains(t, out.String(), "4 of 5 cases passed")

	b, err := os.ReadFile(filepath.Join(dir, "report.xml"))
	require.NoError(t, err)
	var j junit
	require.NoError(t, xml.Unmarshal(b, &j))
	require.Len(t, j.Suites, 1)
	s := j.Suites[0]
	assert.Equal(t, 5, s.Tests)
	assert.Equal(t, 1, s.Failures)
	require.Len(t, s.Cases, 5)
	for _, c := range s.Cases {
		if c.Name != "oncall" {
			assert.Nil(t, c.Failure, c.Name)
			continue
		}
		require.NotNil(t, c.Failure)
		assert.Contains(t, c.Failure.Text, "tool_called(read_note): read_note was never called")
		assert.Contains(t, c.Failure.Text, `text_contains("10 minutes"): the final text does not contain "10 minutes"`)
	}

	// The JSON report agrees, and every trial's log was kept.
	f, err := os.Open(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	defer f.Close()
	rep, err := eval.ReadReport(f)
	require.NoError(t, err)
	assert.Equal(t, 4, rep.Summary.Passed)
	assert.Equal(t, 1, rep.Summary.Failed)
	for _, c := range rep.Cases {
		for _, tr := range c.Trials {
			assert.FileExists(t, tr.LogPath)
		}
	}
}

// TestScripts keeps the scripts and the dataset in step: a case with no
// script fails to run, and a script with no case is dead.
func TestScripts(t *testing.T) {
	cases, err := eval.ReadDataset(bytes.NewReader([]byte(dataset)))
	require.NoError(t, err)
	require.Len(t, cases, 5)
	ids := map[string]bool{}
	for _, c := range cases {
		ids[c.ID] = true
		assert.Contains(t, scripts, c.ID)
	}
	for id := range scripts {
		assert.True(t, ids[id], "script %q has no case", id)
	}
}
