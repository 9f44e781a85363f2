package temporal_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// These examples need a Temporal server (temporal server start-dev), so
// they are compiled but not run; the codec examples run.

// A worker runs the agent: its model and tools live here.
func ExampleRegister() {
	c, err := client.Dial(client.Options{}) // localhost:7233
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	var tools toolloop.ToolRegistry
	tools.MustRegister(toolloop.NewTool("add", "Add two integers.", func(_ context.Context, in struct{ A, B int }) (any, error) {
		return in.A + in.B, nil
	}))
	w := worker.New(c, "agents", worker.Options{})
	temporal.Register(w, temporal.Agent{Loop: &toolloop.AgentLoop{
		Model: looptest.Script(looptest.Text("Hello.")), // your provider's model
		Tools: &tools,
	}})
	if err := w.Run(worker.InterruptCh()); err != nil {
		log.Fatal(err)
	}
}

// A client starts a run and waits for its result, from any process.
func ExampleRun() {
	c, err := client.Dial(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	opts := temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: "ticket-1234", TaskQueue: "agents"}}
	res, err := temporal.Run(context.Background(), c, opts, []toolloop.Message{toolloop.UserMessage("Say hello.")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.FinalText)
}

// A person answers the calls that wait for approval, whenever they get
// to it.
func ExampleDecide() {
	c, err := client.Dial(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	st, err := temporal.Describe(ctx, c, "ticket-1234", "")
	if err != nil {
		log.Fatal(err)
	}
	for _, call := range st.Awaiting() {
		fmt.Printf("%s %s (%s)\n", call.Name, call.Pending.Arguments, call.Pending.Reason)
		d := temporal.Decision{CallID: call.CallID, Approval: toolloop.Approval{Approved: true}}
		if err := temporal.Decide(ctx, c, "ticket-1234", "", d); err != nil {
			log.Fatal(err)
		}
	}
}

// A person steers a run while it works: a correction delivered before
// the model's next turn, and a request for after its answer.
func ExampleSteer() {
	c, err := client.Dial(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := temporal.Steer(ctx, c, "ticket-1234", "", toolloop.UserMessage("Use the staging database, not prod.")); err != nil {
		log.Fatal(err)
	}
	if err := temporal.FollowUp(ctx, c, "ticket-1234", "", toolloop.UserMessage("Then write a summary for the ticket.")); err != nil {
		log.Fatal(err)
	}
}

// Interrupt stops a run at once and, with Continue, lets it go on with
// the message sent before it; without Continue, Wait returns
// toolloop.ErrInterrupted and the messages not delivered.
func ExampleInterrupt() {
	c, err := client.Dial(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := temporal.Steer(ctx, c, "ticket-1234", "", toolloop.UserMessage("Stop: restore from last night's backup instead.")); err != nil {
		log.Fatal(err)
	}
	i := toolloop.Interrupt{Mode: toolloop.InterruptNow, Continue: true}
	if err := temporal.Interrupt(ctx, c, "ticket-1234", "", i); err != nil {
		log.Fatal(err)
	}
	res, err := temporal.Wait(ctx, c.GetWorkflow(ctx, "ticket-1234", ""))
	if errors.Is(err, toolloop.ErrInterrupted) {
		fmt.Println("stopped; not delivered:", len(res.Undelivered))
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.FinalText)
}

// Describe shows what a run is doing, with its tools' latest progress.
func ExampleDescribe() {
	c, err := client.Dial(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	st, err := temporal.Describe(context.Background(), c, "ticket-1234", "")
	if err != nil {
		log.Fatal(err)
	}
	for _, call := range st.Calls {
		fmt.Printf("turn %d: %s %s", st.Turn, call.Name, call.State)
		if p := call.Progress; p != nil {
			fmt.Printf(" (%s %.0f/%.0f)", p.Message, p.Done, p.Total)
		}
		fmt.Println()
	}
}

// Start and Wait split Run, to do something in between or to wait for a
// run started elsewhere.
func ExampleWait() {
	c, err := client.Dial(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := temporal.Wait(context.Background(), c.GetWorkflow(context.Background(), "ticket-1234", ""))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.StopReason, res.FinalText)
}

// mapStore is a PayloadStore in memory; use an object store or a
// database in production.
type mapStore struct {
	mu    sync.Mutex
	blobs map[string][]byte
}

func (s *mapStore) Put(_ context.Context, key string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blobs[key] = data
	return nil
}

func (s *mapStore) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[key]
	if !ok {
		return nil, errors.New("not found: " + key)
	}
	return b, nil
}

// A StoreCodec in the data converter of every client (the workers' and
// the starters') moves large payloads, transcripts mostly, to a store of
// your own: the workflow history holds their keys.
func ExampleStoreCodec() {
	store := &mapStore{blobs: map[string][]byte{}}
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), &temporal.StoreCodec{Store: store})
	// c, err := client.Dial(client.Options{DataConverter: dc})

	long := temporal.Input{Messages: []toolloop.Message{toolloop.UserMessage(strings.Repeat("A long transcript. ", 1000))}}
	p, err := dc.ToPayload(long)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(p.GetMetadata()[converter.MetadataEncoding]), len(p.GetData()), len(store.blobs))
	var back temporal.Input
	if err := dc.FromPayload(p, &back); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(back.Messages[0].Text()))
	// Output:
	// binary/toolloop-stored 64 1
	// 19000
}
