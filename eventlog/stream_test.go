package eventlog_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eventlog"
	"github.com/toolloop/toolloop/internal/secretcorpus"
	"github.com/toolloop/toolloop/sanitize"
)

// streamDoc is a document of the secrets corpus, filled in.
type streamDoc struct {
	format  string
	text    string
	secrets []secretcorpus.Secret
}

func streamDocs(t testing.TB, seed uint64) []streamDoc {
	t.Helper()
	cases, err := secretcorpus.Load(filepath.Join("..", "sanitize", "testdata", "redact", "secrets.txt"))
	require.NoError(t, err)
	docs := make([]streamDoc, 0, len(cases))
	for _, c := range cases {
		text, secrets, err := c.Generate(seed)
		require.NoError(t, err)
		docs = append(docs, streamDoc{c.Format, text, secrets})
	}
	return docs
}

// streamKinds are the kinds of stream: a model turn's text deltas,
// ended by its response, a call's partial output, ended by its
// completion, and a background job's output, ended by job.finished. Each stream of a test has a run of its own.
var streamKinds = []struct {
	name  string
	typ   toolloop.EventType
	piece func(run, text string) toolloop.Event
	end   func(run string) toolloop.Event
}{
	{"model.delta", toolloop.EventModelDelta,
		func(run, text string) toolloop.Event {
			return toolloop.Event{Type: toolloop.EventModelDelta, RunID: run, Turn: 2, Text: text}
		},
		func(run string) toolloop.Event {
			return toolloop.Event{Type: toolloop.EventModelResponse, RunID: run, Turn: 2, Response: &toolloop.Response{
				Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("(the answer)")}}}}
		}},
	{"tool.execution_partial_result", toolloop.EventPartialResult,
		func(run, text string) toolloop.Event {
			return toolloop.Event{Type: toolloop.EventPartialResult, RunID: run, Turn: 2, CallID: "call_1", Tool: "sh", Text: text}
		},
		func(run string) toolloop.Event {
			return toolloop.Event{Type: toolloop.EventComplete, RunID: run, Turn: 2, CallID: "call_1", Tool: "sh",
				Result: toolloop.TextResult("(the result)")}
		}},
	{"job.output", toolloop.EventJobOutput,
		func(run, text string) toolloop.Event {
			return toolloop.Event{Type: toolloop.EventJobOutput, RunID: run, Turn: 2, CallID: "call_1", Tool: "sh", Text: text}
		},
		func(run string) toolloop.Event {
			return toolloop.Event{Type: toolloop.EventJobFinished, RunID: run, Turn: 2, CallID: "call_1", Tool: "sh",
				Job: &toolloop.Job{ID: "job_1", CallID: "call_1", Tool: "sh", Status: toolloop.JobOK}}
		}},
}

// streamed is what a log holds of one run's stream: the text of its
// pieces joined, how many events carry it, and whether the event that
// ended the stream came after all of them.
type streamed struct {
	text       strings.Builder
	events     int
	endedAfter bool
}

// logged decodes a log and returns, by run, what it holds of the stream
// of type typ.
func logged(t testing.TB, log []byte, typ toolloop.EventType) map[string]*streamed {
	t.Helper()
	runs := make(map[string]*streamed)
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e toolloop.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "%s", sc.Bytes())
		st := runs[e.RunID]
		if st == nil {
			st = new(streamed)
			runs[e.RunID] = st
		}
		if e.Type == typ {
			st.text.WriteString(e.Text)
			st.events++
			st.endedAfter = false
		} else {
			st.endedAfter = true
		}
	}
	require.NoError(t, sc.Err())
	return runs
}

// filler is ordinary text, long enough that the Writer writes some of a
// stream before the document that follows it arrives.
var filler = strings.Repeat("INFO step 42 of the build finished in 1.3s; 7 packages cached\n", 84)

