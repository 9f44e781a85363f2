package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolloop/toolloop/cmd/toolloop/internal/view"
	"github.com/toolloop/toolloop/eval"
	"github.com/toolloop/toolloop/eventlog"
)

// writeHTMLReport writes the report's page to w: each case with its
// status, rates and scorers, and each trial with its scores, linked to
// the page of its run, which it renders into dir/runs with the viewer.
// The page is html/template's (every text from the dataset, the model
// and the tools escaped), needs no script and loads nothing: its
// Content-Security-Policy allows only its own style, by hash.
func writeHTMLReport(w io.Writer, dir string, rep *eval.Report) error {
	p := htmlReport{Report: rep, StyleHash: template.HTMLAttr(reportStyleHash)}
	for i := range rep.Cases {
		c := &rep.Cases[i]
		hc := htmlCase{CaseReport: c, PassAtK: formatRates(c.PassAtK)}
		for j := range c.Trials {
			tr := &c.Trials[j]
			ht := htmlTrial{TrialReport: tr}
			if tr.LogPath != "" {
				name := fmt.Sprintf("%03d-%s-%d.html", i+1, safeName(c.ID), tr.Trial)
				if err := renderRunPage(filepath.Join(dir, "runs", name), tr.LogPath, fmt.Sprintf("%s, trial %d", c.ID, tr.Trial)); err != nil {
					ht.PageError = err.Error()
				} else {
					ht.Page = "runs/" + name
				}
			}
			hc.Trials = append(hc.Trials, ht)
		}
		p.Cases = append(p.Cases, hc)
	}
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, &p); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// renderRunPage renders the event log at logPath into the viewer's page
// at path.
func renderRunPage(path, logPath, title string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	in, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer in.Close()
	var b bytes.Buffer
	if err := view.Render(&b, eventlog.Events(in), view.Options{Title: title}); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// safeName keeps the letters, digits, - and _ of a case's ID, at most 40,
// for a file name; the case's position keeps names apart.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func formatRates(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("@%d %.2f", i+1, r)
	}
	return strings.Join(parts, ", ")
}

type htmlReport struct {
	*eval.Report
	StyleHash template.HTMLAttr
	Cases     []htmlCase
}

type htmlCase struct {
	*eval.CaseReport
	PassAtK string
	Trials  []htmlTrial
}

type htmlTrial struct {
	*eval.TrialReport
	// Page is the run's page, relative to the report; PageError why
	// there is none.
	Page      string
	PageError string
}

const reportCSS = `body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.4em;text-align:left;vertical-align:top}
.passed{color:#176f2c}.failed{color:#b00020}.skipped{color:#8a6d00}
ul{margin:0;padding-left:1.2em}code{white-space:pre-wrap;word-break:break-word}`

var (
	reportStyleHash = func() string {
		sum := sha256.Sum256([]byte(reportCSS))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}()
	reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
		"pct":  func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
		"cost": func(f float64) string { return fmt.Sprintf("$%.4f", f) },
		"add":  func(a, b int) int { return a + b },
	}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src {{.StyleHash}}; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<title>toolloop eval: {{.Name}}</title>
<style>` + reportCSS + `</style></head>
<body>
<h1>toolloop eval: {{.Name}}</h1>
<p>{{.Summary.Passed}} passed, {{.Summary.Failed}} failed, {{.Summary.Skipped}} skipped of {{.Summary.Cases}} cases{{if .Summary.Flaky}} ({{.Summary.Flaky}} flaky){{end}};
{{.Summary.TrialsPassed}} of {{.Summary.Trials}} trials passed; {{.Summary.Usage.InputTokens}} input and {{.Summary.Usage.OutputTokens}} output tokens, {{cost .Summary.Cost}}.
Started {{.Started.UTC.Format "2006-01-02 15:04:05 UTC"}}, took {{.Duration}}.</p>
{{if .Stopped}}<p class="skipped">Stopped: {{.Stopped}}</p>{{end}}
<table>
<thead><tr><th>case</th><th>status</th><th>pass rate</th><th>pass@k</th><th>scorers</th><th>trials</th></tr></thead>
<tbody>
{{range .Cases}}<tr id="case-{{.ID}}">
<td><code>{{.ID}}</code></td>
<td class="{{.Status}}">{{.Status}}{{if .Flaky}} (flaky){{end}}</td>
<td>{{pct .PassRate}} ({{.Passed}} of {{add .Passed .Failed}} run{{if .Skipped}}, {{.Skipped}} skipped{{end}}; needs {{pct .MinPassRate}})</td>
<td>{{.PassAtK}}</td>
<td><ul>{{range .Scorers}}<li><code>{{.Name}}</code>: {{.Passed}}/{{.Scored}}</li>{{end}}</ul></td>
<td><ul>{{range .Trials}}<li><span class="{{.Status}}">trial {{.Trial}}: {{.Status}}</span>
{{if .Page}}<a href="{{.Page}}">run</a>{{else if .PageError}}(no page: {{.PageError}}){{end}}
{{if .SkipReason}}<br>{{.SkipReason}}{{end}}
{{if .Error}}<br>error: <code>{{.Error}}</code>{{end}}
<ul>{{range .Scores}}<li class="{{if .Pass}}passed{{else}}failed{{end}}">{{if .Pass}}✓{{else}}✗{{end}} <code>{{.Scorer}}</code>{{if .Reason}}: {{.Reason}}{{end}}</li>{{end}}</ul>
</li>{{end}}</ul></td>
</tr>
{{end}}</tbody></table>
</body></html>
`))
)
