package session

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// dirLease is a session's lease, in its metadata file.
type dirLease struct {
	Holder  string    `json:"holder"`
	Token   int64     `json:"token"`
	Expires time.Time `json:"expires"`
}

// held reports whether the lease is held at now.
func (l *dirLease) held(now time.Time) bool { return l != nil && now.Before(l.Expires) }

// Acquire gives holder the session's lease (see [Store.Acquire]). It
// brings the metadata up to date with the records file, and cuts off a
// torn last line.
func (d *Dir) Acquire(ctx context.Context, id, holder string, ttl time.Duration) (Lease, error) {
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("%w: a lease of %v", ErrInvalid, ttl)
	}
	if err := CheckID(id); err != nil {
		return Lease{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	var l Lease
	err := d.locked(ctx, func() error {
		stem := fileStem(id)
		m, f, err := d.loadForWrite(stem, id)
		if err != nil {
			return err
		}
		f.Close()
		now := time.Now()
		if m.Lease.held(now) {
			return fmt.Errorf("%w: %q is held by %q", ErrSessionBusy, id, m.Lease.Holder)
		}
		st, err := d.readState()
		if err != nil {
			return err
		}
		token, err := d.next(st)
		if err != nil {
			return err
		}
		l = Lease{Session: id, Holder: holder, Token: token, Expires: now.Add(ttl)}
		m.Lease = &dirLease{Holder: holder, Token: token, Expires: l.Expires}
		return d.writeMeta(stem, m, true)
	})
	return l, err
}

// Renew extends a lease still held (see [Store.Renew]).
func (d *Dir) Renew(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("%w: a lease of %v", ErrInvalid, ttl)
	}
	err := d.leased(ctx, l, func(stem string, m *dirMeta, now time.Time) error {
		if !m.Lease.held(now) {
			return fmt.Errorf("%w: the lease on %q expired", ErrLeaseLost, l.Session)
		}
		l.Expires = now.Add(ttl)
		m.Lease.Expires = l.Expires
		return d.writeMeta(stem, m, true)
	})
	if err != nil {
		return Lease{}, err
	}
	return l, nil
}

// Release ends a lease (see [Store.Release]).
func (d *Dir) Release(ctx context.Context, l Lease) error {
	err := d.leased(ctx, l, func(stem string, m *dirMeta, _ time.Time) error {
		m.Lease = nil
		return d.writeMeta(stem, m, true)
	})
	if errors.Is(err, ErrLeaseLost) {
		return nil
	}
	return err
}

// leased runs fn with the folder locked if l is the session's lease,
// expired or not; otherwise it returns ErrLeaseLost.
func (d *Dir) leased(ctx context.Context, l Lease, fn func(stem string, m *dirMeta, now time.Time) error) error {
	if CheckID(l.Session) != nil {
		return fmt.Errorf("%w: no session %q", ErrLeaseLost, l.Session)
	}
	return d.locked(ctx, func() error {
		stem := fileStem(l.Session)
		m, err := d.readMeta(stem, l.Session)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) {
			return fmt.Errorf("%w: %v", ErrLeaseLost, err)
		}
		if err != nil {
			return err
		}
		if m.Lease == nil || m.Lease.Token != l.Token || m.Lease.Holder != l.Holder {
			return fmt.Errorf("%w: %q is not held with token %d", ErrLeaseLost, l.Session, l.Token)
		}
		return fn(stem, m, time.Now())
	})
}
