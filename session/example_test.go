package session_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sessiontest"
)

// A conversation over two runs, as two requests to a server would make
// it: each opens the session, runs the loop on it, and closes it.
func ExampleSessions_Open() {
	ctx := context.Background()
	store := sessiontest.NewMemory() // session.OpenDir, or the sqlite and postgres modules
	sessions := session.New(store, session.Options{})
	loop := &toolloop.AgentLoop{Model: looptest.Script(looptest.Text("Hello, Ana."), looptest.Text("You are Ana."))}

	for _, prompt := range []string{"I am Ana.", "Who am I?"} {
		s, err := sessions.Open(ctx, "support-42")
		if errors.Is(err, session.ErrNotFound) {
			s, err = sessions.Create(ctx, session.Info{ID: "support-42", User: "ana", Tenant: "acme"})
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := s.Run(ctx, loop, toolloop.UserMessage(prompt))
		s.Close()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s -> %s (%d messages)\n", prompt, res.FinalText, len(res.Messages))
	}
	// Output:
	// I am Ana. -> Hello, Ana. (2 messages)
	// Who am I? -> You are Ana. (4 messages)
}

// Fork keeps the first messages of a session in a new one, to try again
// from there; Rewind cuts a session back in place.
func ExampleSessions_Fork() {
	ctx := context.Background()
	sessions := session.New(sessiontest.NewMemory(), session.Options{})
	loop := &toolloop.AgentLoop{Model: looptest.Script(looptest.Text("Paris."), looptest.Text("Rome."), looptest.Text("Lyon."))}
	s, _ := sessions.Create(ctx, session.Info{ID: "trip"})
	s.Run(ctx, loop, toolloop.UserMessage("Where to in France?"))
	s.Run(ctx, loop, toolloop.UserMessage("And in Italy?"))
	s.Close()

	info, err := sessions.Fork(ctx, "trip", 1, session.Info{ID: "trip-2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fork, _ := sessions.Open(ctx, info.ID)
	res, _ := fork.Run(ctx, loop)
	fork.Close()
	fmt.Println(info.Parent, info.ForkedAt, res.FinalText)

	if err := sessions.Rewind(ctx, "trip", 2); err != nil {
		fmt.Println(err)
	}
	st, _ := sessions.Load(ctx, "trip")
	fmt.Println(len(st.Messages), st.Messages[1].Text())
	// Output:
	// trip 1 Lyon.
	// 2 Paris.
}

// Caps bound what sessions spend across runs, per session and per
// tenant; a run that reaches one stops before its next model turn.
func ExampleCaps() {
	ctx := context.Background()
	reply := looptest.Text("ok")
	reply.Usage = toolloop.Usage{InputTokens: 600, OutputTokens: 100}
	loop := &toolloop.AgentLoop{Model: looptest.Always(reply)}
	sessions := session.New(sessiontest.NewMemory(), session.Options{
		Caps: session.Caps{Tenant: session.Cap{Tokens: 1000}},
	})
	s, _ := sessions.Create(ctx, session.Info{ID: "a", Tenant: "acme"})
	defer s.Close()
	for i := range 3 {
		_, err := s.Run(ctx, loop, toolloop.UserMessage("hi"))
		fmt.Println(i, err)
	}
	// Output:
	// 0 <nil>
	// 1 <nil>
	// 2 toolloop: the run reached its shared spending limit: session: tenant "acme" has spent 1400 tokens of its 1000-token cap
}
