package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sqlite"
)

func Example() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st, err := sqlite.Open(filepath.Join(dir, "sessions.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()

	if err := st.Create(ctx, session.Info{ID: "chat-1", User: "ana", Tenant: "acme", Title: "Release notes"}); err != nil {
		log.Fatal(err)
	}
	// A writer holds the session's lease while it appends.
	l, err := st.Acquire(ctx, "chat-1", "worker-1", time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	err = st.Append(ctx, l, session.Batch{
		Records: []session.Record{
			{Seq: 1, Base: true, Data: []byte(`{"type":"run_started"}`)},
			{Seq: 2, Data: []byte(`{"type":"model_response","text":"Here are the notes."}`)},
		},
		Spend:  session.Spend{InputTokens: 1200, OutputTokens: 80, Cost: 0.0042},
		Status: session.StatusEnded,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Another writer is refused while the lease is held.
	if _, err := st.Acquire(ctx, "chat-1", "worker-2", time.Minute); err != nil {
		fmt.Println("worker-2:", errors.Is(err, session.ErrSessionBusy))
	}
	if err := st.Release(ctx, l); err != nil {
		log.Fatal(err)
	}

	for r, err := range st.Records(ctx, "chat-1", 1) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Seq, r.Base, string(r.Data))
	}
	info, err := st.Stat(ctx, "chat-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Head, info.Status, info.Spent.Tokens())
	// Output:
	// worker-2: true
	// 1 true {"type":"run_started"}
	// 2 false {"type":"model_response","text":"Here are the notes."}
	// 2 ended 1280
}
