package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/toolloop/toolloop/session"
)

// Append writes b with the lease l, all of it or nothing, in one
// transaction that is on disk when Append returns (see
// [session.Store.Append]).
func (s *Store) Append(ctx context.Context, l session.Lease, b session.Batch) error {
	if err := checkBatch(b); err != nil {
		return fmt.Errorf("sqlite: append to session %q: %w", l.Session, err)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var sid, head, token, expires int64
		var tenant string
		err := tx.QueryRowContext(ctx, `SELECT sid, tenant, head, lease_token, lease_expires FROM sessions WHERE id = ?`, l.Session).
			Scan(&sid, &tenant, &head, &token, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: the session was deleted", session.ErrLeaseLost)
		}
		if err != nil {
			return err
		}
		_, tn := now()
		switch {
		case l.Token == 0 || token != l.Token:
			return fmt.Errorf("%w: lease %d is not the session's current lease", session.ErrLeaseLost, l.Token)
		case expires <= tn:
			return fmt.Errorf("%w: lease %d expired at %s", session.ErrLeaseLost, l.Token, fromNanos(expires).Format(timeFormat))
		}
		base := int64(-1)
		if len(b.Records) > 0 {
			if first := b.Records[0].Seq; first != head+1 {
				return fmt.Errorf("%w: the batch starts at record %d, and the session's last record is %d", session.ErrConflict, first, head)
			}
			ins, err := tx.PrepareContext(ctx, `INSERT INTO records (sid, seq, base, data) VALUES (?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer ins.Close()
			for _, r := range b.Records {
				data := r.Data
				if data == nil {
					data = []byte{} // the column holds no NULLs
				}
				if _, err := ins.ExecContext(ctx, sid, r.Seq, r.Base, data); err != nil {
					return fmt.Errorf("record %d: %w", r.Seq, err)
				}
				if r.Base {
					base = r.Seq
				}
			}
			head = b.Records[len(b.Records)-1].Seq
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET
				head = ?,
				base = CASE WHEN ? >= 0 THEN ? ELSE base END,
				status = CASE WHEN ? != '' THEN ? ELSE status END,
				updated = ?,
				spent_in = spent_in + ?, spent_out = spent_out + ?, spent_cost = spent_cost + ?
			WHERE sid = ?`,
			head, base, base, string(b.Status), string(b.Status), tn,
			b.Spend.InputTokens, b.Spend.OutputTokens, b.Spend.Cost, sid); err != nil {
			return err
		}
		if !b.Spend.IsZero() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tenants (tenant, spent_in, spent_out, spent_cost) VALUES (?, ?, ?, ?)
				ON CONFLICT (tenant) DO UPDATE SET
					spent_in = spent_in + excluded.spent_in,
					spent_out = spent_out + excluded.spent_out,
					spent_cost = spent_cost + excluded.spent_cost`,
				tenant, b.Spend.InputTokens, b.Spend.OutputTokens, b.Spend.Cost); err != nil {
				return fmt.Errorf("tenant %q's spend: %w", tenant, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: append to session %q: %w", l.Session, err)
	}
	return nil
}

// checkBatch refuses, with an error wrapping session.ErrInvalid, a batch
// whose records' Seqs do not follow each other or whose Status is not one
// of the session package's.
func checkBatch(b session.Batch) error {
	for i := 1; i < len(b.Records); i++ {
		if prev, seq := b.Records[i-1].Seq, b.Records[i].Seq; seq != prev+1 {
			return fmt.Errorf("%w: record %d follows record %d in the batch", session.ErrInvalid, seq, prev)
		}
	}
	if b.Status != "" && !knownStatus(b.Status) {
		return fmt.Errorf("%w: unknown status %q", session.ErrInvalid, b.Status)
	}
	return nil
}
