package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/cmd/toolloop/internal/view"
	"github.com/toolloop/toolloop/eventlog"
)

// renderView writes the HTML page of a run's events (package
// internal/view). It is a variable so that tests of the subcommand's flags,
// files and serving can put a fake in its place.
var renderView = func(w io.Writer, events iter.Seq2[toolloop.Event, error], title string) error {
	return view.Render(w, events, view.Options{Title: title})
}

// errNoViewer: the command was built without the viewer.
var errNoViewer = errors.New("this build of toolloop has no viewer")

// cmdView is toolloop view.
func cmdView(ctx context.Context, e *env, args []string) error {
	var out, addr string
	fs := newFlagSet(e, "view", "LOG [-o run.html | -serve 127.0.0.1:PORT]")
	fs.StringVar(&out, "o", "", "write the page to this file (default: LOG with .html)")
	fs.StringVar(&addr, "serve", "", "serve the page at this address instead (127.0.0.1:8080), until Ctrl-C")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return usagef("give one log: toolloop view LOG")
	case out != "" && addr != "":
		return usagef("-o and -serve do not go together")
	}
	if renderView == nil {
		return errNoViewer
	}
	path := pos[0]
	// Read once to report a missing, corrupt or torn log clearly.
	if _, err := readLog(e, path); err != nil {
		return err
	}
	if addr != "" {
		return serveView(ctx, e, path, addr)
	}
	if out == "" {
		out = trimExt(path) + ".html"
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = renderFile(f, path)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
		return err
	}
	fmt.Fprintf(e.stderr, "toolloop: wrote %s\n", out)
	return nil
}

func trimExt(p string) string {
	for i := len(p) - 1; i >= 0 && p[i] != '/'; i-- {
		if p[i] == '.' {
			return p[:i]
		}
	}
	return p
}

// renderFile renders the log at path to w, reading it afresh.
func renderFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return renderView(w, eventlog.Events(f), path)
}

// serveView serves the page of the log, rendered afresh for each request
// (so a run still being written shows its progress), until ctx ends or
// Ctrl-C. Only loopback addresses are accepted: the page holds the run's
// arguments and outputs.
func serveView(ctx context.Context, e *env, path, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("-serve %s: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usagef("-serve %s: only a loopback address (127.0.0.1:PORT) is served, as the page holds the run's data", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:")
			if err := renderFile(w, path); err != nil {
				fmt.Fprintf(e.stderr, "toolloop: rendering %s: %v\n", path, err)
			}
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(e.stderr, "toolloop: serving %s at http://%s/ (Ctrl-C to stop)\n", path, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case <-e.interrupts:
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-errc
	return err
}