// TestRedactStreamSplit streams each document of the secrets corpus after
// ordinary text, as model deltas or as a call's partial output, split
// into two chunks at every byte offset, and into three at every offset
// with a middle chunk of 1 byte and of 13: no piece of any secret reaches
// the log, neither in one event nor across the events of the stream, and
// the stream's text in the log is the whole text redacted (under the race
// detector, every eleventh offset). The Writer
// holds back 256 bytes here, not 4 KiB, and tries to write every 32
// bytes, so that it cuts the documents in many places: with 4 KiB it
// would hold each of them whole.
func TestRedactStreamSplit(t *testing.T) {
	var r sanitize.Redactor
	docs := streamDocs(t, 1)
	require.GreaterOrEqual(t, len(docs), 141)
	filler := filler[:5*62]
	streams, leaked, differ := 0, 0, 0
	for n, d := range docs {
		kind := streamKinds[n%len(streamKinds)]
		want := r.RedactEvent(kind.piece("", filler+d.text)).Text
		require.Empty(t, secretcorpus.Leaks(want, d.secrets), "%s: the Redactor finds every secret in the whole text", d.format)

		var buf bytes.Buffer
		w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
		eventlog.SetHold(w, 256, 32, 64<<10, 1<<20)
		splits := make(map[string][]int)
		split := func(cuts ...int) {
			run := fmt.Sprint("run_", len(splits))
			splits[run] = cuts
			last := 0
			for k, c := range append(cuts, len(d.text)) {
				text := d.text[last:c]
				if k == 0 {
					text = filler + text
				}
				w.Record(kind.piece(run, text))
				last = c
			}
			w.Record(kind.end(run))
		}
		step := 1
		if raceEnabled {
			step = 11 // a sample: the whole sweep takes over a minute
		}
		for i := n % step; i <= len(d.text); i += step {
			split(i)
			for _, m := range []int{1, 13} {
				if i+m < len(d.text) {
					split(i, i+m)
				}
			}
		}
		require.NoError(t, w.Close())
		log := buf.String()
		if leaks := secretcorpus.Leaks(log, d.secrets); len(leaks) > 0 {
			t.Errorf("%s, %s: %s survived in an event", d.format, kind.name, strings.Join(leaks, ", "))
		}
		got := logged(t, buf.Bytes(), kind.typ)
		for run, cuts := range splits {
			streams++
			st := got[run]
			require.NotNil(t, st, run)
			text := st.text.String()
			leaks := secretcorpus.Leaks(text, d.secrets)
			if len(leaks) > 0 {
				leaked++
			}
			if len(leaks) > 0 || kindless(text) != kindless(want) {
				differ++
				if differ <= 10 {
					t.Errorf("%s, %s, cut at %v: %s survived across %d events, or the text differs:\n%q\nwant\n%q",
						d.format, kind.name, cuts, strings.Join(leaks, ", "), st.events, text, want)
				}
			}
			if !st.endedAfter {
				t.Errorf("%s, %s, cut at %v: the stream is not all written before the event that ends it", d.format, kind.name, cuts)
			}
		}
	}
	t.Logf("%d documents, %d streams: %d with a secret in clear, %d others whose text is not the whole text redacted",
		len(docs), streams, leaked, differ-leaked)
	assert.Zero(t, differ)
}

// leaksIn is secretcorpus.Leaks for a long text and many secrets: it
// looks the pieces of the secrets up in a set of the text's pieces, where
// Leaks searches the text for each.
func leaksIn(text string, secrets []secretcorpus.Secret) []string {
	const n = secretcorpus.Window
	pieces := make(map[string]bool, len(text))
	for i := 0; i+n <= len(text); i++ {
		pieces[text[i:i+n]] = true
	}
	var found []string
	for _, s := range secrets {
		for _, run := range s.Runs {
			if len(run) < n {
				found = append(found, secretcorpus.Leaks(text, []secretcorpus.Secret{{Value: s.Value, Runs: []string{run}}})...)
				continue
			}
			for i := 0; i+n <= len(run); i++ {
				if pieces[run[i:i+n]] {
					found = append(found, fmt.Sprintf("%q of %q", run[i:i+n], s.Value))
					break
				}
			}
		}
	}
	return found
}

// kindless is text with the kinds of its redactions left out: the same
// secret can be named differently when the text around it differs (the
// rest of a stream that is a JSON document is redacted as one).
func kindless(text string) string {
	return redactedKind.ReplaceAllString(text, "[REDACTED]")
}

var redactedKind = regexp.MustCompile(`\[REDACTED:\w+\]`)

