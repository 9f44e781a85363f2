package looptest

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolloop/toolloop"
)

// DiffTranscripts compares two transcripts as decoded JSON and returns a
// readable diff (-want +got), or "" if they match. It ignores what varies
// from run to run: result durations. Arguments compare by value, not by
// their bytes.
func DiffTranscripts(want, got []toolloop.Message) string {
	return cmp.Diff(Canonical(want), Canonical(got))
}

// AssertTranscript fails the test with a diff if got is not want (see
// DiffTranscripts).
func AssertTranscript(t testing.TB, want, got []toolloop.Message) bool {
	t.Helper()
	if d := DiffTranscripts(want, got); d != "" {
		t.Errorf("transcript mismatch (-want +got):\n%s", d)
		return false
	}
	return true
}

// Canonical returns v as decoded JSON with result durations and call
// timings (an event's "timing") removed, fit for comparing and for golden
// files.
func Canonical(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("looptest: encoding %T: %v", v, err))
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	scrub(out)
	return out
}

// scrub deletes volatile fields from decoded JSON, in place.
func scrub(v any) {
	switch v := v.(type) {
	case map[string]any:
		if meta, ok := v["meta"].(map[string]any); ok {
			delete(meta, "duration_ns")
		}
		if _, ok := v["timing"].(map[string]any); ok {
			delete(v, "timing")
		}
		for _, x := range v {
			scrub(x)
		}
	case []any:
		for _, x := range v {
			scrub(x)
		}
	}
}

// AssertValid fails the test unless msgs is a valid transcript: every tool
// call of every assistant message is followed by exactly one tool message
// answering it, in call order, and no tool message stands anywhere else.
func AssertValid(t testing.TB, msgs []toolloop.Message) bool {
	t.Helper()
	if err := Validate(msgs); err != nil {
		t.Errorf("invalid transcript: %v", err)
		return false
	}
	return true
}

// Validate returns why msgs is not a valid transcript (see AssertValid), or
// nil.
func Validate(msgs []toolloop.Message) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case toolloop.RoleTool:
			return fmt.Errorf("message %d: tool result %s follows no tool call", i, resultID(m))
		case toolloop.RoleAssistant:
		default:
			continue
		}
		for _, tc := range m.ToolCalls {
			i++
			switch {
			case i >= len(msgs):
				return fmt.Errorf("call %s (%s) has no result: the transcript ends", tc.ID, tc.Name)
			case msgs[i].Role != toolloop.RoleTool || msgs[i].Result == nil:
				return fmt.Errorf("message %d: want the result of call %s (%s), got a %s message", i, tc.ID, tc.Name, msgs[i].Role)
			case msgs[i].Result.CallID != tc.ID:
				return fmt.Errorf("message %d: want the result of call %s (%s), got the result of %s", i, tc.ID, tc.Name, msgs[i].Result.CallID)
			}
		}
	}
	return nil
}

func resultID(m toolloop.Message) string {
	if m.Result == nil {
		return "(none)"
	}
	return m.Result.CallID
}

// Results returns the tool results of a transcript by call ID.
func Results(msgs []toolloop.Message) map[string]*toolloop.ToolResult {
	out := map[string]*toolloop.ToolResult{}
	for _, m := range msgs {
		if m.Role == toolloop.RoleTool && m.Result != nil {
			out[m.Result.CallID] = m.Result
		}
	}
	return out
}

// Recorder collects a loop's events. Set AgentLoop.OnEvent to its Record
// method. It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []toolloop.Event
}

// Record appends e.
func (r *Recorder) Record(e toolloop.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns the events recorded so far.
func (r *Recorder) Events() []toolloop.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Types returns the types of the events recorded so far.
func (r *Recorder) Types() []toolloop.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]toolloop.EventType, len(r.events))
	for i, e := range r.events {
		out[i] = e.Type
	}
	return out
}

// Of returns the recorded events of one type.
func (r *Recorder) Of(typ toolloop.EventType) []toolloop.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []toolloop.Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// ForCall returns the recorded events of one tool call, in order.
func (r *Recorder) ForCall(callID string) []toolloop.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []toolloop.Event
	for _, e := range r.events {
		if e.CallID == callID {
			out = append(out, e)
		}
	}
	return out
}

// AssertGolden compares a transcript with the one in a golden file (see
// Load), or, when update is set, writes got to the file instead, without
// result durations, creating its directory (testdata/, say) if need be.
// Tie update to a flag of your test package, and run go test -update to
// write the file the first time and whenever the transcript changes on
// purpose:
//
//	var update = flag.Bool("update", false, "rewrite the golden files in testdata")
//	...
//	looptest.AssertGolden(t, "testdata/run.json", res.Messages, *update)
//
// A golden file that does not exist fails the test with a message that
// says how to create it.
func AssertGolden(t testing.TB, path string, got []toolloop.Message, update bool) bool {
	t.Helper()
	if update {
		b, err := json.MarshalIndent(Canonical(got), "", "  ")
		if err == nil {
			err = os.MkdirAll(filepath.Dir(path), 0o755)
		}
		if err == nil {
			err = os.WriteFile(path, append(b, '\n'), 0o644)
		}
		if err != nil {
			t.Fatalf("looptest: writing %s: %v", path, err)
			return false
		}
		return true
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("looptest: golden file %s does not exist: %s", path, howToUpdate(flag.CommandLine))
		return false
	}
	return AssertTranscript(t, Load(t, path), got)
}

// howToUpdate says how to run the test so that AssertGolden writes its
// file: with -update when the test binary has that flag (in flags), as
// the convention goes.
func howToUpdate(flags *flag.FlagSet) string {
	if f := flags.Lookup("update"); f != nil {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return "run go test -update to create it, then review it"
		}
	}
	return "call AssertGolden with update set (say, from a -update flag: go test -update) to create it, then review it"
}
