package view

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"iter"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
)

// Options configures [Render]. The zero value is the documented default of
// every field.
type Options struct {
	// Title heads the page and names its tab; "" means "toolloop run"
	// followed by the first run's ID.
	Title string
	// OpenTurns is how many turns at the start and at the end of each run
	// are shown open; the turns between are collapsed until clicked, or
	// until a search or filter matches them. 0 means 3; a negative value
	// collapses every turn.
	OpenTurns int
	// FieldBytes bounds each text on the page (a call's arguments, its
	// result, an error message, a turn's text): longer ones are cut, on a
	// UTF-8 boundary, and the page marks the cut with the bytes left out.
	// 0 means 16 KiB. The log bounds results already (the loop's
	// MaxResultBytes); this bounds the page for logs whose arguments or
	// texts are large.
	FieldBytes int
	// PageBytes bounds the text of the whole page: once the fields hold
	// that much, every further one is cut to 256 bytes. 0 means 32 MiB.
	PageBytes int
	// ModelTable prices the model turns, before the built-in table (see
	// toolloop.LookupModel); a turn whose model has no price shows no
	// cost. The runs' totals are the log's own (its accounting).
	ModelTable toolloop.ModelTable
}

func (o *Options) fieldBytes() int { return orDefault(o.FieldBytes, 16<<10) }
func (o *Options) pageBytes() int  { return orDefault(o.PageBytes, 32<<20) }

func (o *Options) openTurns() int {
	switch {
	case o.OpenTurns < 0:
		return 0
	case o.OpenTurns == 0:
		return 3
	}
	return o.OpenTurns
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// ErrNoEvents: the log holds no events.
var ErrNoEvents = errors.New("view: the log holds no events")

// maxProblems bounds the lines that are not events the page lists.
const maxProblems = 20

// Render writes a self-contained HTML page of the run whose events are
// given, as [eventlog.Events] yields them from a log: a timeline of its
// turns and calls, with their durations, arguments, verdicts, hook
// effects, results, errors, file diffs and the runs of agents used as
// tools nested under their calls. The page needs no network: its style,
// script and data are inline, so it works opened from a file.
//
// A line of the log that is not an event (an [*eventlog.LineError]) is
// listed at the top of the page and skipped; any other error of the
// iteration stops Render, which returns it. A log without events gives
// [ErrNoEvents]. Everything from the log reaches the page as JSON data
// that the page's script puts in the document as text, never as markup.
func Render(w io.Writer, events iter.Seq2[toolloop.Event, error], opts Options) error {
	p, err := build(events, &opts)
	if err != nil {
		return err
	}
	return write(w, p)
}

// build reads the events into a page.
func build(events iter.Seq2[toolloop.Event, error], opts *Options) (*page, error) {
	b := newBuilder(opts)
	for e, err := range events {
		if err != nil {
			if le, ok := errors.AsType[*eventlog.LineError](err); ok {
				if len(b.p.Problems) < maxProblems {
					b.p.Problems = append(b.p.Problems, textString(b.cut(le.Error())))
				}
				continue
			}
			return nil, fmt.Errorf("view: reading the log: %w", err)
		}
		b.add(&e)
	}
	if b.p.Events == 0 {
		return nil, ErrNoEvents
	}
	p := b.finish()
	p.Title = opts.Title
	if p.Title == "" {
		p.Title = "toolloop run"
		if len(p.Runs) > 0 {
			p.Title += " " + p.Runs[0].ID
		}
	}
	return p, nil
}

var (
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
	//go:embed page.html
	pageHTML string

	pageTemplate = template.Must(template.New("page").Parse(pageHTML))
	// The page's Content-Security-Policy lets only its own style and
	// script run, by their hashes, and loads nothing: a text from the log
	// that made it into the document as markup still could not run.
	styleHash, scriptHash = cspHash(pageCSS), cspHash(pageJS)
)

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// write renders p as HTML. The data goes in a <script
// type="application/json"> element: encoding/json escapes <, > and & in
// strings (as \u003c and so on), so no text from the log can close the
// element or open a comment in it.
func write(w io.Writer, p *page) error {
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("view: encoding the page: %w", err)
	}
	return pageTemplate.Execute(w, struct {
		Title                 string
		StyleHash, ScriptHash string
		CSS                   template.CSS
		JS                    template.JS
		Data                  template.JS
	}{p.Title, styleHash, scriptHash, template.CSS(pageCSS), template.JS(pageJS), template.JS(data.Bytes())})
}
