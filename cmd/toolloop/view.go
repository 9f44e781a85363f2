package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/toolloop/toolloop/cmd/toolloop/internal/view"
	"github.com/toolloop/toolloop/eventlog"
)

// renderView writes the HTML page of a run's events (package
// internal/view). It is a variable so that tests of the subcommand's flags,
// files and serving can put a fake in its place.
var renderView = view.Render

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
	return renderFileOpts(w, path, view.Options{Title: path})
}

func renderFileOpts(w io.Writer, path string, opts view.Options) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return renderView(w, eventlog.Events(f), opts)
}

// serveView serves the live page of the log (see live.go), following it
// as it grows, until ctx ends or Ctrl-C. Only loopback addresses are
// accepted: the page holds the run's arguments and outputs.
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
	l := startLive(e, ln, func() string { return path })
	fmt.Fprintf(e.stderr, "toolloop: serving %s at http://%s/, following it as it grows (Ctrl-C to stop)\n", path, ln.Addr())
	select {
	case <-ctx.Done():
	case <-e.interrupts:
	case err := <-l.errc:
		l.cancel()
		return err
	}
	return l.stop(0)
}
