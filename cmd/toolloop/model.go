package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"iter"
	"net/url"
	"os"
	"strings"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/anthropic"
	"github.com/toolloop/toolloop/providers/gemini"
	"github.com/toolloop/toolloop/providers/openai"
)

// modelFlags choose the model of run and resume.
type modelFlags struct {
	provider string
	model    string
	baseURL  string
	script   string
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.provider, "provider", "", "openai, anthropic, gemini, openai-compatible (with -base-url) or script (with -script); empty: from the environment")
	fs.StringVar(&m.model, "model", "", "the model; empty: the provider's default")
	fs.StringVar(&m.baseURL, "base-url", "", "the base URL of an OpenAI-compatible server (http://localhost:11434/v1)")
	fs.StringVar(&m.script, "script", "", "a looptest transcript (JSON array of messages) whose assistant messages answer as the model, offline")
}

// keyVars are the environment variables that hold API keys, which are
// never printed and are redacted from logs and tool output.
var keyVars = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"}

// pickModel returns the model the flags and environment choose, and a
// name for it to show (never a key).
func pickModel(m modelFlags, getenv func(string) string) (toolloop.Model, string, error) {
	p := m.provider
	if p == "" {
		switch {
		case m.script != "":
			p = "script"
		case m.baseURL != "":
			p = "openai-compatible"
		case getenv("OPENAI_API_KEY") != "":
			p = "openai"
		case getenv("ANTHROPIC_API_KEY") != "":
			p = "anthropic"
		case getenv("GEMINI_API_KEY") != "" || getenv("GOOGLE_API_KEY") != "":
			p = "gemini"
		default:
			return nil, "", usagef("no model: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY (or GOOGLE_API_KEY), " +
				"or pass -provider openai-compatible -base-url URL for a local server, or -script FILE to play a looptest transcript offline")
		}
	}
	needKey := func(vars ...string) (string, error) {
		for _, v := range vars {
			if k := getenv(v); k != "" {
				return k, nil
			}
		}
		return "", usagef("-provider %s needs %s set", p, strings.Join(vars, " or "))
	}
	switch p {
	case "script":
		if m.script == "" {
			return nil, "", usagef("-provider script needs -script FILE")
		}
		sm, err := loadScript(m.script)
		if err != nil {
			return nil, "", err
		}
		return sm, "script " + m.script, nil
	case "openai":
		key, err := needKey("OPENAI_API_KEY")
		if err != nil {
			return nil, "", err
		}
		model, err := openai.New(openai.Config{Model: m.model, APIKey: key, BaseURL: m.baseURL})
		return withName(model, "openai "+orDefault(m.model, openai.DefaultModel), err)
	case "openai-compatible":
		if m.baseURL == "" {
			return nil, "", usagef("-provider openai-compatible needs -base-url URL")
		}
		if m.model == "" {
			return nil, "", usagef("-provider openai-compatible needs -model NAME")
		}
		// Local servers often want no key; the SDK would read
		// OPENAI_API_KEY, and send it to whatever URL was given.
		key := orDefault(getenv("OPENAI_COMPATIBLE_API_KEY"), "none")
		model, err := openai.New(openai.Config{Model: m.model, APIKey: key, BaseURL: m.baseURL})
		return withName(model, "openai-compatible "+m.model+" at "+redactURL(m.baseURL), err)
	case "anthropic":
		key, err := needKey("ANTHROPIC_API_KEY")
		if err != nil {
			return nil, "", err
		}
		model, err := anthropic.New(anthropic.Config{Model: m.model, APIKey: key})
		return withName(model, "anthropic "+orDefault(m.model, anthropic.DefaultModel), err)
	case "gemini":
		key, err := needKey("GEMINI_API_KEY", "GOOGLE_API_KEY")
		if err != nil {
			return nil, "", err
		}
		model, err := gemini.New(gemini.Config{Model: m.model, APIKey: key})
		return withName(model, "gemini "+orDefault(m.model, gemini.DefaultModel), err)
	}
	return nil, "", usagef("unknown provider %q: use openai, anthropic, gemini, openai-compatible or script", p)
}

// withName returns a constructor's model and the name to show for it, or
// the constructor's error alone.
func withName(model toolloop.Model, name string, err error) (toolloop.Model, string, error) {
	if err != nil {
		return nil, "", err
	}
	return model, name, nil
}

// redactURL hides a password in a URL, which is as secret as a key.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unparsable URL)"
	}
	return u.Redacted()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// scriptModel answers from a recorded transcript: the reply to a request
// is the transcript's assistant message after as many assistant messages
// as the request holds. So one script file serves a whole conversation,
// a resumed run picks up where the interrupted one stopped, and a script
// that the conversation outgrows says so. Its text streams word by word.
type scriptModel struct {
	replies []toolloop.Message
}

// loadScript reads a looptest transcript (the format looptest.Load reads).
func loadScript(path string) (*scriptModel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("reading the script: %v", err)
	}
	var msgs []toolloop.Message
	if err := json.Unmarshal(b, &msgs); err != nil {
		return nil, usagef("%s is not a looptest transcript (a JSON array of messages): %v", path, err)
	}
	sm := &scriptModel{}
	for _, m := range msgs {
		if m.Role == toolloop.RoleAssistant {
			m.StopReason, m.Usage = "", nil
			sm.replies = append(sm.replies, m)
		}
	}
	if len(sm.replies) == 0 {
		return nil, usagef("%s has no assistant messages to play", path)
	}
	return sm, nil
}

var errScriptEnded = errors.New("the script has no more replies")

// Generate implements toolloop.Model.
func (s *scriptModel) Generate(ctx context.Context, req *toolloop.Request) (*toolloop.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == toolloop.RoleAssistant {
			n++
		}
	}
	if n >= len(s.replies) {
		return nil, fmt.Errorf("%w (it has %d, the conversation asks for reply %d)", errScriptEnded, len(s.replies), n+1)
	}
	msg := s.replies[n]
	// A copy, so that the loop never shares the script's slices.
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	var cp toolloop.Message
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, err
	}
	return &toolloop.Response{Message: cp, Model: "script"}, nil
}

// Stream implements toolloop.Streamer: the reply's text word by word,
// then the reply.
func (s *scriptModel) Stream(ctx context.Context, req *toolloop.Request) iter.Seq2[toolloop.Chunk, error] {
	return func(yield func(toolloop.Chunk, error) bool) {
		resp, err := s.Generate(ctx, req)
		if err != nil {
			yield(toolloop.Chunk{}, err)
			return
		}
		text := resp.Message.Text()
		for len(text) > 0 {
			if err := ctx.Err(); err != nil {
				yield(toolloop.Chunk{}, err)
				return
			}
			i := strings.IndexByte(text, ' ')
			if i < 0 {
				i = len(text) - 1
			}
			if !yield(toolloop.Chunk{Text: text[:i+1]}, nil) {
				return
			}
			text = text[i+1:]
		}
		yield(toolloop.Chunk{Response: resp}, nil)
	}
}
