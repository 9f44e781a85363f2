package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
	sess "github.com/toolloop/toolloop/session"
)

// sessionsUsage is the usage of toolloop sessions.
const sessionsUsage = `[list] [-user U] [-tenant T] [-status S] [-since D] [-limit N] [-json]
       toolloop sessions show NAME [-json]
       toolloop sessions fork NAME AT NEW
       toolloop sessions rewind NAME AT
       toolloop sessions delete NAME`

// sessionsNotes explains toolloop sessions, for its -h.
const sessionsNotes = `The sessions are kept in an SQLite file: -sessions PATH, else $TOOLLOOP_SESSIONS,
else .toolloop/sessions.db in the workspace (-C DIR). toolloop run -session NAME
and toolloop resume -session NAME run on them.

  list      the sessions, the most recently updated first; -json: one
            JSON object per line
  show      a session's state and transcript, its messages numbered from 0
  fork      a new session NEW of NAME's first AT messages
  rewind    cut NAME back to its first AT messages (what was spent stays)
  delete    delete NAME and its records
`

// cmdSessions is toolloop sessions.
func cmdSessions(ctx context.Context, e *env, args []string) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	var sf storeFlags
	var dir string
	fs := newFlagSet(e, "sessions", sessionsUsage)
	sf.register(fs)
	fs.StringVar(&dir, "C", "", "the workspace whose .toolloop/sessions.db to use; empty: the current directory")
	withNotes(fs, sessionsNotes)
	var lf listFlags
	var asJSON bool
	switch sub {
	case "list":
		lf.register(fs)
		fs.BoolVar(&asJSON, "json", false, "print one JSON object per session, one per line")
	case "show":
		fs.BoolVar(&asJSON, "json", false, "print the session as one JSON object")
	case "fork", "rewind", "delete":
	default:
		return usagef("unknown command sessions %s: list, show, fork, rewind or delete", sub)
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	want := map[string]int{"list": 0, "show": 1, "fork": 3, "rewind": 2, "delete": 1}[sub]
	if len(pos) != want {
		return usagef("toolloop sessions %s takes %s", sub, map[string]string{
			"list": "no arguments", "show": "one: NAME", "fork": "three: NAME AT NEW", "rewind": "two: NAME AT", "delete": "one: NAME",
		}[sub])
	}
	var filter sess.Filter
	if sub == "list" {
		if filter, err = lf.filter(time.Now()); err != nil {
			return err
		}
	}
	at := 0
	if sub == "fork" || sub == "rewind" {
		if at, err = strconv.Atoi(pos[1]); err != nil || at < 0 {
			return usagef("AT %q is not a message index (a number from 0; toolloop sessions show NAME numbers the messages)", pos[1])
		}
	}
	store, err := openStore(e, sf.file(e, dir), false)
	switch {
	case errors.Is(err, errNoStore) && sub == "list":
		if !asJSON {
			fmt.Fprintln(e.stderr, "toolloop: no sessions")
		}
		return nil
	case errors.Is(err, errNoStore):
		return usagef("no session %s", pos[0])
	case err != nil:
		return err
	}
	defer store.close()
	red := redactor(e.getenv)
	switch sub {
	case "list":
		return listSessions(ctx, e.stdout, store.ss, filter, red, asJSON)
	case "show":
		return showSession(ctx, e.stdout, store.ss, pos[0], red, asJSON)
	case "fork":
		if _, err := store.ss.Fork(ctx, pos[0], at, sess.Info{ID: pos[2]}); err != nil {
			return forkErr(ctx, store.ss, pos[0], at, pos[2], err)
		}
		fmt.Fprintf(e.stdout, "forked session %s at message %d into %s\n", pos[0], at, pos[2])
	case "rewind":
		if err := store.ss.Rewind(ctx, pos[0], at); err != nil {
			return atErr(ctx, store.ss, pos[0], at, err)
		}
		fmt.Fprintf(e.stdout, "rewound session %s to its first %s\n", pos[0], plural(at, "message"))
	case "delete":
		if err := store.ss.Delete(ctx, pos[0]); err != nil {
			return sessionErr(pos[0], err)
		}
		fmt.Fprintf(e.stdout, "deleted session %s\n", pos[0])
	}
	return nil
}

