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
	// Live is the URL (on the page's own origin) where a server keeps the
	// page's data up to date, as toolloop view -serve does; "" makes a
	// static page, which makes no request at all. With it, the page adds
	// live.js, which asks the URL for newer data and hands it to the
	// page's update, and its policy allows requests to its own origin
	// (connect-src 'self'), and nothing else more. The protocol is a long
	// poll: a GET of the URL answers 200 with the data as [Data] writes
	// it, or 204 when the log did not change in the server's wait; either
	// names the URL to ask next in its Toolloop-Next header, and an answer
	// without one means the server follows the log no more.
	Live string
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
// script and data are inline, so it works opened from a file. A live page
// (Options.Live) asks its server for newer data, and nothing else.
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
	return write(w, p, &opts)
}

// Data writes, as JSON, the data of the page [Render] writes for the same
// events and options: what a live page (Options.Live) asks its server
// for to update itself. Its errors are Render's.
func Data(w io.Writer, events iter.Seq2[toolloop.Event, error], opts Options) error {
	p, err := build(events, &opts)
	if err != nil {
		return err
	}
	b, err := encode(p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
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
	//go:embed live.js
	liveJS string

	pageTemplate = template.Must(template.New("page").Parse(pageHTML))
	// The page's Content-Security-Policy lets only its own style and
	// script run, by their hashes, and loads nothing: a text from the log
	// that made it into the document as markup still could not run.
	styleHash, scriptHash = cspHash(pageCSS), cspHash(pageJS)
	// A live page's script is the page's, then live.js.
	liveScript     = pageJS + "\n" + liveJS
	liveScriptHash = cspHash(liveScript)
)

// Policy returns the Content-Security-Policy of the page Render writes
// with opts, which the page carries in a <meta> element; a server of the
// page sends it as its header too. It lets only the page's own style and
// script run, by their hashes, and loads nothing; a live page may also
// ask its own origin for data.
func Policy(opts Options) string {
	if opts.Live != "" {
		return "default-src 'none'; style-src " + styleHash + "; script-src " + liveScriptHash + "; connect-src 'self'"
	}
	return "default-src 'none'; style-src " + styleHash + "; script-src " + scriptHash
}

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// write renders p as HTML. The data goes in a <script
// type="application/json"> element: encoding/json escapes <, > and & in
// strings (as \u003c and so on), so no text from the log can close the
// element or open a comment in it.
func write(w io.Writer, p *page, opts *Options) error {
	data, err := encode(p)
	if err != nil {
		return err
	}
	js := pageJS
	if opts.Live != "" {
		js = liveScript
	}
	return pageTemplate.Execute(w, struct {
		Title, Policy, Live string
		CSS                 template.CSS
		JS                  template.JS
		Data                template.JS
	}{p.Title, Policy(*opts), opts.Live, template.CSS(pageCSS), template.JS(js), template.JS(data)})
}

// encode writes p as JSON on one line, without the encoder's newline.
func encode(p *page) ([]byte, error) {
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("view: encoding the page: %w", err)
	}
	return bytes.TrimSuffix(data.Bytes(), []byte("\n")), nil
}
