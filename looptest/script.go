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
// It is safe for concurrent use.
func Script(replies ...*toolloop.Response) toolloop.Model {
	return &script{replies: replies}
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
	return cloneResponse(r), nil
}
