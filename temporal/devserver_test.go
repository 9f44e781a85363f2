package temporal_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
)

// The integration tests need a Temporal server. They use the one at
// $TEMPORAL_ADDRESS if set; otherwise they start a dev server with the
// Temporal CLI at $TOOLLOOP_TEMPORAL_CLI, or the temporal on the PATH, and
// stop it when the tests end. With none of these they skip.
const (
	addressEnv = "TEMPORAL_ADDRESS"
	cliEnv     = "TOOLLOOP_TEMPORAL_CLI"
)

var devServer struct {
	once sync.Once
	addr string
	skip string // why there is no server
	err  error
	cmd  *exec.Cmd
	out  bytes.Buffer
}

// serverAddress returns the address of a Temporal server, starting a dev
// server the first time if need be, or skips the test.
func serverAddress(t testing.TB) string {
	t.Helper()
	devServer.once.Do(startDevServer)
	if devServer.skip != "" {
		t.Skip(devServer.skip)
	}
	if devServer.err != nil {
		t.Fatalf("temporal dev server: %v\n%s", devServer.err, devServer.out.String())
	}
	return devServer.addr
}

func startDevServer() {
	if addr := os.Getenv(addressEnv); addr != "" {
		devServer.addr = addr
		return
	}
	cli := os.Getenv(cliEnv)
	if cli == "" {
		var err error
		if cli, err = exec.LookPath("temporal"); err != nil {
			devServer.skip = "no Temporal server: set " + addressEnv + ", or " + cliEnv + " to a temporal CLI, or put temporal on the PATH"
			return
		}
	}
	port, err := freePort()
	if err != nil {
		devServer.err = err
		return
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--log-level", "error",
		// Dispatch tasks as fast as the machine allows: the history
		// service otherwise moves at most 20 tasks a second to matching
		// after a short burst, which makes every turn of a long run wait
		// ~40 ms; and hand activities to the worker that scheduled them
		// in the reply to its workflow task.
		"--dynamic-config-value", "history.transferProcessorMaxPollRPS=10000",
		"--dynamic-config-value", "history.transferProcessorMaxPollHostRPS=10000",
		"--dynamic-config-value", "system.enableActivityEagerExecution=true")
	cmd.Stdout, cmd.Stderr = &devServer.out, &devServer.out
	if err := cmd.Start(); err != nil {
		devServer.err = err
		return
	}
	devServer.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := dial(addr)
		if err == nil {
			c.Close()
			devServer.addr = addr
			return
		}
		if time.Now().After(deadline) {
			devServer.err = fmt.Errorf("not ready after 60s: %w", err)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stopDevServer stops the dev server this process started, if any.
func stopDevServer() {
	if cmd := devServer.cmd; cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dial connects a quiet client.
func dial(addr string) (client.Client, error) {
	return dialWith(addr, nil)
}

// dialWith connects a quiet client with a data converter (nil for the
// default one).
func dialWith(addr string, dc converter.DataConverter) (client.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return client.DialContext(ctx, client.Options{HostPort: addr, Logger: quietLogger(), DataConverter: dc})
}

func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))
}
