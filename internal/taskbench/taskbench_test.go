package taskbench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/toolloop/toolloop"
)

// short is a session long enough to clear results and short enough for
// every test run.
var short = Task{Name: "12-turns", Turns: 12, Seed: 12}

// byName returns the strategy named name.
func byName(t testing.TB, name string) Strategy {
	t.Helper()
	for _, s := range Strategies {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no strategy %s", name)
	return Strategy{}
}

// eager clears every old result on every turn: the short session is too
// short for the defaults to edit its transcript (they clear past 100,000
// tokens), and the byte-stability test wants edits.
var eager = Strategy{Name: "eager", managers: func(summarizer toolloop.Model) []toolloop.ContextManager {
	return []toolloop.ContextManager{
		&toolloop.ClearToolResults{When: toolloop.Threshold{Tokens: 1}},
		&toolloop.Compactor{Model: summarizer},
	}
}}

// TestRequestsByteStable is the end-to-end proof, per provider, that
// requests are byte-stable: the same transcript and tools give the same
// request bytes. Two requests built from one state (a transcript of a
// run, tools from two registries built apart) are identical, and two
// runs of the same session, with context management, send identical
// requests all along.
func TestRequestsByteStable(t *testing.T) {
	ctx := context.Background()
	for _, p := range Providers {
		t.Run(p.Name, func(t *testing.T) {
			a, err := Run(ctx, short, p, eager, true)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Run(ctx, short, p, eager, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Requests) != len(b.Requests) {
				t.Fatalf("the runs made %d and %d requests", len(a.Requests), len(b.Requests))
			}
			if a.Edits() == 0 {
				t.Error("no context manager edited the transcript: nothing tested them")
			}
			for i := range a.Requests {
				if x, y := a.Requests[i].Body, b.Requests[i].Body; !bytes.Equal(x, y) {
					t.Errorf("request %d differs between two runs of the same session, from byte %d:\n%s", i+1, commonPrefix(x, y), around(x, commonPrefix(x, y)))
				}
			}

			// One state, two requests: the last transcript but its final
			// answer, with the specs of two registries.
			msgs := a.Messages[:len(a.Messages)-1]
			var bodies [][]byte
			for range 2 {
				srv := newServer(p, true)
				m, err := p.newModel(srv.URL, srv.Client())
				if err != nil {
					t.Fatal(err)
				}
				srv.reply((&brain{task: short}).respond(msgs))
				req := &toolloop.Request{Messages: append([]toolloop.Message(nil), msgs...), Tools: tools().Specs(ctx)}
				if _, err := m.Generate(ctx, req); err != nil {
					t.Fatal(err)
				}
				srv.Close()
				x, err := srv.exchanges()
				if err != nil || len(x) != 1 {
					t.Fatalf("the server saw %d requests (%v)", len(x), err)
				}
				bodies = append(bodies, x[0].Body)
			}
			if !bytes.Equal(bodies[0], bodies[1]) {
				at := commonPrefix(bodies[0], bodies[1])
				t.Errorf("two requests from the same state differ from byte %d:\n%s\n%s", at, around(bodies[0], at), around(bodies[1], at))
			}
		})
	}
}

// around returns the bytes of b around position at.
func around(b []byte, at int) string {
	return fmt.Sprintf("…%s…", b[max(0, at-80):min(len(b), at+80)])
}

// TestUsageReachesTheLoop checks the servers' answers: the usage the
// loop adds up from the provider's wire format is what the server
// simulated, so the costs below are what the loop would report.
func TestUsageReachesTheLoop(t *testing.T) {
	for _, p := range Providers {
		t.Run(p.Name, func(t *testing.T) {
			r, err := Run(context.Background(), short, p, byName(t, "none"), false)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := r.RunUsage, r.Usage(); got != want {
				t.Errorf("the loop counted %+v, the server answered %+v", got, want)
			}
			if r.Usage().CacheReadTokens == 0 {
				t.Error("no request read the cache")
			}
		})
	}
}

// TestSessionsAgree checks that the brain decides from the transcript
// alone: every provider and strategy takes the same turns to the same
// answer.
func TestSessionsAgree(t *testing.T) {
	task := Tasks[0]
	if raceEnabled {
		task = short
	}
	var first *Report
	for _, p := range Providers {
		for _, s := range Strategies {
			r, err := Run(context.Background(), task, p, s, false)
			if err != nil {
				t.Fatal(err)
			}
			if r.Turns != task.Turns+1 {
				t.Errorf("%s/%s: %d turns, want %d", p.Name, s.Name, r.Turns, task.Turns+1)
			}
			if first == nil {
				first = r
				continue
			}
			if r.Answer != first.Answer {
				t.Errorf("%s/%s answered %q, %s/%s %q", p.Name, s.Name, r.Answer, first.Provider.Name, first.Strategy, r.Answer)
			}
		}
	}
}

var allProviders = flag.Bool("all-providers", false, "TestTargets: run every provider, not only Chat Completions and Anthropic")

// TestTargets measures the two targets on the 300-turn session
// with the defaults: a stable prefix of at least 95% of the request
// bytes on turns without a transcript edit, and a projected cost at
// least 60% lower than with no context management.
func TestTargets(t *testing.T) {
	task := Tasks[2]
	// Two kinds of cache: implicit prefix caching (OpenAI's and Gemini's
	// work alike) and Anthropic's breakpoints; -all-providers runs all
	// four, as the benchmark does.
	providers := []*Provider{Providers[0], Providers[2]}
	if *allProviders {
		providers = Providers
	}
	// The targets, on the 300-turn session.
	minStable, minSaving := 0.95, 0.60
	if raceEnabled || testing.Short() {
		// Under the race detector the 300-turn sessions take minutes:
		// the 50-turn session, with Anthropic, held to what it gives
		// (94.4% and 20.5%: one clearing in 50 turns, and a shorter
		// transcript has less to save).
		task, providers = Tasks[0], []*Provider{Providers[2]}
		minStable, minSaving = 0.94, 0.20
	}
	var missed []string
	for _, p := range providers {
		none, err := Run(context.Background(), task, p, byName(t, "none"), false)
		if err != nil {
			t.Fatal(err)
		}
		def, err := Run(context.Background(), task, p, byName(t, "defaults"), false)
		if err != nil {
			t.Fatal(err)
		}
		unedited := len(def.Requests) - 1 - def.Edits()
		stable := def.StableShare(true)
		saving := 1 - def.Cost()/none.Cost()
		t.Logf("%s, %s: defaults: stable prefix %.1f%% of request bytes on the %d of %d requests without an edit (%.1f%% over all); cost $%.2f against $%.2f with none: %.1f%% lower; cache hits %.1f%% (none %.1f%%)",
			task.Name, p.Name, 100*stable, unedited, len(def.Requests), 100*def.StableShare(false), def.Cost(), none.Cost(), 100*saving, 100*def.CacheHitShare(), 100*none.CacheHitShare())
		if stable < minStable {
			missed = append(missed, fmt.Sprintf("%s: stable prefix %.1f%% < %.0f%% on %d requests without an edit", p.Name, 100*stable, 100*minStable, unedited))
		}
		if saving < minSaving {
			missed = append(missed, fmt.Sprintf("%s: cost %.1f%% lower, not %.0f%%", p.Name, 100*saving, 100*minSaving))
		}
	}
	if len(missed) > 0 {
		t.Errorf("targets missed: %v", missed)
	}
}
