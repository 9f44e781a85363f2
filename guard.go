package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
)

// Decision is a guard's answer about one call.
type Decision string

// The decisions. The empty Decision means allow.
const (
	Allow Decision = "allow"
	// Modify allows the call with rewritten arguments; the model is told
	// what changed.
	Modify Decision = "modify"
	Deny   Decision = "deny"
	// Ask defers to an [Approver], or pauses the run for a human.
	Ask Decision = "ask"
)

// Verdict is what a [Guard] decides about a call.
type Verdict struct {
	Decision Decision `json:"decision"`
	// Reason explains a deny, an ask or a modify; the model sees it for
	// deny and modify, the approver for ask.
	Reason string `json:"reason,omitempty"`
	// Arguments are the rewritten arguments of a Modify verdict.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Rule names what decided, for events and audits.
	Rule string `json:"rule,omitempty"`
}

// Guard decides whether a call may run. It sees the call after its
// arguments are validated and before any pre-hook.
//
// Check may be called from several goroutines at once. A guard that panics
// denies the call. A Modify verdict's arguments are validated against the
// tool's schema again; if they do not fit, the call fails with
// invalid_args.
type Guard interface {
	Check(ctx context.Context, call *Call) Verdict
}

// GuardFunc adapts a function to the [Guard] interface.
type GuardFunc func(ctx context.Context, call *Call) Verdict

// Check calls f.
func (f GuardFunc) Check(ctx context.Context, call *Call) Verdict { return f(ctx, call) }

// Guards composes guards in order. Each sees the arguments as the one
// before it left them. A deny stops the chain at once. An ask is
// remembered while the rest still run (so a later deny wins). The result is
// deny, else ask, else modify if any guard rewrote the arguments, else
// allow; reasons of every modify are joined.
//
// The chain implements [Asker]: it may ask if any of its guards says it
// may.
func Guards(gs ...Guard) Guard { return guardChain(gs) }

type guardChain []Guard

// MayAsk implements [Asker].
func (gs guardChain) MayAsk() bool {
	for _, g := range gs {
		if mayAsk(g) {
			return true
		}
	}
	return false
}

