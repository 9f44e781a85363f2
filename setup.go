package toolloop

import "errors"

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

// Validate reports the mistakes in the loop's configuration that would
// make every run fail or misbehave: no Model ([ErrNoModel]), or a guard
// that may ask (see [Asker]) with neither an Approver nor
// PauseForApproval ([ErrNoApprover]). Run and Resume call it first and
// return its error before doing anything; drivers that schedule turns
// and calls themselves (with [AgentLoop.RunCall]) should call it once
// before they start.
func (l *AgentLoop) Validate() error {
	var errs []error
	if l.Model == nil {
		errs = append(errs, ErrNoModel)
	}
	if l.Guard != nil && l.Approver == nil && !l.PauseForApproval && mayAsk(l.Guard) {
		errs = append(errs, ErrNoApprover)
	}
	return errors.Join(errs...)
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
