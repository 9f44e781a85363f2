package toolloop_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/providers"
)

// A model that is rate limited once is asked again after a short wait,
// and the run ends fine. A model that stays overloaded fails the run
// after the policy's attempts, with an error that still matches the
// provider's sentinel.
func ExampleRetry() {
	calls := 0
	flaky := toolloop.ModelFunc(func(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		calls++
		if calls == 1 {
			return nil, &providers.Error{Provider: "example", StatusCode: 429, Kind: providers.ErrRateLimit}
		}
		return looptest.Text("Hello!"), nil
	})
	// BaseDelay is short to keep the example quick; the default is 1s.
	policy := toolloop.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond}
	printRetries := func(e toolloop.Event) {
		if e.Type == toolloop.EventModelRetry {
			fmt.Printf("attempt %d failed: %s\n", e.Attempt.Attempt, e.Attempt.Error)
		}
	}

	loop := &toolloop.AgentLoop{Model: toolloop.Retry(flaky, policy), OnEvent: printRetries}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Hi")})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.FinalText)

	overloaded := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		return nil, &providers.Error{Provider: "example", StatusCode: 503, Kind: providers.ErrOverloaded}
	})
	loop = &toolloop.AgentLoop{Model: toolloop.Retry(overloaded, policy), OnEvent: printRetries}
	_, err = loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Hi")})
	fmt.Println(err)
	fmt.Println("overloaded:", errors.Is(err, providers.ErrOverloaded))
	// Output:
	// attempt 1 failed: example: 429 Too Many Requests
	// Hello!
	// attempt 1 failed: example: 503 Service Unavailable
	// attempt 2 failed: example: 503 Service Unavailable
	// toolloop: model: retry: gave up after 3 attempts: example: 503 Service Unavailable
	// overloaded: true
}

// The primary model is overloaded, so the backup answers; the transcript
// names the model that did.
func ExampleFallback() {
	primary := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		return nil, &providers.Error{Provider: "example", StatusCode: 503, Kind: providers.ErrOverloaded}
	})
	answer := looptest.Text("Hello from the backup.")
	answer.Model = "backup-model"
	backup := looptest.Script(answer)

	loop := &toolloop.AgentLoop{
		Model: toolloop.Fallback(primary, backup),
		OnEvent: func(e toolloop.Event) {
			if e.Type == toolloop.EventModelFallback {
				fmt.Printf("model %d failed: %s\n", e.Attempt.Model, e.Attempt.Error)
			}
		},
	}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("Hi")})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	last := res.Messages[len(res.Messages)-1]
	fmt.Printf("%s: %s\n", last.Model, res.FinalText)
	// Output:
	// model 0 failed: example: 503 Service Unavailable
	// backup-model: Hello from the backup.
}
