package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
)

// turn runs one turn of the conversation (a run, or a paused run's
// resumption) with streaming output, steered from the terminal:
//
//   - a line typed while it works is sent to the run's inbox, shown as
//     queued, and delivered before the model's next request (the printer
//     shows it there); the text typed after the last line is kept in
//     s.typed for the next prompt;
//   - Esc or Ctrl-C interrupts it now: the model stops, running calls are
//     cancelled and answered, and the error is errInterrupted;
//   - Ctrl-C after that ends the process (exit 130) after flushing the log.
//
// A stored session's run is ended (its End handed the result) once the
// run's last events are printed and what was typed during it is taken.
func (s *session) turn(ctx context.Context, start starter) (*toolloop.RunResult, error) {
	if s.out == nil {
		s.out = &output{w: s.e.stdout}
	}
	in := &toolloop.Inbox{}
	tctx, cancel := context.WithCancelCause(toolloop.WithInbox(ctx, in))
	defer cancel(nil)
	interrupt := func(key, quit string) {
		fmt.Fprintf(s.e.stderr, "\n%s interrupting (now): the model stops and running calls are cancelled, each answered (%s)\n", key, quit)
		if !in.Interrupt(toolloop.Interrupt{Mode: toolloop.InterruptNow}) {
			cancel(errInterrupted) // the run is starting or ending: cancel it
		}
	}
	esc := make(chan struct{}, 1)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		n := 0
		for {
			select {
			case <-s.e.interrupts:
				n++
				if n == 1 {
					interrupt("^C", "Ctrl-C again to quit")
					continue
				}
				fmt.Fprintln(s.e.stderr, "\n^C quitting")
				s.quit()
				return
			case <-esc:
				if n == 0 {
					n++
					interrupt("Esc", "Ctrl-C to quit")
				}
			case <-stop:
				return
			}
		}
	}()
	stopKeys := func() string { return "" }
	if s.keys != nil {
		stopKeys = s.keys.start(func(line string) {
			s.out.fresh("  » queued: " + clean(s.redact(line)) + "\n")
			in.Send(toolloop.UserMessage(line))
		}, func() {
			select {
			case esc <- struct{}{}:
			default:
			}
		})
	}
	var res *toolloop.RunResult
	st, end, err := start(tctx)
	if err == nil {
		for ev := range st.Events() {
			s.print(s.red.RedactEvent(ev))
		}
		res, err = st.Result()
	}
	s.typed = stopKeys()
	// Lines sent after the run let go of the inbox, before the keys
	// stopped, are undelivered too.
	if late := in.Take(); len(late) > 0 && res != nil {
		res.Undelivered = append(res.Undelivered, late...)
	}
	close(stop)
	<-done
	if end != nil {
		res, err = end(res, err)
	}
	if err != nil && ctx.Err() == nil && (errors.Is(err, toolloop.ErrInterrupted) || errors.Is(context.Cause(tctx), errInterrupted)) {
		err = fmt.Errorf("%w: %w", errInterrupted, err)
	}
	return res, err
}

// quit ends the process at once, with exit code 130: the terminal as it
// was, the log flushed.
func (s *session) quit() {
	if s.keys != nil {
		s.keys.restore()
	}
	s.log.close()
	exitNow(exitInterrupted)
}

func (s *session) redact(text string) string {
	if s.red == nil {
		return text
	}
	out, _ := s.red.Redact(text)
	return out
}

// undelivered reports the messages typed during a run that it did not
// deliver (it was interrupted or failed first). In a conversation they go
// with the next prompt (next says so); otherwise they are listed, so that
// none is lost unseen.
func (s *session) undelivered(res *toolloop.RunResult, next bool) []toolloop.Message {
	if res == nil || len(res.Undelivered) == 0 {
		return nil
	}
	var b strings.Builder
	n := len(res.Undelivered)
	if next {
		fmt.Fprintf(&b, "toolloop: %s typed during the run %s not delivered before it ended; %s with your next prompt (Enter alone sends %s):\n",
			plural(n, "message"), pick(n, "was", "were"), pick(n, "it goes", "they go"), pick(n, "it", "them"))
	} else {
		fmt.Fprintf(&b, "toolloop: %s typed during the run %s not delivered before it ended:\n", plural(n, "message"), pick(n, "was", "were"))
	}
	for _, m := range res.Undelivered {
		fmt.Fprintf(&b, "  » %s\n", clean(s.redact(m.Text())))
	}
	fmt.Fprint(s.e.stderr, b.String())
	return res.Undelivered
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func pick(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}