// TestRedactStreamLong streams the whole secrets corpus as one stream, in
// chunks of random sizes, small as a model's deltas and large as a tool's
// output, with the Writer's own bounds: it writes the stream as it comes,
// holding no more than 64 KiB, cutting it in many places, and no piece of
// any secret reaches the log.
func TestRedactStreamLong(t *testing.T) {
	var r sanitize.Redactor
	var docs []streamDoc
	for seed := range uint64(3) {
		docs = append(docs, streamDocs(t, 2+seed)...)
	}
	var whole strings.Builder
	var secrets []secretcorpus.Secret
	for _, d := range docs {
		whole.WriteString(d.text)
		whole.WriteString("\n")
		secrets = append(secrets, d.secrets...)
	}
	text := whole.String()
	require.Greater(t, len(text), 64<<10)
	for _, maxChunk := range []int{8, 64, 700, 5000} {
		for _, kind := range streamKinds {
			t.Run(fmt.Sprintf("%s/chunks up to %d bytes", kind.name, maxChunk), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(maxChunk), 1))
				var buf bytes.Buffer
				w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
				pieces := 0
				for rest := text; rest != ""; pieces++ {
					n := min(len(rest), 1+rng.IntN(maxChunk))
					w.Record(kind.piece("run_1", rest[:n]))
					rest = rest[n:]
					most, _ := eventlog.Held(w)
					require.LessOrEqual(t, most, 64<<10)
				}
				_, held := eventlog.Held(w)
				assert.Less(t, held, len(text)/2, "the stream is written as it comes, not all at its end")
				w.Record(kind.end("run_1"))
				require.NoError(t, w.Close())
				assert.Empty(t, leaksIn(buf.String(), secrets))
				st := logged(t, buf.Bytes(), kind.typ)["run_1"]
				assert.Empty(t, leaksIn(st.text.String(), secrets))
				assert.Less(t, st.events, pieces+1, "pieces are joined")
				assert.True(t, st.endedAfter)
			})
		}
	}
}

// TestRedactStreamEnds checks when held text is written: a stream's tail
// before the durable event that ends it, and only it; every stream's on
// Sync and Close; none on Flush. Without Options.Redact nothing is held.
func TestRedactStreamEnds(t *testing.T) {
	var r sanitize.Redactor
	delta := func(run string, turn int, text string) toolloop.Event {
		return toolloop.Event{Type: toolloop.EventModelDelta, RunID: run, Turn: turn, Text: text}
	}
	partial := func(run, call, text string) toolloop.Event {
		return toolloop.Event{Type: toolloop.EventPartialResult, RunID: run, CallID: call, Text: text}
	}
	complete := func(run, call string) toolloop.Event {
		return toolloop.Event{Type: toolloop.EventComplete, RunID: run, CallID: call, Result: toolloop.TextResult("ok")}
	}
	types := func(buf *bytes.Buffer) []string {
		var out []string
		for line := range strings.Lines(buf.String()) {
			var e toolloop.Event
			require.NoError(t, json.Unmarshal([]byte(line), &e))
			s := string(e.Type) + " " + e.RunID
			if e.CallID != "" {
				s += " " + e.CallID
			}
			if e.Text != "" {
				s += " " + e.Text
			}
			out = append(out, s)
		}
		return out
	}

	t.Run("durable events end their streams", func(t *testing.T) {
		var buf bytes.Buffer
		w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
		w.Record(delta("a", 1, "hel"))
		w.Record(delta("a", 1, "lo"))
		w.Record(partial("a", "c1", "out1 "))
		w.Record(partial("a", "c2", "out2 "))
		w.Record(delta("b", 1, "other run"))
		w.Record(complete("a", "c1")) // ends c1's output only
		w.Record(toolloop.Event{Type: toolloop.EventModelResponse, RunID: "a", Turn: 1,
			Response: &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent("hello")}}}}) // ends a's deltas
		w.Record(toolloop.Event{Type: toolloop.EventRunEnd, RunID: "a"}) // ends c2's output
		require.NoError(t, w.Flush())
		assert.Equal(t, []string{
			"tool.execution_partial_result a c1 out1 ",
			"tool.execution_complete a c1",
			"model.delta a hello",
			"model.response a",
			"tool.execution_partial_result a c2 out2 ",
			"run.end a",
		}, types(&buf), "run b's delta is still held")
		require.NoError(t, w.Close())
		assert.Equal(t, "model.delta b other run", types(&buf)[6])
	})

	t.Run("Sync and Close write what is held, Flush does not", func(t *testing.T) {
		var buf bytes.Buffer
		w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
		w.Record(delta("a", 1, "token ghp_"))
		require.NoError(t, w.Flush())
		assert.Empty(t, buf.String())
		w.Record(delta("a", 1, strings.Repeat("a1B2c3", 6)))
		require.NoError(t, w.Sync())
		assert.Equal(t, []string{"model.delta a token [REDACTED:github_token]"}, types(&buf))
		w.Record(delta("a", 1, " and more"))
		require.NoError(t, w.Close())
		assert.Equal(t, "model.delta a  and more", types(&buf)[1])
		w.Record(delta("a", 1, "after Close"))
		assert.NotContains(t, buf.String(), "after Close")
	})

	t.Run("pieces joined count in Coalesced", func(t *testing.T) {
		var buf bytes.Buffer
		w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
		w.Record(partial("a", "c1", "one "))
		p := partial("a", "c1", "two ")
		p.Coalesced = 3
		w.Record(p)
		w.Record(complete("a", "c1"))
		require.NoError(t, w.Close())
		var e toolloop.Event
		require.NoError(t, json.Unmarshal([]byte(strings.SplitN(buf.String(), "\n", 2)[0]), &e))
		assert.Equal(t, "one two ", e.Text)
		assert.Equal(t, 4, e.Coalesced)
	})

	t.Run("without Redact nothing is held", func(t *testing.T) {
		var buf bytes.Buffer
		w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true})
		w.Record(delta("a", 1, "hel"))
		w.Record(delta("a", 1, "lo"))
		require.NoError(t, w.Flush())
		assert.Equal(t, []string{"model.delta a hel", "model.delta a lo"}, types(&buf))
		require.NoError(t, w.Close())
	})
}

