package providertest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers"
	"github.com/toolloop/toolloop/providers/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestExample runs the kit on the example's provider.
func TestExample(t *testing.T) { testTiny(t) }

// brokenModel is tiny with one fault, named by the environment's
// PROVIDERTEST_FAULT.
type brokenModel struct {
	tinyModel
	fault string
}

func (m *brokenModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	if m.fault == "ignores the tool choice" {
		r := *req
		r.ToolChoice = toolloop.ToolChoice{}
		req = &r
	}
	resp, err := m.tinyModel.Generate(ctx, req)
	var pe *providers.Error
	switch {
	case m.fault == "drops usage" && resp != nil:
		resp.Usage = toolloop.Usage{}
	case m.fault == "calls a cut-off answer finished" && resp != nil && resp.StopReason == toolloop.StopLength:
		resp.StopReason = toolloop.StopEnd
	case m.fault == "takes a rate limit for an overload" && errors.As(err, &pe) && pe.Kind == providers.ErrRateLimit:
		pe.Kind = providers.ErrOverloaded
	case m.fault == "changes the request":
		req.Messages[0].Content = nil
	}
	return resp, err
}

// TestBrokenProviders runs the kit on the example's provider with one
// fault each, in a child process, and checks that the kit fails and says
// why.
func TestBrokenProviders(t *testing.T) {
	if fault := os.Getenv("PROVIDERTEST_FAULT"); fault != "" {
		providertest.Run(t, providertest.Harness{
			Provider: "tiny",
			New: func(t *testing.T, s providertest.Setup) toolloop.Model {
				return &brokenModel{tinyModel{URL: s.URL, Client: s.Client}, fault}
			},
			Replies: func(turn providertest.Turn) []providertest.Reply {
				return []providertest.Reply{{Body: encode(turn.Want.Response)}}
			},
			Errors: []providertest.ErrorCase{
				{Name: "too long", Reply: tinyError(400, "too_long", "too long"), Kind: providers.ErrContextLength, Type: "too_long"},
				{Name: "rate limited", Reply: tinyError(429, "rate_limited", "slow down"), Kind: providers.ErrRateLimit, Type: "rate_limited"},
				{Name: "overloaded", Reply: tinyError(503, "overloaded", "busy"), Kind: providers.ErrOverloaded, Type: "overloaded"},
				{Name: "bad key", Reply: tinyError(401, "bad_key", "unknown key"), Kind: providers.ErrAuth, Type: "bad_key"},
			},
			Lacks: providertest.Features{Reasoning: true},
		})
		return
	}
	for fault, want := range map[string][]string{
		"drops usage":                        {"--- FAIL: TestBrokenProviders/turns/text/", "want input and output tokens"},
		"calls a cut-off answer finished":    {"--- FAIL: TestBrokenProviders/turns/length/", `stop reason "stop", want "length"`},
		"ignores the tool choice":            {"--- FAIL: TestBrokenProviders/tool_choice/sent", "the tool choice does not reach it", "--- FAIL: TestBrokenProviders/tool_choice/refused/unknown_tool"},
		"takes a rate limit for an overload": {"--- FAIL: TestBrokenProviders/errors/rate_limited/Generate", "errors.Is(err, providers.ErrRateLimit) is false"},
		"changes the request":                {"the call changed the request"},
	} {
		t.Run(fault, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenProviders$", "-test.v")
			cmd.Env = append(os.Environ(), "PROVIDERTEST_FAULT="+fault)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "the kit passed a provider that %s:\n%s", fault, out)
			for _, w := range want {
				assert.Contains(t, string(out), w)
			}
		})
	}
}