// forkErr says what is wrong with a fork of id at at into name.
func forkErr(ctx context.Context, ss *sess.Sessions, id string, at int, name string, err error) error {
	switch {
	case errors.Is(err, sess.ErrExists):
		return sessionErr(name, err)
	case errors.Is(err, sess.ErrInvalid) && sess.CheckID(name) != nil:
		return usagef("%q cannot name a session: 1 to %d letters, digits and -_.:@, not starting with a dot", name, sess.MaxIDLength)
	}
	return atErr(ctx, ss, id, at, err)
}

// atErr says what is wrong with cutting session id at message at.
func atErr(ctx context.Context, ss *sess.Sessions, id string, at int, err error) error {
	if !errors.Is(err, sess.ErrInvalid) {
		return sessionErr(id, err)
	}
	st, lerr := ss.Load(ctx, id)
	if lerr != nil {
		return sessionErr(id, err)
	}
	if at > len(st.Messages) {
		return usagef("session %s has %s: AT must be 0 to %d", id, plural(len(st.Messages), "message"), len(st.Messages))
	}
	return usagef("%v (toolloop sessions show %s numbers them)", err, id)
}

// listFlags select the sessions toolloop sessions list lists.
type listFlags struct {
	user, tenant, status, since string
	limit                       int
}

func (f *listFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.user, "user", "", "only the sessions of this user")
	fs.StringVar(&f.tenant, "tenant", "", "only the sessions of this tenant")
	fs.StringVar(&f.status, "status", "", "only the sessions with this status: new, running, paused or ended")
	fs.StringVar(&f.since, "since", "", "only the sessions updated since then: a duration back from now (24h) or a time (2006-01-02 or RFC 3339)")
	fs.IntVar(&f.limit, "limit", 0, "list at most this many (0: all)")
}

// filter returns the store's filter for the flags, now being now.
func (f *listFlags) filter(now time.Time) (sess.Filter, error) {
	out := sess.Filter{User: f.user, Tenant: f.tenant, Status: sess.Status(f.status), Limit: f.limit}
	switch out.Status {
	case "", sess.StatusNew, sess.StatusRunning, sess.StatusPaused, sess.StatusEnded:
	default:
		return out, usagef("-status %s: new, running, paused or ended", f.status)
	}
	if f.limit < 0 {
		return out, usagef("-limit %d: a number from 0 (all)", f.limit)
	}
	if f.since != "" {
		if d, err := time.ParseDuration(f.since); err == nil && d >= 0 {
			out.UpdatedSince = now.Add(-d)
		} else if t, err := time.Parse(time.RFC3339, f.since); err == nil {
			out.UpdatedSince = t
		} else if t, err := time.ParseInLocation(time.DateOnly, f.since, time.Local); err == nil {
			out.UpdatedSince = t
		} else {
			return out, usagef("-since %s: a duration back from now (24h, 90m) or a time (2006-01-02, 2006-01-02T15:04:05Z)", f.since)
		}
	}
	return out, nil
}

