package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/postgres"
)

// A writer takes a session's lease, appends a turn's records in one
// round trip, and another reads them back. It needs a Postgres server, so
// it is compiled but not run.
func Example() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, os.Getenv("DATABASE_URL")) // e.g. postgres://app@db.internal/agents
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	if err := st.Create(ctx, session.Info{ID: "support-1234", User: "ana", Tenant: "acme"}); err != nil {
		log.Fatal(err)
	}
	lease, err := st.Acquire(ctx, "support-1234", "worker-7", 30*time.Second)
	if err != nil {
		log.Fatal(err) // session.ErrSessionBusy: another writer has it
	}
	defer st.Release(ctx, lease)
	err = st.Append(ctx, lease, session.Batch{
		Records: []session.Record{
			{Seq: 1, Base: true, Data: []byte(`{"type":"run_start"}`)},
			{Seq: 2, Data: []byte(`{"type":"model_response"}`)},
		},
		Spend:  session.Spend{InputTokens: 1200, OutputTokens: 80, Cost: 0.004},
		Status: session.StatusRunning,
	})
	if err != nil {
		log.Fatal(err) // session.ErrLeaseLost, session.ErrConflict: nothing was written
	}
	for r, err := range st.Records(ctx, "support-1234", 1) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Seq, string(r.Data))
	}
}
