package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
)

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// approvalFlags are resume's decisions about the calls a paused run waits
// on, named by call ID: -approve ID and -deny ID or -deny ID=REASON, each
// as often as needed.
type approvalFlags struct {
	approve, deny listFlag
}

func (f *approvalFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.approve, "approve", "approve the paused call with this `ID` (repeatable)")
	fs.Var(&f.deny, "deny", "deny the paused call with this `ID`; as ID=REASON, tell the model REASON (repeatable)")
}

// given reports whether any decision was given.
func (f *approvalFlags) given() bool { return len(f.approve)+len(f.deny) > 0 }

// decisions checks the flags against the calls st waits on and returns
// the decisions they make, by call ID. An ID that no call waits on, or
// one named twice, is a usage error that lists the pending calls.
func (f *approvalFlags) decisions(st *toolloop.PauseState) (map[string]toolloop.Approval, error) {
	pending := map[string]bool{}
	for _, p := range st.Pending {
		pending[p.CallID] = true
	}
	out := map[string]toolloop.Approval{}
	add := func(flagName, id string, a toolloop.Approval) error {
		_, decided := out[id]
		switch {
		case !pending[id]:
			return usagef("-%s %s: the run waits on no call with that ID; it waits on:\n%s", flagName, id, pendingList(st.Pending))
		case decided:
			return usagef("-%s %s: the call is decided twice; name each call once, with -approve or -deny", flagName, id)
		}
		out[id] = a
		return nil
	}
	for _, id := range f.approve {
		if err := add("approve", id, toolloop.Approval{Approved: true, Reason: "approved with toolloop resume -approve"}); err != nil {
			return nil, err
		}
	}
	for _, v := range f.deny {
		id, reason := v, ""
		if i := strings.IndexByte(v, '='); i >= 0 && !pending[v] {
			id, reason = v[:i], strings.TrimSpace(v[i+1:])
		}
		a := toolloop.Approval{Reason: "the user declined the call (toolloop resume -deny)"}
		if reason != "" {
			a.Reason = "the user declined the call: " + reason
		}
		if err := add("deny", id, a); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pendingList shows the calls a paused run waits on, one per line: the
// call ID to decide it by, the tool, its arguments and why it was asked
// about.
func pendingList(pending []toolloop.PendingCall) string {
	var b strings.Builder
	for _, p := range pending {
		fmt.Fprintf(&b, "  %s  %s %s (%s)\n", clean(p.CallID), clean(p.Name), clean(string(p.Arguments)), clean(orDefault(p.Reason, "the guard asks")))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// checkDecided fails, listing them, when calls of st are left to decide
// and nobody can be asked: no terminal, and no -yes.
func checkDecided(st *toolloop.PauseState, given map[string]toolloop.Approval, yes, tty bool) error {
	if yes || tty {
		return nil
	}
	var undecided []toolloop.PendingCall
	for _, p := range st.Pending {
		if _, ok := given[p.CallID]; !ok {
			undecided = append(undecided, p)
		}
	}
	if len(undecided) == 0 {
		return nil
	}
	return usagef("the run waits for %d approval(s) that no flag decides:\n%s\n"+
		"decide each with -approve ID or -deny ID[=REASON], approve the rest with -yes, or run toolloop resume at a terminal to be asked",
		len(undecided), pendingList(undecided))
}

// decide returns a decision for each call a paused run waits on: the one
// -approve or -deny gave it, else -yes's approval, else the answer of the
// person at the terminal (y or n: a paused call's arguments were decided
// when it paused, so editing is not offered). checkDecided has made sure
// that someone can be asked.
func (s *session) decide(ctx context.Context, st *toolloop.PauseState, given map[string]toolloop.Approval, yes bool) map[string]toolloop.Approval {
	decisions := map[string]toolloop.Approval{}
	term := newTerminal(s.e, s.in, s.tools.reg, yes)
	for _, p := range st.Pending {
		if a, ok := given[p.CallID]; ok {
			verb := "approved"
			if !a.Approved {
				verb = "denied"
			}
			fmt.Fprintf(s.e.stderr, "toolloop: %s %s (%s)\n", verb, clean(p.CallID), clean(p.Name))
			decisions[p.CallID] = a
			continue
		}
		a, _ := term.askOnly(ctx, p.Name, p.Arguments, p.Reason, false)
		decisions[p.CallID] = a
	}
	return decisions
}
