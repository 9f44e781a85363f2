package sessiontest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/session"
)

// OpenDSN opens a Store on the backing a string names (a file path, a
// connection string), as a process of its own does.
type OpenDSN func(dsn string) (session.Store, error)

// The environment that tells a test binary it runs as a child of
// TestProcesses.
const (
	envRole   = "TOOLLOOP_SESSIONTEST_ROLE"
	envDSN    = "TOOLLOOP_SESSIONTEST_DSN"
	envID     = "TOOLLOOP_SESSIONTEST_ID"
	envMarker = "TOOLLOOP_SESSIONTEST_MARKER"
)

// childTTL is the lease of the children: short, so that a killed child's
// session is free again soon, and long enough that a child on a loaded
// machine (-race, busy cores) renews it in time.
const childTTL = 2 * time.Second

// Child runs the role of a child process of [TestProcesses] and exits,
// when the environment says this process is one; otherwise it returns at
// once. Call it first in TestMain:
//
//	func TestMain(m *testing.M) {
//		sessiontest.Child(open)
//		goleak.VerifyTestMain(m)
//	}
func Child(open OpenDSN) {
	role := os.Getenv(envRole)
	if role == "" {
		return
	}
	st, err := open(os.Getenv(envDSN))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	code := runChild(role, st)
	closeStore(st)
	os.Exit(code)
}

func runChild(role string, st session.Store) int {
	ctx := context.Background()
	id := os.Getenv(envID)
	say := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	switch role {
	case "append":
		// Append batches until killed, saying which Seq each reached.
		l, err := st.Acquire(ctx, id, "child", time.Minute)
		if err != nil {
			say("error %v", err)
			return 2
		}
		rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
		for seq := int64(1); ; {
			n := 1 + rng.IntN(8)
			b := session.Batch{Records: make([]session.Record, n), Spend: session.Spend{InputTokens: int64(n)}}
			for i := range b.Records {
				b.Records[i] = crashRecord(seq + int64(i))
			}
			if err := st.Append(ctx, l, b); err != nil {
				say("error %v", err)
				return 2
			}
			seq += int64(n)
			say("ack %d", seq-1)
		}
	case "resume", "resume-die":
		// Wait for the word, then resume the session, approving its calls.
		ss := session.New(st, session.Options{Holder: fmt.Sprint("child-", os.Getpid()), LeaseTTL: childTTL})
		say("ready")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return 2
		}
		s, err := ss.Open(ctx, id)
		if errors.Is(err, session.ErrSessionBusy) {
			say("busy")
			return 0
		}
		if err != nil {
			say("error %v", err)
			return 2
		}
		defer s.Close()
		p := s.State().Paused
		if p == nil {
			say("notpaused")
			return 0
		}
		decisions := map[string]toolloop.Approval{}
		for _, c := range p.Pending {
			decisions[c.CallID] = toolloop.Approval{Approved: true}
		}
		a := newAgent()
		a.onRun = func(text string) { mark(os.Getenv(envMarker), text, role == "resume-die") }
		if _, err := s.Resume(ctx, a.loop(true), decisions); err != nil {
			say("error %v", err)
			return 2
		}
		say("won")
		return 0
	case "pause":
		ss := session.New(st, session.Options{Holder: "pauser", LeaseTTL: childTTL})
		s, err := ss.Create(ctx, session.Info{ID: id})
		if err != nil {
			say("error %v", err)
			return 2
		}
		defer s.Close()
		if _, err := s.Run(ctx, newAgent().loop(true), toolloop.UserMessage("ask deploy")); !errors.Is(err, toolloop.ErrPaused) {
			say("error %v", err)
			return 2
		}
		say("paused")
		return 0
	}
	say("error unknown role %q", role)
	return 2
}

// closeStore closes st if it has a Close method, with or without an
// error.
func closeStore(st session.Store) {
	switch c := st.(type) {
	case io.Closer:
		_ = c.Close()
	case interface{ Close() }:
		c.Close()
	}
}

// mark records a run of the tool in the marker file, and with die, kills
// this process right after: between the tool's end and the storing of
// its completion.
func mark(path, text string, die bool) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		_, _ = fmt.Fprintln(f, text)
		_ = f.Sync()
		_ = f.Close()
	}
	if die {
		p, _ := os.FindProcess(os.Getpid())
		_ = p.Kill()
		select {}
	}
}

// crashRecord is the record the append child writes at seq: its size and
// content follow from seq, so that the parent can check it.
func crashRecord(seq int64) session.Record {
	pad := strings.Repeat(strconv.FormatInt(seq%10, 10), int(seq*7919%(64<<10)))
	return session.Record{Seq: seq, Base: seq%5 == 0, Data: fmt.Appendf(nil, `{"type":"test","n":%d,"pad":"%s"}`, seq, pad)}
}

