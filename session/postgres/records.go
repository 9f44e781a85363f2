package postgres

import (
	"context"
	"iter"

	"github.com/jackc/pgx/v5"

	"github.com/toolloop/toolloop/session"
)

// Records are read in pages, each one statement that returns at most
// pageRows records and stops after the first record that brings the
// page's data to pageBytes, so that a page holds about pageBytes however
// large the records are (and at least one record). Nothing is held
// between pages: no transaction, no connection.
const (
	pageRows  = 1000
	pageBytes = 4 << 20
)

// firstPageSQL reads the first page by the session's ID, and its sid for
// the next pages: no row if there is no session, one with a NULL seq if
// it has no records from $2. $3 is pageRows, $4 pageBytes.
const firstPageSQL = `SELECT s.sid, r.seq, r.base, r.data
FROM toolloop_sessions s
LEFT JOIN LATERAL (
	SELECT seq, base, data FROM (
		SELECT seq, base, data, sum(octet_length(data)) OVER (ORDER BY seq) - octet_length(data) AS before
		FROM toolloop_records WHERE sid = s.sid AND seq >= $2
		ORDER BY seq LIMIT $3
	) p WHERE before < $4
) r ON true
WHERE s.id = $1
ORDER BY r.seq`

// nextPageSQL reads the next pages by sid: a session deleted meanwhile
// ends the reading, and one created again under its ID is another.
const nextPageSQL = `SELECT seq, base, data FROM (
	SELECT seq, base, data, sum(octet_length(data)) OVER (ORDER BY seq) - octet_length(data) AS before
	FROM toolloop_records WHERE sid = $1 AND seq >= $2
	ORDER BY seq LIMIT $3
) p WHERE before < $4
ORDER BY seq`

// Records implements [session.Store]. It yields the records a page at a
// time (keyset pagination on Seq, see pageBytes): memory is bounded by a
// page, and no transaction or connection is held while the caller runs.
// Each page is read at its own moment, so records appended meanwhile may
// be yielded.
func (s *Store) Records(ctx context.Context, id string, from int64) iter.Seq2[session.Record, error] {
	return func(yield func(session.Record, error) bool) {
		var (
			sid  int64
			page []session.Record
			err  error
		)
		page, sid, err = s.firstPage(ctx, id, from)
		for {
			if err != nil {
				yield(session.Record{}, wrapErr(ctx, "records of", id, err))
				return
			}
			for _, r := range page {
				if !yield(r, nil) {
					return
				}
			}
			if lastPage(page) {
				return
			}
			from = page[len(page)-1].Seq + 1
			page, err = s.nextPage(ctx, sid, from)
		}
	}
}

// lastPage reports whether page ends the records: it is short of both
// pageRows and pageBytes, so neither bound cut it.
func lastPage(page []session.Record) bool {
	if len(page) >= pageRows {
		return false
	}
	n := 0
	for _, r := range page {
		n += len(r.Data)
	}
	return n < pageBytes
}

func (s *Store) firstPage(ctx context.Context, id string, from int64) ([]session.Record, int64, error) {
	rows, err := s.pool.Query(ctx, firstPageSQL, id, from, pageRows, pageBytes)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var (
		sid   int64
		found bool
		page  []session.Record
	)
	for rows.Next() {
		var (
			seq  *int64
			base *bool
			data []byte
		)
		if err := rows.Scan(&sid, &seq, &base, &data); err != nil {
			return nil, 0, err
		}
		found = true
		if seq != nil {
			page = append(page, session.Record{Seq: *seq, Base: *base, Data: data})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if !found {
		return nil, 0, pgx.ErrNoRows
	}
	return page, sid, nil
}

func (s *Store) nextPage(ctx context.Context, sid, from int64) ([]session.Record, error) {
	rows, err := s.pool.Query(ctx, nextPageSQL, sid, from, pageRows, pageBytes)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (session.Record, error) {
		var r session.Record
		err := row.Scan(&r.Seq, &r.Base, &r.Data)
		return r, err
	})
}