func (gs guardChain) Check(ctx context.Context, call *Call) Verdict {
	c := *call
	var ask *Verdict
	var mod Verdict
	for _, g := range gs {
		v := g.Check(ctx, &c)
		switch v.Decision {
		case Deny:
			return v
		case Ask:
			if ask == nil {
				ask = &v
			}
			if v.Arguments != nil { // an ask that also rewrote the arguments
				c.Arguments = v.Arguments
				mod.Decision, mod.Arguments = Modify, v.Arguments
			}
		case Modify:
			c.Arguments = v.Arguments
			mod.Decision, mod.Arguments = Modify, v.Arguments
			mod.Reason = joinReason(mod.Reason, v.Reason)
			mod.Rule = joinReason(mod.Rule, v.Rule)
		}
	}
	if ask != nil {
		a := *ask
		if mod.Decision == Modify {
			a.Arguments = mod.Arguments
		}
		return a
	}
	if mod.Decision == Modify {
		return mod
	}
	return Verdict{Decision: Allow}
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// Rule is one line of a [RuleGuard]. Every condition that is set must hold
// for the rule to match; a rule with no conditions matches every call.
type Rule struct {
	// Name identifies the rule in verdicts and events.
	Name string
	// Tools are patterns over tool names in path.Match syntax ("read_*",
	// "github__*"); empty matches every name.
	Tools []string
	// Source restricts the rule to one kind of source.
	Source SourceKind
	// SourceName restricts the rule to one source (an MCP server, a plugin),
	// as a path.Match pattern.
	SourceName string
	// ReadOnly, Destructive and JudgmentRequired, when true, restrict the
	// rule to tools with that annotation.
	ReadOnly, Destructive, JudgmentRequired bool

	// Decision is the verdict when the rule matches; empty means allow,
	// or modify when Rewrite is set. A rule that says Modify without a
	// Rewrite has no arguments to give, so it denies (fail closed).
	Decision Decision
	// Reason is the verdict's reason. For a modify, the model sees it
	// with the arguments the call ran with.
	Reason string
	// Rewrite, if set, rewrites the arguments of a call the rule
	// matches: it returns the new arguments, which are validated against
	// the tool's schema again (a call they do not fit fails with
	// invalid_args). The verdict is then Modify, or, when Decision is Ask,
	// an ask about the rewritten call; a Deny rule never calls it. Nil
	// arguments leave the call as it is (the rule then allows, or asks),
	// and an error denies the call. It may be called from several
	// goroutines at once.
	Rewrite func(ctx context.Context, call *Call) (json.RawMessage, error)
}

// matches reports whether the rule applies to call. A pattern that does
// not parse is an error, so that a broken rule fails closed.
func (r *Rule) matches(call *Call) (bool, error) {
	if r.Source != "" && r.Source != call.Source {
		return false, nil
	}
	if r.SourceName != "" {
		ok, err := path.Match(r.SourceName, call.SourceName)
		if err != nil || !ok {
			return false, err
		}
	}
	a := call.Annotations
	if r.ReadOnly && !a.ReadOnly || r.Destructive && !a.Destructive || r.JudgmentRequired && !a.JudgmentRequired {
		return false, nil
	}
	if len(r.Tools) == 0 {
		return true, nil
	}
	for _, p := range r.Tools {
		ok, err := path.Match(p, call.Name)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// RuleGuard decides by the first matching rule, or by Default when none
// matches. Its zero value allows everything. It implements [Asker], so a
// loop whose rules may ask refuses to run without a way to settle asks
// (see [ErrNoApprover]).
type RuleGuard struct {
	Rules []Rule
	// Default is the decision when no rule matches; empty means allow.
	Default Decision
	// DefaultReason is the reason given with Default.
	DefaultReason string
}

// Check implements [Guard].
func (g *RuleGuard) Check(ctx context.Context, call *Call) Verdict {
	for i := range g.Rules {
		r := &g.Rules[i]
		ok, err := r.matches(call)
		if err != nil {
			return Verdict{Decision: Deny, Reason: fmt.Sprintf("guard rule %q has a bad pattern: %v", r.Name, err), Rule: r.Name}
		}
		if ok {
			return r.verdict(ctx, call)
		}
	}
	return ruleVerdict(g.Default, g.DefaultReason, "default")
}

// MayAsk implements [Asker]: it reports whether a rule or the default
// decision is Ask.
func (g *RuleGuard) MayAsk() bool {
	if g.Default == Ask {
		return true
	}
	for i := range g.Rules {
		if g.Rules[i].Decision == Ask {
			return true
		}
	}
	return false
}

// verdict is the rule's verdict on a call it matches.
func (r *Rule) verdict(ctx context.Context, call *Call) Verdict {
	if r.Rewrite == nil || r.Decision == Deny {
		return ruleVerdict(r.Decision, r.Reason, r.Name)
	}
	d := r.Decision
	if d != Ask && d != "" && d != Allow && d != Modify {
		return ruleVerdict(d, r.Reason, r.Name) // an unknown decision: the loop denies it
	}
	args, err := r.Rewrite(ctx, call)
	switch {
	case err != nil:
		return Verdict{Decision: Deny, Reason: fmt.Sprintf("guard rule %q could not rewrite the arguments: %v", r.Name, err), Rule: r.Name}
	case args == nil && d == Ask:
		return Verdict{Decision: Ask, Reason: r.Reason, Rule: r.Name}
	case args == nil:
		return Verdict{Decision: Allow, Reason: r.Reason, Rule: r.Name}
	case d == Ask:
		return Verdict{Decision: Ask, Reason: r.Reason, Rule: r.Name, Arguments: args}
	}
	return Verdict{Decision: Modify, Reason: r.Reason, Rule: r.Name, Arguments: args}
}

func ruleVerdict(d Decision, reason, rule string) Verdict {
	switch d {
	case "":
		d = Allow
	case Modify:
		return Verdict{Decision: Deny, Reason: "guard rule " + rule + " says modify but gives no arguments", Rule: rule}
	}
	return Verdict{Decision: d, Reason: reason, Rule: rule}
}

// Approval is an [Approver]'s answer, or a human's when a paused run
// resumes.
type Approval struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
	// Arguments, on an approval, are the arguments the call runs with
	// instead of those it was asked about: the person who approved it
	// edited them. The loop validates them against the tool's schema
	// again (arguments it does not accept fail the call, which does not
	// run), records the change in the result's Meta.Modified as
	// "approval: edited", and tells the model what the call ran with.
	// Nil, or arguments equal to the call's, change nothing.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Approver decides calls that a guard answered with Ask, synchronously:
// a prompt in a terminal, a chat message with buttons, a policy service.
// The loop calls it for one call at a time. An error or a panic denies the
// call.
type Approver interface {
	Approve(ctx context.Context, call *Call, reason string) (Approval, error)
}

// ApproverFunc adapts a function to the [Approver] interface.
type ApproverFunc func(ctx context.Context, call *Call, reason string) (Approval, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, call *Call, reason string) (Approval, error) {
	return f(ctx, call, reason)
}

// ErrNoApprover: the loop's guard may answer Ask, but the loop has no
// way to settle an ask: set AgentLoop.Approver to decide asks as they
// come, or AgentLoop.PauseForApproval to pause the run and Resume it
// with a human's decisions. Without either, every ask would be denied.
var ErrNoApprover = errors.New("toolloop: the guard may ask for approval, but AgentLoop has no Approver and PauseForApproval is false: set Approver, or set PauseForApproval and Resume the paused run")

// Asker is an optional ability of a [Guard]: MayAsk reports whether the
// guard can ever answer [Ask]. [AgentLoop.Validate] uses it to refuse, at
// the start of a run, a loop whose asks nothing could settle.
//
// [RuleGuard], the chain of [Guards] and [AskingGuard] implement it. A
// guard that does not, such as a plain [GuardFunc], is taken not to ask,
// since the loop cannot know what a function will answer: wrap it with
// AskingGuard when it may. If such a guard asks anyway, a loop with no
// Approver and no PauseForApproval denies the call, telling the model
// that no approver is configured, and logs a warning.
type Asker interface {
	MayAsk() bool
}

// AskingGuard returns g marked as a guard that may answer [Ask] (see
// [Asker]), for a guard that cannot say so itself, such as a
// [GuardFunc]: a loop with it and neither an Approver nor
// PauseForApproval then refuses to start with [ErrNoApprover], instead of
// denying every ask at run time.
func AskingGuard(g Guard) Guard { return askingGuard{g} }

type askingGuard struct{ Guard }

func (askingGuard) MayAsk() bool { return true }

// mayAsk reports whether g says it may answer Ask.
func mayAsk(g Guard) bool {
	a, ok := g.(Asker)
	return ok && a.MayAsk()
}

// warnNoApprover logs, once per run, that the guard answered Ask with
// nothing to settle it: a guard that does not say it may ask (see
// [Asker]) got past Validate.
func (rn *runState) warnNoApprover(tool string) {
	if rn.l.Logger == nil || !rn.warnedAsk.CompareAndSwap(false, true) {
		return
	}
	rn.l.Logger.Warn("toolloop: the guard answered Ask, but the loop has no Approver and PauseForApproval is false, so the call is denied; "+
		"a guard that may ask should implement Asker (wrap a GuardFunc with AskingGuard) so that Run refuses to start instead",
		"tool", tool)
}
