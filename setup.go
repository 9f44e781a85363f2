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
// [RuleGuard] and the chain of [Guards] implement it. A guard that does
// not is taken not to ask; if it does ask anyway, a loop with no Approver
// and no PauseForApproval denies the call, telling the model that no
// approver is configured.
type Asker interface {
	MayAsk() bool
}

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
