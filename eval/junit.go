package eval

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML shape: one testsuite (the report) of one testcase per
// case, which CI systems (GitHub Actions reporters, GitLab, Jenkins)
// read. Its elements and attributes are those of the common JUnit
// schema.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Time       string           `xml:"time,attr"`
	Timestamp  string           `xml:"timestamp,attr,omitempty"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitText struct {
	Text string `xml:",cdata"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

// WriteJUnit writes the report as JUnit XML, so that CI systems show its
// failures: a testsuite named for the report holding a testcase per
// case. A failed case's failure says how many trials failed, and its
// text lists each failed trial's failing scorers with their reasons; a
// skipped case says why; every case's system-out gives its pass rate,
// pass@k, flakiness and the paths of its trials' event logs.
func (r *Report) WriteJUnit(w io.Writer) error {
	name := r.Name
	if name == "" {
		name = "eval"
	}
	suite := junitSuite{
		Name: name, Tests: len(r.Cases), Failures: r.Summary.Failed, Skipped: r.Summary.Skipped,
		Time: seconds(r.Duration.Seconds()),
	}
	if !r.Started.IsZero() {
		suite.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
	}
	if r.Stopped != "" {
		suite.Properties = &junitProperties{[]junitProperty{{Name: "stopped", Value: r.Stopped}}}
	}
	for i := range r.Cases {
		suite.Cases = append(suite.Cases, junitCaseOf(name, &r.Cases[i]))
	}
	doc := junitSuites{
		Name: name, Tests: suite.Tests, Failures: suite.Failures, Skipped: suite.Skipped,
		Time: suite.Time, Suites: []junitSuite{suite},
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitCaseOf(suite string, c *CaseReport) junitCase {
	var total float64
	var out, fail strings.Builder
	fmt.Fprintf(&out, "pass rate %.2f (%d passed, %d failed, %d skipped; needs %.2f)\n",
		c.PassRate, c.Passed, c.Failed, c.Skipped, c.MinPassRate)
	if len(c.PassAtK) > 0 {
		fmt.Fprintf(&out, "pass@k:")
		for k, p := range c.PassAtK {
			fmt.Fprintf(&out, " @%d=%.3f", k+1, p)
		}
		out.WriteByte('\n')
	}
	if c.Flaky {
		out.WriteString("flaky: some trials passed and some failed\n")
	}
	for _, t := range c.Trials {
		total += t.Duration.Seconds()
		fmt.Fprintf(&out, "trial %d: %s", t.Trial, t.Status)
		if t.LogPath != "" {
			fmt.Fprintf(&out, ", log %s", t.LogPath)
		}
		out.WriteByte('\n')
		if t.Status != StatusFailed {
			continue
		}
		fmt.Fprintf(&fail, "trial %d:\n", t.Trial)
		for _, s := range t.Failures() {
			fmt.Fprintf(&fail, "  %s: %s\n", s.Scorer, s.Reason)
		}
	}
	jc := junitCase{Name: c.ID, Classname: suite, Time: seconds(total), SystemOut: &junitText{out.String()}}
	switch c.Status {
	case StatusFailed:
		jc.Failure = &junitMessage{
			Message: fmt.Sprintf("%d of %d trials failed", c.Failed, c.Passed+c.Failed),
			Type:    "eval", Text: fail.String(),
		}
	case StatusSkipped:
		msg := "skipped"
		for _, t := range c.Trials {
			if t.SkipReason != "" {
				msg = t.SkipReason
				break
			}
		}
		jc.Skipped = &junitMessage{Message: msg}
	}
	return jc
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
