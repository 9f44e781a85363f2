package sessiontest

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/toolloop/toolloop/session"
)

// Memory is a [session.Store] that keeps its sessions in memory, for
// tests of programs that use sessions (as net/http/httptest is for
// servers). It passes [TestStore]; its sessions last as long as it does,
// in one process. The zero value is not ready: use [NewMemory].
type Memory struct {
	mu       sync.Mutex
	sessions map[string]*memSession
	tenants  map[string]session.Spend
	token    int64
}

type memSession struct {
	info    session.Info
	records []session.Record
	lease   session.Lease
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{sessions: make(map[string]*memSession), tenants: make(map[string]session.Spend)}
}

var _ session.Store = (*Memory)(nil)

// Create implements [session.Store].
func (m *Memory) Create(ctx context.Context, info session.Info) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := session.CheckID(info.ID); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[info.ID]; ok {
		return fmt.Errorf("%w: %q", session.ErrExists, info.ID)
	}
	now := time.Now()
	in := session.Info{ID: info.ID, User: info.User, Tenant: info.Tenant, Title: info.Title, Labels: maps.Clone(info.Labels),
		Parent: info.Parent, ForkedAt: info.ForkedAt, Created: now, Updated: now, Status: session.StatusNew}
	m.sessions[info.ID] = &memSession{info: in}
	return nil
}

func (m *Memory) get(id string) (*memSession, error) {
	s, ok := m.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", session.ErrNotFound, id)
	}
	return s, nil
}

func (s *memSession) copyInfo() session.Info {
	in := s.info
	in.Labels = maps.Clone(in.Labels)
	return in
}

// Stat implements [session.Store].
func (m *Memory) Stat(ctx context.Context, id string) (session.Info, error) {
	if err := ctx.Err(); err != nil {
		return session.Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.get(id)
	if err != nil {
		return session.Info{}, err
	}
	return s.copyInfo(), nil
}

// List implements [session.Store].
func (m *Memory) List(ctx context.Context, f session.Filter) ([]session.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.Limit < 0 || f.Offset < 0 {
		return nil, fmt.Errorf("%w: a negative limit or offset", session.ErrInvalid)
	}
	m.mu.Lock()
	var out []session.Info
	for _, s := range m.sessions {
		in := s.info
		if f.User != "" && in.User != f.User || f.Tenant != "" && in.Tenant != f.Tenant ||
			f.Status != "" && in.Status != f.Status || !f.UpdatedSince.IsZero() && in.Updated.Before(f.UpdatedSince) {
			continue
		}
		out = append(out, s.copyInfo())
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b session.Info) int {
		return cmp.Or(b.Updated.Compare(a.Updated), cmp.Compare(a.ID, b.ID))
	})
	out = out[min(f.Offset, len(out)):]
	if f.Limit > 0 {
		out = out[:min(f.Limit, len(out))]
	}
	return out, nil
}

// Delete implements [session.Store].
func (m *Memory) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.get(id)
	if err != nil {
		return err
	}
	if s.lease.Token != 0 && time.Now().Before(s.lease.Expires) {
		return fmt.Errorf("%w: %q", session.ErrSessionBusy, id)
	}
	delete(m.sessions, id)
	return nil
}

// Acquire implements [session.Store].
func (m *Memory) Acquire(ctx context.Context, id, holder string, ttl time.Duration) (session.Lease, error) {
	if err := ctx.Err(); err != nil {
		return session.Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.get(id)
	if err != nil {
		return session.Lease{}, err
	}
	now := time.Now()
	if s.lease.Token != 0 && now.Before(s.lease.Expires) {
		return session.Lease{}, fmt.Errorf("%w: %q is held by %s", session.ErrSessionBusy, id, s.lease.Holder)
	}
	m.token++
	s.lease = session.Lease{Session: id, Holder: holder, Token: m.token, Expires: now.Add(ttl)}
	return s.lease, nil
}

// held returns l's session if l is its current, unexpired lease.
func (m *Memory) held(l session.Lease) (*memSession, error) {
	s, ok := m.sessions[l.Session]
	if !ok || s.lease.Token == 0 || s.lease.Token != l.Token || !time.Now().Before(s.lease.Expires) {
		return nil, fmt.Errorf("%w: %q", session.ErrLeaseLost, l.Session)
	}
	return s, nil
}

// Renew implements [session.Store].
func (m *Memory) Renew(ctx context.Context, l session.Lease, ttl time.Duration) (session.Lease, error) {
	if err := ctx.Err(); err != nil {
		return session.Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.held(l)
	if err != nil {
		return session.Lease{}, err
	}
	s.lease.Expires = time.Now().Add(ttl)
	return s.lease, nil
}

// Release implements [session.Store].
func (m *Memory) Release(ctx context.Context, l session.Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sessions[l.Session]; ok && s.lease.Token == l.Token {
		s.lease = session.Lease{}
	}
	return nil
}

// Append implements [session.Store].
func (m *Memory) Append(ctx context.Context, l session.Lease, b session.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i := 1; i < len(b.Records); i++ {
		if b.Records[i].Seq != b.Records[i-1].Seq+1 {
			return fmt.Errorf("%w: record %d has Seq %d after %d", session.ErrInvalid, i, b.Records[i].Seq, b.Records[i-1].Seq)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.held(l)
	if err != nil {
		return err
	}
	if len(b.Records) > 0 && b.Records[0].Seq != s.info.Head+1 {
		return fmt.Errorf("%w: session %q is at %d, the batch starts at %d", session.ErrConflict, l.Session, s.info.Head, b.Records[0].Seq)
	}
	for _, r := range b.Records {
		s.records = append(s.records, session.Record{Seq: r.Seq, Base: r.Base, Data: slices.Clone(r.Data)})
		s.info.Head = r.Seq
		if r.Base {
			s.info.Base = r.Seq
		}
	}
	if b.Status != "" {
		s.info.Status = b.Status
	}
	s.info.Spent = s.info.Spent.Add(b.Spend)
	s.info.Updated = time.Now()
	m.tenants[s.info.Tenant] = m.tenants[s.info.Tenant].Add(b.Spend)
	return nil
}

// Records implements [session.Store].
func (m *Memory) Records(ctx context.Context, id string, from int64) iter.Seq2[session.Record, error] {
	return func(yield func(session.Record, error) bool) {
		for i := 0; ; i++ {
			if err := ctx.Err(); err != nil {
				yield(session.Record{}, err)
				return
			}
			m.mu.Lock()
			s, err := m.get(id)
			var r session.Record
			ok := false
			if err == nil {
				start := max(from, 1) - 1
				if j := int(start) + i; j < len(s.records) {
					r, ok = s.records[j], true
					r.Data = slices.Clone(r.Data)
				}
			}
			m.mu.Unlock()
			if err != nil {
				yield(session.Record{}, err)
				return
			}
			if !ok || !yield(r, nil) {
				return
			}
		}
	}
}

// TenantSpend implements [session.Store].
func (m *Memory) TenantSpend(ctx context.Context, tenant string) (session.Spend, error) {
	if err := ctx.Err(); err != nil {
		return session.Spend{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tenants[tenant], nil
}
