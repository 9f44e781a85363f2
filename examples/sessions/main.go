// Command sessions runs a support agent whose conversation lives in an
// SQLite file: three runs, as three requests to a server (or three
// processes) would make them, each opening the session, running one
// message and closing it; then a fork that tries the conversation again
// from an earlier message, and a list of the sessions with what each
// spent.
//
//	go run ./examples/sessions               # in a new file in a temporary folder
//	go run ./examples/sessions -db s.db      # in s.db: run it again to see the session grow
//
// The model is scripted (it runs offline), but it answers from the whole
// transcript it is sent, so its answers show what each run was given:
// the customer's name, said in the first run, is known in the third.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sqlite"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	fs.SetOutput(out)
	db := fs.String("db", "", "the SQLite `file` of the sessions; empty: a new one in a temporary folder")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *db == "" {
		dir, err := os.MkdirTemp("", "toolloop-sessions")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*db = filepath.Join(dir, "sessions.db")
	}
	store, err := sqlite.Open(*db)
	if err != nil {
		return err
	}
	defer store.Close()
	sessions := session.New(store, session.Options{
		// Each tenant may spend at most 50,000 tokens, across all its
		// sessions and runs.
		Caps: session.Caps{Tenant: session.Cap{Tokens: 50_000}},
	})
	loop := newLoop()

	// Three requests, one message each: open, run, close.
	for _, msg := range []string{"Hi, I'm Ana. Where is order 42?", "Can you send it to my office instead?", "Then cancel it, please."} {
		if err := ask(ctx, sessions, loop, "support-42", msg, out); err != nil {
			return err
		}
	}

	// Try again from the fourth message: the first question and its
	// answer, without what came after (in place of the fork an earlier
	// invocation made).
	if err := sessions.Delete(ctx, "support-42-retry"); err != nil && !errors.Is(err, session.ErrNotFound) {
		return err
	}
	info, err := sessions.Fork(ctx, "support-42", 4, session.Info{ID: "support-42-retry", Title: "kept the order"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "forked %s from %s at message %d\n", info.ID, info.Parent, info.ForkedAt)
	if err := ask(ctx, sessions, loop, info.ID, "Keep it, I'll be home on Tuesday.", out); err != nil {
		return err
	}

	list, err := sessions.List(ctx, session.Filter{Tenant: "shop"})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "sessions of tenant shop:")
	for _, in := range list {
		st, err := sessions.Load(ctx, in.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-17s %-6s %2d messages, %d tokens\n", in.ID, in.Status, len(st.Messages), in.Spent.Tokens())
	}
	return nil
}

// ask opens the session (creating it the first time), runs one message
// on it and closes it, as one request to a server would.
func ask(ctx context.Context, sessions *session.Sessions, loop *toolloop.AgentLoop, id, msg string, out io.Writer) error {
	s, err := sessions.Open(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		s, err = sessions.Create(ctx, session.Info{ID: id, User: "ana", Tenant: "shop", Title: "order 42"})
	}
	if err != nil {
		return err
	}
	defer s.Close()
	before := len(s.State().Messages)
	res, err := s.Run(ctx, loop, toolloop.UserMessage(msg))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s (%d messages before)\n  > %s\n", id, before, msg)
	for _, m := range res.Messages[before:] {
		if r := m.Result; r != nil {
			fmt.Fprintf(out, "  %s: %s\n", r.Name, r.Text())
		}
	}
	fmt.Fprintf(out, "  < %s\n", res.FinalText)
	return nil
}

// newLoop is the support agent: two tools and a scripted model.
func newLoop() *toolloop.AgentLoop {
	type order struct {
		ID string `json:"id" jsonschema:"the order number"`
	}
	var tools toolloop.ToolRegistry
	tools.MustRegister(
		toolloop.NewTool("lookup_order", "Where an order is.", func(_ context.Context, in order) (any, error) {
			return "order " + in.ID + ": shipped, arrives Tuesday at the home address", nil
		}),
		toolloop.NewTool("cancel_order", "Cancels an order.", func(_ context.Context, in order) (any, error) {
			return "order " + in.ID + ": cancelled, refund in 3 days", nil
		}),
	)
	return &toolloop.AgentLoop{Model: toolloop.ModelFunc(support), Tools: &tools,
		ModelTable: toolloop.ModelTable{"scripted": {Price: &toolloop.Price{Input: 1, Output: 4}}}}
}

var nameRE = regexp.MustCompile(`I'm (\w+)`)

// support is the scripted model. It answers the last message from the
// whole transcript: the customer's name, the order and what the tools
// said.
func support(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	msgs := req.Messages
	var name, user string
	for i := range msgs {
		if msgs[i].Role == toolloop.RoleUser {
			user = msgs[i].Text()
			if m := nameRE.FindStringSubmatch(user); m != nil {
				name = m[1]
			}
		}
	}
	reply := func(text string) (*toolloop.Response, error) {
		return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, Content: []toolloop.Content{toolloop.TextContent(text)}},
			Usage: toolloop.Usage{InputTokens: int64(100 * len(msgs)), OutputTokens: 20}, Model: "scripted"}, nil
	}
	call := func(tool string) (*toolloop.Response, error) {
		return &toolloop.Response{Message: toolloop.Message{Role: toolloop.RoleAssistant, ToolCalls: []toolloop.ToolCall{
			{ID: fmt.Sprintf("call_%d", len(msgs)), Name: tool, Arguments: []byte(`{"id":"42"}`)}}},
			Usage: toolloop.Usage{InputTokens: int64(100 * len(msgs)), OutputTokens: 10}, Model: "scripted"}, nil
	}
	last := msgs[len(msgs)-1]
	switch {
	case last.Result != nil && last.Result.Name == "lookup_order":
		return reply(fmt.Sprintf("Order 42 has shipped, %s: it arrives on Tuesday, at your home address.", name))
	case last.Result != nil:
		return reply(fmt.Sprintf("Done, %s: order 42 is cancelled, and the refund comes in 3 days.", name))
	case strings.Contains(user, "Where"):
		return call("lookup_order")
	case strings.Contains(user, "cancel"):
		return call("cancel_order")
	case strings.Contains(user, "office"):
		return reply(fmt.Sprintf("I'm sorry, %s: a shipped order cannot change address. I can cancel it instead.", name))
	}
	return reply(fmt.Sprintf("Noted, %s: order 42 arrives on Tuesday.", name))
}
