package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"
)

// errNoServer: there is no server to use and no CLI to start one.
var errNoServer = errors.New("no Temporal server: set TEMPORAL_ADDRESS, or install the Temporal CLI " +
	"(go install github.com/temporalio/cli/cmd/temporal@v1.5.1) and put it on the PATH or in TOOLLOOP_TEMPORAL_CLI")

// server returns the address of a Temporal server: $TEMPORAL_ADDRESS, or
// a dev server it starts (headless, in memory) and that stop stops.
func server(out io.Writer) (addr string, stop func(), err error) {
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		fmt.Fprintf(out, "using the Temporal server at %s\n", addr)
		return addr, func() {}, nil
	}
	cli := os.Getenv("TOOLLOOP_TEMPORAL_CLI")
	if cli == "" {
		if cli, err = exec.LookPath("temporal"); err != nil {
			return "", nil, errNoServer
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--log-level", "error")
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quiet()})
		cancel()
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("the Temporal dev server did not start: %w", err)
		}
	}
	fmt.Fprintf(out, "started a Temporal dev server at %s (%s server start-dev)\n", addr, cli)
	return addr, stop, nil
}
