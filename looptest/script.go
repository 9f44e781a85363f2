package looptest

import (
	"context"
	"errors"
	"sync"

	"github.com/toolloop/toolloop"
)

// ErrScriptEnded is what a [Script] model returns once its replies are used
// up.
var ErrScriptEnded = errors.New("looptest: the script has no more replies")

// Script returns a model that answers with replies in order, for programs,
// examples and demos that have no testing.TB. Unlike [Model] it checks
// nothing the loop sends; after the last reply it returns ErrScriptEnded.
// Each reply is delivered as a deep copy, without re-encoding (see
// [Turn].Reply). It is safe for concurrent use.
//
// To send a reply n times, repeat it: Script(slices.Repeat(
// []*toolloop.Response{reply}, n)...). To send one forever, use [Always].
func Script(replies ...*toolloop.Response) toolloop.Model {
	return &script{replies: replies}
}

// Always returns a model that answers every call with reply, for a loop
// that must stop on its own limits: Budget.MaxTurns, a budget, a guard,
// cancellation. Like [Script] it checks nothing the loop sends, and each
// call gets a deep copy of reply, made without re-encoding. It is safe
// for concurrent use. In a test, [NewModel] with a Turn whose Times is
// [Forever] also checks the requests. It panics if reply is nil.
func Always(reply *toolloop.Response) toolloop.Model {
	if reply == nil {
		panic("looptest: Always with a nil reply")
	}
	return always{reply}
}

type always struct{ reply *toolloop.Response }

func (a always) Generate(ctx context.Context, _ *toolloop.Request) (*toolloop.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return deepCopy(a.reply), nil
}

type script struct {
	mu      sync.Mutex
	replies []*toolloop.Response
}

func (s *script) Generate(ctx context.Context, _ *toolloop.Request) (*toolloop.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) == 0 {
		return nil, ErrScriptEnded
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return deepCopy(r), nil
}
