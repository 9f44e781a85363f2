package toolloop

import (
	"sync"
	"time"
)

// watch wakes the coordinators of turns whose calls may have hung. One
// timer serves every turn in the process (outside testing/synctest
// bubbles, whose turns keep a timer of their own: see turn.wakeBy). A
// coordinator then waits for its calls on one channel and nothing else,
// where a timer of its own, Reset and Stopped around every call and added
// to the runtime's timer heap whenever the coordinator blocked on it, cost
// each call more than the rest of the hand-off.
//
// Registering a turn is an append under a mutex, and leaving a slice
// removal. The timer is armed for the earliest time a registered turn asked
// to be woken; it is not Reset when that turn leaves (most turns end long
// before their calls could hang), so it may fire with nothing due, and then
// it is armed for the next. With timeouts in minutes it fires about once a
// timeout.
var watch watchdog

type watchdog struct {
	mu    sync.Mutex
	turns []*turn     // registered; turn.widx is the position
	timer *time.Timer // runs fire
	at    time.Time   // when the timer fires; zero when it is not armed
}

// set asks that t's coordinator be woken at due: it registers t, or moves
// its time.
func (w *watchdog) set(t *turn, due time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t.due = due
	if t.widx < 0 {
		t.widx = len(w.turns)
		w.turns = append(w.turns, t)
	}
	if w.at.IsZero() || due.Before(w.at) {
		w.at = due
		if w.timer == nil {
			w.timer = time.AfterFunc(time.Until(due), w.fire)
		} else {
			w.timer.Reset(time.Until(due))
		}
	}
}

// remove unregisters t, if it is registered.
func (w *watchdog) remove(t *turn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.widx >= 0 {
		w.drop(t)
	}
}

func (w *watchdog) drop(t *turn) {
	last := len(w.turns) - 1
	moved := w.turns[last]
	w.turns[t.widx], moved.widx = moved, t.widx
	w.turns[last] = nil
	w.turns = w.turns[:last]
	t.widx = -1
}

// fire wakes every registered turn that is due, unregistering it, and arms
// the timer for the earliest of the others.
func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	var next time.Time
	for i := 0; i < len(w.turns); {
		t := w.turns[i]
		if !t.due.After(now) {
			w.drop(t) // moves the last turn to i
			t.wake()
			continue
		}
		if next.IsZero() || t.due.Before(next) {
			next = t.due
		}
		i++
	}
	w.at = next
	if !next.IsZero() {
		w.timer.Reset(time.Until(next))
	}
}