// child is a started child process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startChild(t *testing.T, role, dsn, id, marker string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRole+"="+role, envDSN+"="+dsn, envID+"="+id, envMarker+"="+marker)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	must(t, err, "StdinPipe")
	out, err := cmd.StdoutPipe()
	must(t, err, "StdoutPipe")
	must(t, cmd.Start(), "starting a child")
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 1024)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
	return c
}

// next returns the child's next line, or "" once it has exited.
func (c *child) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-c.lines:
		return l
	case <-time.After(60 * time.Second):
		t.Fatalf("a child said nothing for a minute")
		return ""
	}
}

// TestProcesses runs the fault tests across processes against the
// backings newDSN makes: it starts this test binary again as children,
// which must call [Child] in TestMain. Set TOOLLOOP_SESSIONTEST_ROUNDS
// to run more rounds than the defaults (50 kills, 100 races).
//
//   - Kill: a child appends batches of records and says which it has
//     appended; it is killed (SIGKILL) at a random moment, 50 times.
//     Every record it said was appended is there, whole; the session
//     holds no torn record, and another writer takes it and appends.
//   - Race: two children resume the same paused session at the same
//     time, 100 times: exactly one resumes it, and its approved call runs
//     once.
//   - Elsewhere: a run paused in one process is approved in a second;
//     a third finds nothing to resume; a fourth process resumes another
//     paused session and dies between its call's end and the storing of
//     its completion, and the run that follows does not run the call
//     again.
func TestProcesses(t *testing.T, newDSN func(t *testing.T) string, open OpenDSN) {
	rounds := func(def int) int {
		if n, err := strconv.Atoi(os.Getenv("TOOLLOOP_SESSIONTEST_ROUNDS")); err == nil && n > 0 {
			return n
		}
		return def
	}
	t.Run("Kill", func(t *testing.T) { testKill(t, newDSN(t), open, rounds(50)) })
	t.Run("Race", func(t *testing.T) { testRace(t, newDSN(t), open, rounds(100)) })
	t.Run("Elsewhere", func(t *testing.T) { testElsewhere(t, newDSN(t), open) })
}

func openT(t *testing.T, open OpenDSN, dsn string) session.Store {
	t.Helper()
	st, err := open(dsn)
	must(t, err, "open")
	t.Cleanup(func() { closeStore(st) })
	return st
}

