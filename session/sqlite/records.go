package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"

	"github.com/toolloop/toolloop/session"
)

// A page of Records is at most pageRows records, and stops after the
// record that brings it to pageBytes of data: what Records holds in
// memory at once, whatever the session's size.
const (
	pageRows  = 256
	pageBytes = 1 << 20
)

// Records yields the session's records with Seq at or after from, in
// order (see [session.Store.Records]). It reads them in pages, each page
// one short query: no transaction stays open while the caller handles a
// record, so a slow reader delays neither writers nor checkpoints. A
// record missing from the sequence, or a row that does not decode, yields
// an error wrapping session.ErrCorrupt.
func (s *Store) Records(ctx context.Context, id string, from int64) iter.Seq2[session.Record, error] {
	return func(yield func(session.Record, error) bool) {
		fail := func(err error) {
			yield(session.Record{}, fmt.Errorf("sqlite: records of session %q: %w", id, err))
		}
		if err := s.usable(ctx); err != nil {
			fail(err)
			return
		}
		var sid int64
		err := s.db.QueryRowContext(ctx, `SELECT sid FROM sessions WHERE id = ?`, id).Scan(&sid)
		if errors.Is(err, sql.ErrNoRows) {
			err = session.ErrNotFound
		}
		if err != nil {
			fail(err)
			return
		}
		next := max(from, 1)
		for {
			page, full, err := s.page(ctx, sid, next)
			if err != nil {
				fail(err)
				return
			}
			for _, r := range page {
				if r.Seq != next {
					fail(fmt.Errorf("%w: record %d is missing (the next one stored is %d)", session.ErrCorrupt, next, r.Seq))
					return
				}
				next++
				if !yield(r, nil) {
					return
				}
			}
			if !full {
				return
			}
		}
	}
}

// page reads the records of session sid from seq on, up to a page's
// worth; full reports whether it stopped at the page's bounds (there may
// be more).
func (s *Store) page(ctx context.Context, sid, seq int64) (page []session.Record, full bool, err error) {
	if err := s.usable(ctx); err != nil {
		return nil, false, err
	}
	s.pages.Add(1)
	rows, err := s.db.QueryContext(ctx, `SELECT seq, base, data FROM records WHERE sid = ? AND seq >= ? ORDER BY seq LIMIT ?`,
		sid, seq, pageRows)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	size := 0
	for rows.Next() {
		var r session.Record
		var base int64
		if err := rows.Scan(&r.Seq, &base, &r.Data); err != nil {
			return nil, false, fmt.Errorf("%w: record %d: %v", session.ErrCorrupt, r.Seq, err)
		}
		if base != 0 && base != 1 {
			return nil, false, fmt.Errorf("%w: record %d: base is %d, not 0 or 1", session.ErrCorrupt, r.Seq, base)
		}
		r.Base = base == 1
		if r.Data == nil {
			r.Data = []byte{}
		}
		page = append(page, r)
		if size += len(r.Data); size >= pageBytes {
			return page, true, rows.Close()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	return page, len(page) == pageRows, nil
}
