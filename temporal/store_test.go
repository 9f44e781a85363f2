package temporal_test

import (
	"context"
	"fmt"
	"sync"
)

// memStore is a PayloadStore in memory.
type memStore struct {
	mu    sync.Mutex
	blobs map[string][]byte
	puts  int
}

func (s *memStore) Put(_ context.Context, key string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.blobs == nil {
		s.blobs = map[string][]byte{}
	}
	s.blobs[key] = append([]byte(nil), data...)
	s.puts++
	return nil
}

func (s *memStore) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[key]
	if !ok {
		return nil, fmt.Errorf("no blob %s", key)
	}
	return b, nil
}