func testKill(t *testing.T, dsn string, open OpenDSN, rounds int) {
	st, ctx := openT(t, open, dsn), ctxOf(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for round := range rounds {
		id := fmt.Sprint("kill-", round)
		must(t, st.Create(ctx, session.Info{ID: id, Tenant: "kill"}), "Create")
		c := startChild(t, "append", dsn, id, "")
		// Let it append for a while, then kill it mid-append.
		acked, deadline := int64(0), time.After(time.Duration(20+rng.IntN(120))*time.Millisecond)
	wait:
		for {
			select {
			case l, ok := <-c.lines:
				if !ok {
					t.Fatalf("round %d: the child exited on its own", round)
				}
				if n, ok := strings.CutPrefix(l, "ack "); ok {
					acked, _ = strconv.ParseInt(n, 10, 64)
				} else {
					t.Fatalf("round %d: the child said %q", round, l)
				}
			case <-deadline:
				break wait
			}
		}
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		for l := range c.lines { // what it said before it died
			if n, ok := strings.CutPrefix(l, "ack "); ok {
				acked, _ = strconv.ParseInt(n, 10, 64)
			}
		}
		info, err := st.Stat(ctx, id)
		must(t, err, "Stat")
		if info.Head < acked {
			t.Fatalf("round %d: the child was told %d records were appended; the session has %d", round, acked, info.Head)
		}
		var seq, base int64
		for r, err := range st.Records(ctx, id, 1) {
			must(t, err, "Records")
			seq++
			want := crashRecord(seq)
			if r.Seq != seq || r.Base != want.Base || string(r.Data) != string(want.Data) {
				t.Fatalf("round %d: record %d is not what was appended (Seq %d, %d bytes)", round, seq, r.Seq, len(r.Data))
			}
			if r.Base {
				base = seq
			}
		}
		if seq != info.Head || base != info.Base || info.Spent.InputTokens != info.Head {
			t.Fatalf("round %d: %d records, Head %d, Base %d (want %d), spent %d: a torn session", round, seq, info.Head, info.Base, base, info.Spent.InputTokens)
		}
		if round%10 == 0 {
			// The dead child's lease is a minute long: its session can be
			// deleted once that passes; here, another session proves the
			// store still takes appends after the kill.
			must(t, st.Create(ctx, session.Info{ID: id + "-after"}), "Create after a kill")
			l, err := st.Acquire(ctx, id+"-after", "parent", ttl)
			must(t, err, "Acquire after a kill")
			must(t, st.Append(ctx, l, session.Batch{Records: []session.Record{crashRecord(1)}}), "Append after a kill")
			must(t, st.Release(ctx, l), "Release")
		}
	}
}

// pausedSession makes session id paused on a call of "ask", in this
// process.
func pausedSession(t *testing.T, st session.Store, id string) {
	t.Helper()
	ctx := ctxOf(t)
	s, err := session.New(st, session.Options{}).Create(ctx, session.Info{ID: id})
	must(t, err, "Create")
	defer s.Close()
	_, err = s.Run(ctx, newAgent().loop(true), toolloop.UserMessage("ask deploy"))
	wantErr(t, err, toolloop.ErrPaused, "a run that asks")
}

func marks(t *testing.T, path string) int {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	must(t, err, "reading the marker")
	return strings.Count(string(data), "\n")
}

func testRace(t *testing.T, dsn string, open OpenDSN, rounds int) {
	st := openT(t, open, dsn)
	dir := t.TempDir()
	for round := range rounds {
		id := fmt.Sprint("race-", round)
		pausedSession(t, st, id)
		marker := filepath.Join(dir, id)
		a, b := startChild(t, "resume", dsn, id, marker), startChild(t, "resume", dsn, id, marker)
		for _, c := range []*child{a, b} {
			if l := c.next(t); l != "ready" {
				t.Fatalf("round %d: a child said %q", round, l)
			}
		}
		_, _ = io.WriteString(a.stdin, "go\n")
		_, _ = io.WriteString(b.stdin, "go\n")
		got := []string{a.next(t), b.next(t)}
		wins := 0
		for _, g := range got {
			switch g {
			case "won":
				wins++
			case "busy", "notpaused":
			default:
				t.Fatalf("round %d: a child said %q", round, g)
			}
		}
		if wins != 1 || marks(t, marker) != 1 {
			t.Fatalf("round %d: the children said %v, and the call ran %d times: want one winner and one run", round, got, marks(t, marker))
		}
	}
}

func testElsewhere(t *testing.T, dsn string, open OpenDSN) {
	st, ctx, dir := openT(t, open, dsn), ctxOf(t), t.TempDir()
	marker := filepath.Join(dir, "marker")
	// Paused in one process...
	p := startChild(t, "pause", dsn, "e", marker)
	if l := p.next(t); l != "paused" {
		t.Fatalf("the pausing child said %q", l)
	}
	// ...approved in a second, and nothing left for a third.
	for i, want := range []string{"won", "notpaused"} {
		c := startChild(t, "resume", dsn, "e", marker)
		if l := c.next(t); l != "ready" {
			t.Fatalf("child %d said %q", i, l)
		}
		_, _ = io.WriteString(c.stdin, "go\n")
		if l := c.next(t); l != want {
			t.Fatalf("resuming child %d said %q, want %q", i, l, want)
		}
	}
	if n := marks(t, marker); n != 1 {
		t.Fatalf("the approved call ran %d times", n)
	}

	// A process dies between its call's end and storing the completion.
	pausedSession(t, st, "die")
	dieMarker := filepath.Join(dir, "die")
	c := startChild(t, "resume-die", dsn, "die", dieMarker)
	if l := c.next(t); l != "ready" {
		t.Fatalf("the child said %q", l)
	}
	_, _ = io.WriteString(c.stdin, "go\n")
	_ = c.cmd.Wait()
	if n := marks(t, dieMarker); n != 1 {
		t.Fatalf("the call ran %d times before its process died", n)
	}
	// Once its lease lapses, the session carries on without running the
	// call again.
	ss := session.New(st, session.Options{})
	var s *session.Session
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if s, err = ss.Open(ctx, "die"); err == nil {
			break
		}
		if !errors.Is(err, session.ErrSessionBusy) || time.Now().After(deadline) {
			t.Fatalf("opening the dead child's session: %v", err)
		}
	}
	defer s.Close()
	if s.State().Paused != nil {
		t.Fatalf("the session is still paused: the resumption was not stored before its call ran")
	}
	a := newAgent()
	a.onRun = func(text string) { mark(dieMarker, text, false) }
	res, err := s.Run(ctx, a.loop(true), toolloop.UserMessage("after"))
	must(t, err, "Run after the crash")
	if n := marks(t, dieMarker); n != 2 { // the call, then "after"
		t.Fatalf("the marker has %d lines, want the dead call's and the new one's", n)
	}
	if err := validate(res.Messages); err != nil {
		t.Fatalf("transcript after the crash: %v", err)
	}
}
