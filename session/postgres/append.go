package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/toolloop/toolloop/session"
)

// appendSQL is the whole of an append, as one statement and so one
// implicit transaction: it locks the session's row, checks the lease (its
// token, and its expiry by the database's clock) and the head, and only
// if both hold inserts the records, moves the head, base, status, spend
// and Updated, and adds the spend to the tenant's. The last SELECT tells
// the caller which check failed, if one did.
//
// $1 id, $2 lease token, $3 the head the batch follows (-1: any, for a
// batch of no records), $4 $5 $6 the records' seqs, bases and data, $7
// the new head (0: unchanged), $8 the new base (0: unchanged), $9 the
// new status (empty: unchanged), $10 $11 $12 the spend, $13 whether there is
// spend to add to the tenant's.
const appendSQL = `WITH s AS (
	SELECT sid, tenant, head, coalesce(lease_token = $2 AND lease_expires > clock_timestamp(), false) AS leased
	FROM toolloop_sessions WHERE id = $1
	FOR UPDATE
),
ok AS (
	SELECT sid, tenant FROM s WHERE leased AND ($3::bigint < 0 OR head = $3)
),
ins AS (
	INSERT INTO toolloop_records (sid, seq, base, data)
	SELECT ok.sid, r.seq, r.base, r.data
	FROM ok, unnest($4::bigint[], $5::boolean[], $6::bytea[]) AS r (seq, base, data)
),
upd AS (
	UPDATE toolloop_sessions AS t
	SET head = CASE WHEN $7::bigint > 0 THEN $7 ELSE t.head END,
		base = CASE WHEN $8::bigint > 0 THEN $8 ELSE t.base END,
		status = coalesce(nullif($9::text, ''), t.status),
		updated = greatest(clock_timestamp(), t.updated),
		input_tokens = t.input_tokens + $10::bigint,
		output_tokens = t.output_tokens + $11::bigint,
		cost = t.cost + $12::double precision
	FROM ok WHERE t.sid = ok.sid
),
ten AS (
	INSERT INTO toolloop_tenant_spend AS ts (tenant, input_tokens, output_tokens, cost)
	SELECT tenant, $10::bigint, $11::bigint, $12::double precision FROM ok WHERE $13::boolean
	ON CONFLICT (tenant) DO UPDATE SET
		input_tokens = ts.input_tokens + excluded.input_tokens,
		output_tokens = ts.output_tokens + excluded.output_tokens,
		cost = ts.cost + excluded.cost
)
SELECT leased, head FROM s`

// Append implements [session.Store]. It checks the batch here, then sends
// one statement (appendSQL) in one network round trip: all of the batch is
// written, or with an error nothing is. The statement is prepared once
// per pooled connection, and the first Append on each connection takes a
// second round trip for that.
func (s *Store) Append(ctx context.Context, l session.Lease, b session.Batch) error {
	switch b.Status {
	case "", session.StatusNew, session.StatusRunning, session.StatusPaused, session.StatusEnded:
	default:
		return fmt.Errorf("session/postgres: append to %q: %w: unknown status %q", l.Session, session.ErrInvalid, b.Status)
	}
	n := len(b.Records)
	var (
		follows        int64 = -1
		head, base     int64
		seqs           = make([]int64, n)
		bases          = make([]bool, n)
		datas          = make([][]byte, n)
		spendForTenant = !b.Spend.IsZero()
	)
	for i, r := range b.Records {
		if i > 0 && r.Seq != b.Records[i-1].Seq+1 {
			return fmt.Errorf("session/postgres: append to %q: %w: record %d has Seq %d after %d", l.Session, session.ErrInvalid, i, r.Seq, b.Records[i-1].Seq)
		}
		seqs[i], bases[i], datas[i] = r.Seq, r.Base, r.Data
		if datas[i] == nil {
			datas[i] = []byte{} // not NULL
		}
		if r.Base {
			base = r.Seq
		}
	}
	if n > 0 {
		follows, head = b.Records[0].Seq-1, b.Records[n-1].Seq
		if follows < 0 {
			return fmt.Errorf("session/postgres: append to %q: %w: the first record's Seq %d", l.Session, session.ErrConflict, b.Records[0].Seq)
		}
	}
	var (
		leased bool
		have   int64
	)
	err := s.pool.QueryRow(ctx, appendSQL, l.Session, l.Token, follows, seqs, bases, datas, head, base, string(b.Status),
		b.Spend.InputTokens, b.Spend.OutputTokens, b.Spend.Cost, spendForTenant).Scan(&leased, &have)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("session/postgres: append to %q: %w: there is no such session", l.Session, session.ErrLeaseLost)
	case err != nil:
		return wrapErr(ctx, "append to", l.Session, err)
	case !leased:
		return fmt.Errorf("session/postgres: append to %q: %w", l.Session, session.ErrLeaseLost)
	case follows >= 0 && have != follows:
		return fmt.Errorf("session/postgres: append to %q: %w: the batch starts at Seq %d, the session's last record is %d",
			l.Session, session.ErrConflict, follows+1, have)
	}
	return nil
}
