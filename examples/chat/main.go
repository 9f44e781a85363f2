package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/anthropic"
	"github.com/toolloop/toolloop/providers/gemini"
	"github.com/toolloop/toolloop/providers/openai"
	"github.com/toolloop/toolloop/sink"
)

const defaultPrompt = "What's the weather in Paris and Tokyo? Give me Paris in Fahrenheit too."

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	provider    string
	model       string
	effort      string
	thinking    int64
	interactive bool
	prompt      string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.provider, "provider", "auto",
		"openai (Chat Completions, or any compatible server), responses (OpenAI's Responses API), anthropic, gemini, scripted, or auto (from the environment)")
	fs.StringVar(&o.model, "model", "", "the model to use (default: $CHAT_MODEL, else the provider's default)")
	fs.StringVar(&o.effort, "effort", "",
		"how hard a reasoning model thinks: OpenAI's reasoning effort, Anthropic's effort, Gemini 3's thinking level (low, medium, high, ...)")
	fs.Int64Var(&o.thinking, "thinking", 0,
		"a thinking budget in tokens, with the thoughts shown as they stream (Anthropic's extended thinking, on models that take a budget, not the default one, which thinks adaptively: use -effort; Gemini's thinking budget)")
	fs.BoolVar(&o.interactive, "i", false, "hold a conversation: read one message per line from stdin")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.prompt = strings.Join(fs.Args(), " ")
	return o, nil
}

// run is the whole command, with its environment passed in so that tests
// can run it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.model == "" {
		o.model = getenv("CHAT_MODEL")
	}
	if o.thinking < 0 {
		return fmt.Errorf("-thinking must be a number of tokens, not %d", o.thinking)
	}
	model, name, err := pickModel(o, getenv)
	if err != nil {
		return err
	}
	if name == "scripted" {
		fmt.Fprintln(stderr, "No OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or OPENAI_BASE_URL is set: using a scripted model, offline.")
	} else {
		fmt.Fprintf(stderr, "Using %s.\n", name)
	}
	// The printer streams the answer and the model's reasoning (dimmed,
	// under a ┊ margin), and prints one line per tool call.
	loop := &toolloop.AgentLoop{Model: model, Tools: tools(), OnEvent: sink.NewPrinter(stdout, nil), Budget: toolloop.Budget{MaxTurns: 8}}
	msgs := []toolloop.Message{toolloop.SystemMessage(
		"You are a helpful assistant. Use the tools for weather and conversions; say the weather is simulated.")}

	turn := func(text string) error {
		msgs = append(msgs, toolloop.UserMessage(text))
		res, err := loop.Run(ctx, msgs)
		if res != nil {
			msgs = res.Messages
			fmt.Fprintf(stdout, "[%s after %d turn(s)", res.StopReason, res.Turns)
			if u := res.Usage; u.InputTokens+u.OutputTokens > 0 {
				fmt.Fprintf(stdout, "; %d tokens in, %d out", u.InputTokens, u.OutputTokens)
				if u.ReasoningTokens > 0 {
					fmt.Fprintf(stdout, " (%d reasoning)", u.ReasoningTokens)
				}
			}
			fmt.Fprintln(stdout, "]")
		}
		return err
	}
	if !o.interactive {
		prompt := o.prompt
		if prompt == "" {
			prompt = defaultPrompt
		}
		fmt.Fprintln(stdout, "> "+prompt)
		return turn(prompt)
	}
	sc := bufio.NewScanner(stdin)
	for {
		fmt.Fprint(stdout, "> ")
		if !sc.Scan() {
			fmt.Fprintln(stdout)
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := turn(line); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			fmt.Fprintln(stderr, "error:", err)
		}
	}
}

// pickModel chooses the model: as -provider says, or from the environment.
func pickModel(o options, getenv func(string) string) (toolloop.Model, string, error) {
	p := o.provider
	if p == "auto" {
		switch {
		case getenv("OPENAI_BASE_URL") != "":
			p = "openai"
		case getenv("ANTHROPIC_API_KEY") != "":
			p = "anthropic"
		case getenv("GEMINI_API_KEY") != "" || getenv("GOOGLE_API_KEY") != "":
			p = "gemini"
		case getenv("OPENAI_API_KEY") != "":
			p = "openai"
		default:
			p = "scripted"
		}
	}
	switch p {
	case "openai", "responses":
		cfg := openai.Config{Model: o.model, APIKey: getenv("OPENAI_API_KEY"), BaseURL: getenv("OPENAI_BASE_URL"),
			ReasoningEffort: o.effort}
		if p == "responses" {
			if o.effort != "" || o.thinking > 0 {
				cfg.ReasoningSummary = "auto" // show the model's reasoning as it streams
			}
			m, err := openai.NewResponses(cfg)
			if err != nil {
				return nil, "", err
			}
			return m, "openai responses (" + orDefault(o.model, openai.DefaultModel) + ")", nil
		}
		m, err := openai.New(cfg)
		if err != nil {
			return nil, "", err
		}
		return m, "openai (" + orDefault(o.model, openai.DefaultModel) + ")", nil
	case "anthropic":
		cfg := anthropic.Config{Model: o.model, APIKey: getenv("ANTHROPIC_API_KEY"), Effort: o.effort,
			Thinking: anthropic.Thinking{Budget: o.thinking}}
		m, err := anthropic.New(cfg)
		if err != nil {
			return nil, "", err
		}
		return m, "anthropic (" + orDefault(o.model, anthropic.DefaultModel) + ")", nil
	case "gemini":
		cfg := gemini.Config{Model: o.model, APIKey: orDefault(getenv("GEMINI_API_KEY"), getenv("GOOGLE_API_KEY")),
			ThinkingLevel: o.effort, IncludeThoughts: o.effort != "" || o.thinking > 0}
		if o.thinking > 0 {
			cfg.ThinkingBudget = &o.thinking
		}
		m, err := gemini.New(cfg)
		if err != nil {
			return nil, "", err
		}
		return m, "gemini (" + orDefault(o.model, gemini.DefaultModel) + ")", nil
	case "scripted":
		return &scripted{think: o.effort != "" || o.thinking > 0}, "scripted", nil
	}
	return nil, "", fmt.Errorf("unknown provider %q", p)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
