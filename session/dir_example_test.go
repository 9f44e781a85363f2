package session_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/toolloop/toolloop/session"
)

// A Dir used as a Store directly: create a session, take its writer
// lease, append a batch of records, and read the records back.
func ExampleDir() {
	tmp, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	ctx := context.Background()
	d, err := session.OpenDir(filepath.Join(tmp, "sessions"))
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()

	if err := d.Create(ctx, session.Info{ID: "support-42", User: "ana", Tenant: "acme", Title: "Refund"}); err != nil {
		log.Fatal(err)
	}
	l, err := d.Acquire(ctx, "support-42", "worker-1", time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	err = d.Append(ctx, l, session.Batch{
		Records: []session.Record{
			{Seq: 1, Base: true, Data: []byte(`{"type":"run.start","text":"I want a refund"}`)},
			{Seq: 2, Data: []byte(`{"type":"model.response","text":"Which order?"}`)},
		},
		Spend:  session.Spend{InputTokens: 120, OutputTokens: 8, Cost: 0.001},
		Status: session.StatusEnded,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := d.Release(ctx, l); err != nil {
		log.Fatal(err)
	}

	for r, err := range d.Records(ctx, "support-42", 1) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Seq, r.Base, string(r.Data))
	}
	info, err := d.Stat(ctx, "support-42")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Head, info.Status, info.Spent.Tokens())
	spent, err := d.TenantSpend(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(spent.Tokens())
	// Output:
	// 1 true {"type":"run.start","text":"I want a refund"}
	// 2 false {"type":"model.response","text":"Which order?"}
	// 2 ended 128
	// 128
}