// TestRedactStreamBounds checks what the Writer holds: a stream whose
// private key never ends is held up to 64 KiB, then written, redacted, but
// its last 4 KiB (what follows has lost the key's BEGIN line: a key
// longer than 64 KiB is beyond the bound, as it is beyond the Redactor's);
// a thousand streams hold 1 MiB at most in all.
func TestRedactStreamBounds(t *testing.T) {
	var r sanitize.Redactor
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
	line := "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Adx1rBDaNdg4kS8YAJ4FBHhwMzBf\n"
	w.Record(toolloop.Event{Type: toolloop.EventModelDelta, RunID: "a", Text: "-----BEGIN RSA " + "PRIVATE KEY-----\n"})
	mostSeen := 0
	for range 4000 { // 260 KB
		w.Record(toolloop.Event{Type: toolloop.EventModelDelta, RunID: "a", Text: line})
		most, _ := eventlog.Held(w)
		require.LessOrEqual(t, most, 64<<10)
		mostSeen = max(mostSeen, most)
	}
	assert.Greater(t, mostSeen, 60<<10, "the key is held while it may end")
	first, _, _ := strings.Cut(buf.String(), "\n")
	assert.Contains(t, first, `"text":"[REDACTED:private_key]"`, "the key's first 60 KiB are redacted whole")

	w.Record(toolloop.Event{Type: toolloop.EventPartialResult, RunID: "b", CallID: "huge", Text: strings.Repeat("y ", 1<<20)})
	most, _ := eventlog.Held(w)
	require.LessOrEqual(t, most, 64<<10, "a piece of 2 MiB is written but its tail at once")

	for i := range 1000 {
		w.Record(toolloop.Event{Type: toolloop.EventPartialResult, RunID: "b", CallID: fmt.Sprint("call_", i),
			Text: strings.Repeat("x", 4<<10)})
		_, total := eventlog.Held(w)
		require.LessOrEqual(t, total, 1<<20)
	}
	require.NoError(t, w.Close())
}

// TestRedactStreamConcurrent streams a document with secrets in each of
// eight runs at once through one Writer, in small chunks: each run's
// stream is whole and redacted in the log.
func TestRedactStreamConcurrent(t *testing.T) {
	var r sanitize.Redactor
	docs := streamDocs(t, 3)
	var buf bytes.Buffer
	w := eventlog.NewWriter(&buf, eventlog.Options{NoSync: true, Redact: r.RedactEvent})
	eventlog.SetHold(w, 256, 32, 64<<10, 1<<20)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			kind := streamKinds[g%2]
			run := fmt.Sprint("run_", g)
			for _, d := range docs[g*10 : g*10+10] {
				text := filler[:5*62] + d.text
				for len(text) > 0 {
					n := min(len(text), 1+(len(text)*7+g)%23)
					w.Record(kind.piece(run, text[:n]))
					text = text[n:]
				}
			}
			w.Record(kind.end(run))
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	var all []secretcorpus.Secret
	for g := range 8 {
		var secrets []secretcorpus.Secret
		for _, d := range docs[g*10 : g*10+10] {
			secrets = append(secrets, d.secrets...)
		}
		all = append(all, secrets...)
		st := logged(t, buf.Bytes(), streamKinds[g%2].typ)[fmt.Sprint("run_", g)]
		require.NotNil(t, st)
		assert.Empty(t, secretcorpus.Leaks(st.text.String(), secrets), "run %d", g)
		assert.True(t, st.endedAfter, "run %d", g)
	}
	assert.Empty(t, leaksIn(buf.String(), all))
}
