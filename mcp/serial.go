package mcp

import (
	"context"
	"sync"
)

// serial lets one call at a time through, in the order they came (see
// [ServerConfig].Serialize). Its zero value is ready.
type serial struct {
	mu    sync.Mutex
	busy  bool
	queue []chan struct{} // the waiting calls, first come first
}

// acquire waits for the call's turn. A call whose context ends while it
// waits gives up its place, and gets the context's error.
func (q *serial) acquire(ctx context.Context) error {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	q.queue = append(q.queue, turn)
	q.mu.Unlock()
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	for i, w := range q.queue {
		if w == turn {
			q.queue = append(q.queue[:i], q.queue[i+1:]...)
			q.mu.Unlock()
			return ctx.Err()
		}
	}
	q.mu.Unlock()
	// Its turn came as it gave up: pass it on.
	q.release()
	return ctx.Err()
}

// release ends the current call's turn, giving it to the next in line.
func (q *serial) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.busy = false
		return
	}
	next := q.queue[0]
	q.queue = q.queue[1:]
	close(next)
}
