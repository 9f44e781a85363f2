package toolloop

import "time"

// Limits bounds how big and how parallel each turn of a run is: how many
// calls run and at once, how long each may take, and how much of their
// output the loop holds and the model sees. A limit here never ends a
// run (that is the [Budget]'s); it answers the calls beyond it, or cuts
// what is too big.
//
// The zero value is all defaults, given with each field; a negative value
// turns a limit off where its field says so. [Limits.WithDefaults]
// returns the limits in force.
type Limits struct {
	// MaxConcurrency bounds the calls of one turn that run at once; 0
	// means 16.
	MaxConcurrency int
	// MaxCallsPerTurn bounds the calls of one model turn: calls beyond it
	// are not run and get an error result saying so. 0 means 128; a
	// negative value means no limit. Calls of the output tool (see
	// AgentLoop.Output) do not count.
	MaxCallsPerTurn int
	// ToolTimeout bounds each call unless its spec says otherwise; 0
	// means two minutes.
	ToolTimeout time.Duration

	// MaxResultBytes is each result's byte budget; 0 means 64 KiB, and a
	// negative value turns truncation off.
	MaxResultBytes int
	// MaxOutputBytes is the pre-hook budget: the most of a tool's output
	// the loop holds. Output beyond it is cut while it is produced where
	// the source allows (shell, plugins, MCP, typed tools' text), and
	// otherwise as soon as the tool returns, so post-hooks (a redactor,
	// an envelope) see at most this much; the result is then cut to
	// MaxResultBytes for the model. 0 means 1 MiB or MaxResultBytes if
	// that is larger; a negative value turns the cut off.
	MaxOutputBytes int
	// MaxTurnResultBytes bounds the results of one turn together: each of
	// a turn's n calls is cut to MaxTurnResultBytes/n bytes, if that is
	// less than MaxResultBytes. 0 means 1 MiB (and no limit when
	// MaxResultBytes turns truncation off); a negative value means no
	// limit.
	MaxTurnResultBytes int

	// ReportInterval rate-limits what each running call reports: no two
	// progress events, and no two partial-output events, of one call come
	// closer together than the interval. A report after a quiet interval
	// is sent at once; reports that come sooner are joined into the next
	// event, sent when the interval since the last one ends (partial
	// output up to MaxPartialBytes per event, with a marker counting the
	// bytes dropped; progress keeps the latest), and Event.Coalesced
	// counts them. What is held when the call ends is sent at once,
	// before its completion event, so that nothing reported is lost: that
	// last event of each kind is the one that may come sooner. 0 means
	// 100ms; a negative value sends every report as it comes.
	ReportInterval time.Duration
	// MaxPartialBytes bounds the text of one partial-output event; 0
	// means 16 KiB.
	MaxPartialBytes int

	// Jobs bounds the run's background jobs (see ToolSpec.Background):
	// how many run at once, for how long, and how much of their output
	// is kept.
	Jobs JobLimits
}

// WithDefaults returns l with each zero field set to its default, so
// that every field holds the limit in force: a positive value, or a
// negative one for a limit turned off. MaxOutputBytes and
// MaxTurnResultBytes, whose defaults depend on MaxResultBytes, are
// resolved from it. Drivers that run turns themselves (the temporal
// package) use it to apply the loop's limits exactly as Run does.
func (l Limits) WithDefaults() Limits {
	if l.MaxConcurrency <= 0 {
		l.MaxConcurrency = 16
	}
	if l.MaxCallsPerTurn == 0 {
		l.MaxCallsPerTurn = 128
	}
	if l.ToolTimeout <= 0 {
		l.ToolTimeout = 2 * time.Minute
	}
	if l.MaxResultBytes == 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	if l.MaxOutputBytes == 0 {
		l.MaxOutputBytes = -1
		if l.MaxResultBytes > 0 {
			l.MaxOutputBytes = max(l.MaxResultBytes, 1<<20)
		}
	}
	if l.MaxTurnResultBytes == 0 {
		l.MaxTurnResultBytes = -1
		if l.MaxResultBytes > 0 {
			l.MaxTurnResultBytes = 1 << 20
		}
	}
	if l.ReportInterval == 0 {
		l.ReportInterval = 100 * time.Millisecond
	}
	if l.MaxPartialBytes <= 0 {
		l.MaxPartialBytes = 16 << 10
	}
	l.Jobs = l.Jobs.WithDefaults()
	return l
}

// resultShare is the byte budget of each result in a turn of n calls,
// under limits l (with defaults); <= 0 means none.
func (l *Limits) resultShare(n int) int {
	per, turn := l.MaxResultBytes, l.MaxTurnResultBytes
	if turn < 0 || n == 0 {
		return per
	}
	if per <= 0 || turn/n < per {
		return max(turn/n, 1)
	}
	return per
}