// listSessions prints the sessions f selects: a table, or JSON lines.
func listSessions(ctx context.Context, w io.Writer, ss *sess.Sessions, f sess.Filter, red *sanitize.Redactor, asJSON bool) error {
	infos, err := ss.List(ctx, f)
	if err != nil {
		return err
	}
	for i := range infos {
		infos[i].Title, _ = red.Redact(infos[i].Title)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		for _, in := range infos {
			if err := enc.Encode(in); err != nil {
				return err
			}
		}
		return nil
	}
	if len(infos) == 0 {
		fmt.Fprintln(w, "no sessions")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tUPDATED\tSPENT\tTITLE")
	for _, in := range infos {
		title := oneLine(in.Title)
		if in.Parent != "" {
			title = strings.TrimSpace(fmt.Sprintf("%s (fork of %s at %d)", title, oneLine(in.Parent), in.ForkedAt))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", oneLine(in.ID), in.Status, in.Updated.Local().Format(time.DateTime), spent(in.Spent, false), title)
	}
	return tw.Flush()
}

// spent shows what a session spent, in a table or at length.
func spent(s sess.Spend, long bool) string {
	if s.IsZero() {
		return "-"
	}
	out := fmt.Sprintf("%d tokens", s.Tokens())
	if long {
		out += fmt.Sprintf(" (%d in, %d out)", s.InputTokens, s.OutputTokens)
	}
	if s.Cost > 0 {
		out += fmt.Sprintf(", $%.4f", s.Cost)
	}
	return out
}

// shown is toolloop sessions show -json's object.
type shown struct {
	Info     sess.Info          `json:"info"`
	Messages []toolloop.Message `json:"messages"`
	// Pending are the calls the paused run waits on, Queued the
	// messages the next run starts with.
	Pending    []toolloop.PendingCall `json:"pending,omitempty"`
	Queued     []toolloop.Message     `json:"queued,omitempty"`
	RunID      string                 `json:"run_id,omitempty"`
	StopReason toolloop.StopReason    `json:"stop_reason,omitempty"`
	Error      string                 `json:"error,omitempty"`
}

// showSession prints a session's state and transcript, redacted.
func showSession(ctx context.Context, w io.Writer, ss *sess.Sessions, id string, red *sanitize.Redactor, asJSON bool) error {
	st, err := ss.Load(ctx, id)
	if err != nil {
		return sessionErr(id, err)
	}
	v := shown{Info: st.Info, RunID: st.RunID, StopReason: st.StopReason}
	// The redactor redacts an event's messages, pending calls and text.
	ev := red.RedactEvent(toolloop.Event{Messages: st.Messages, Text: st.Error})
	v.Messages, v.Error = ev.Messages, ev.Text
	v.Queued = red.RedactEvent(toolloop.Event{Messages: st.Pending}).Messages
	if st.Paused != nil {
		v.Pending = red.RedactEvent(toolloop.Event{Pending: st.Paused.Pending}).Pending
	}
	v.Info.Title, _ = red.Redact(v.Info.Title)
	if asJSON {
		if v.Messages == nil {
			v.Messages = []toolloop.Message{}
		}
		return json.NewEncoder(w).Encode(v)
	}
	in := v.Info
	line := func(k, val string) {
		if val != "" {
			fmt.Fprintf(w, "%-9s %s\n", k, val)
		}
	}
	line("session", clean(in.ID))
	line("title", oneLine(in.Title))
	status := string(in.Status)
	if in.Status == sess.StatusEnded && v.StopReason != "" {
		status += " (" + string(v.StopReason) + ")"
	}
	line("status", status)
	if in.Status == sess.StatusEnded {
		line("error", shorten(v.Error, 200))
	}
	line("user", clean(in.User))
	line("tenant", clean(in.Tenant))
	if in.Parent != "" {
		line("parent", fmt.Sprintf("%s, forked at message %d", clean(in.Parent), in.ForkedAt))
	}
	line("created", in.Created.Local().Format(time.DateTime))
	line("updated", in.Updated.Local().Format(time.DateTime))
	line("spent", spent(in.Spent, true))
	line("messages", strconv.Itoa(len(v.Messages)))
	if len(v.Messages) > 0 {
		fmt.Fprintln(w)
	}
	for i, m := range v.Messages {
		printMessage(w, i, m)
	}
	if len(v.Pending) > 0 {
		fmt.Fprintf(w, "\nwaiting for approval (toolloop resume -session %s -approve ID -deny ID):\n%s\n", clean(in.ID), pendingList(v.Pending))
	}
	if len(v.Queued) > 0 {
		fmt.Fprintln(w, "\nqueued for the next run:")
		for _, m := range v.Queued {
			fmt.Fprintf(w, "  » %s\n", shorten(m.Text(), 200))
		}
	}
	return nil
}

// printMessage prints message i of a transcript on a line or a few:
// its role and text, each call with its arguments, a result shortened.
func printMessage(w io.Writer, i int, m toolloop.Message) {
	switch {
	case m.Result != nil:
		r := m.Result
		status := string(r.Status)
		if r.Error != nil && r.Error.Kind != "" {
			status += " (" + string(r.Error.Kind) + ")"
		}
		fmt.Fprintf(w, "%4d %-9s %s %s %s: %s\n", i, m.Role, clean(r.CallID), clean(r.Name), status, shorten(r.Text(), 160))
	default:
		text := shorten(m.Text(), 300)
		if text == "" && len(m.ToolCalls) == 0 {
			text = "(empty)"
		}
		fmt.Fprintf(w, "%4d %-9s %s\n", i, m.Role, text)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(w, "     %-9s → %s %s %s\n", "", clean(c.ID), clean(c.Name), shorten(string(c.Arguments), 160))
		}
	}
}

// shorten shows s on one line, at most n bytes of it.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
