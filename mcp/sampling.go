//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the protocol of 2026-07-28 but work for at least a year, and servers use them; the issue asks for them.

package mcp

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// Bounds on the sampling requests a server may make.
const (
	// DefaultSamplingMaxTokens is the cap on a request's maxTokens when
	// [Sampling.MaxTokens] is 0.
	DefaultSamplingMaxTokens = 4096
	// MaxSamplingMessages bounds the messages of one request.
	MaxSamplingMessages = 100
	// MaxSamplingBytes bounds the text and binary data of one request,
	// system prompt included.
	MaxSamplingBytes = 1 << 20
)

// Sampling answers servers' sampling requests (sampling/createMessage,
// "ask your model this"), which only servers whose [ServerConfig] sets
// Sampling may make. A server cannot spend tokens unseen: every request
// goes to Approve first, and every request, approved or not, is reported
// to [Options.OnEvent] as an [EventSampling] event with what it spent.
type Sampling struct {
	// Model answers approved requests. It is sent the server's system
	// prompt and messages (text and images; audio is refused), with no
	// tools. Required.
	Model toolloop.Model
	// Approve decides each request before the model sees it. Nil denies
	// every request: a server gets to spend tokens only if you say so.
	// To allow all, return toolloop.Approval{Approved: true}. An error or
	// a panic denies the request. The reason of a denial is sent to the
	// server.
	Approve func(ctx context.Context, server string, req *SamplingRequest) (toolloop.Approval, error)
	// MaxTokens caps the maxTokens a request may ask for: a larger one is
	// lowered to it. 0 means [DefaultSamplingMaxTokens].
	MaxTokens int
}

// SamplingRequest is a server's sampling request, as the model will be
// asked it.
type SamplingRequest struct {
	// Request is what the model will be sent: the system prompt, if any,
	// then the server's messages.
	Request *toolloop.Request
	// MaxTokens is the server's maxTokens, capped by [Sampling.MaxTokens].
	// A [toolloop.Request] has no token limit, so the model is not told
	// it; the answer's text is cut to about 4 bytes per token of it, and
	// its stop reason is then "maxTokens". A model of yours may also read
	// it with [SamplingMaxTokens].
	MaxTokens int
	// Temperature, StopSequences and ModelHints are the server's wishes,
	// for the program to follow or not.
	Temperature   float64
	StopSequences []string
	ModelHints    []string
}

type samplingKey struct{}

// SamplingMaxTokens returns the token limit of the sampling request the
// model is answering (see [SamplingRequest.MaxTokens]), if ctx is the
// context of a sampling request's Generate.
func SamplingMaxTokens(ctx context.Context) (int, bool) {
	n, ok := ctx.Value(samplingKey{}).(int)
	return n, ok
}

// onSampling answers a sampling request.
func (s *Source) onSampling(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	cfg := s.opts.Sampling
	sr, err := toSamplingRequest(req.Params, orInt(cfg.MaxTokens, DefaultSamplingMaxTokens))
	if err != nil {
		s.emit(toolloop.Event{Type: EventSampling, Approval: &toolloop.Approval{Reason: err.Error()}, Error: err.Error()})
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	approval := toolloop.Approval{Reason: "the client allows no sampling requests"}
	if cfg.Approve != nil {
		err := s.protect("sampling approval", func() (err error) {
			approval, err = cfg.Approve(ctx, s.name, sr)
			return err
		})
		if err != nil {
			approval = toolloop.Approval{Reason: "the approval failed"}
			s.logger.Warn("mcp sampling approval failed; the request is denied", "err", err)
		}
	}
	if !approval.Approved {
		if approval.Reason == "" {
			approval.Reason = "denied"
		}
		s.emit(toolloop.Event{Type: EventSampling, Approval: &approval})
		s.logger.Info("mcp sampling request denied", "reason", approval.Reason)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "sampling request denied by the client: " + approval.Reason}
	}
	var resp *toolloop.Response
	err = s.protect("sampling model", func() (err error) {
		resp, err = cfg.Model.Generate(context.WithValue(ctx, samplingKey{}, sr.MaxTokens), sr.Request)
		if err == nil && resp == nil {
			err = errors.New("the model returned no response")
		}
		return err
	})
	ev := toolloop.Event{Type: EventSampling, Approval: &approval}
	if err != nil {
		ev.Error = err.Error()
		s.emit(ev)
		s.logger.Warn("mcp sampling request failed", "err", err)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's model failed"}
	}
	ev.Usage = &resp.Usage
	res, err := fromSamplingResponse(resp, sr.MaxTokens)
	if err != nil {
		ev.Error = err.Error()
	}
	s.emit(ev)
	s.logger.Info("mcp sampling request answered",
		"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return res, nil
}

// toSamplingRequest converts and bounds a server's request.
func toSamplingRequest(p *sdk.CreateMessageParams, maxTokens int) (*SamplingRequest, error) {
	if p == nil {
		return nil, errors.New("no parameters")
	}
	if len(p.Messages) == 0 || len(p.Messages) > MaxSamplingMessages {
		return nil, fmt.Errorf("a request needs 1 to %d messages, has %d", MaxSamplingMessages, len(p.Messages))
	}
	if p.MaxTokens <= 0 {
		return nil, errors.New("maxTokens must be positive")
	}
	size := len(p.SystemPrompt)
	req := &toolloop.Request{Messages: make([]toolloop.Message, 0, len(p.Messages)+1)}
	if p.SystemPrompt != "" {
		req.Messages = append(req.Messages, toolloop.SystemMessage(p.SystemPrompt))
	}
	for i, m := range p.Messages {
		if m == nil {
			return nil, fmt.Errorf("message %d is null", i)
		}
		var role toolloop.Role
		switch m.Role {
		case "user":
			role = toolloop.RoleUser
		case "assistant":
			role = toolloop.RoleAssistant
		default:
			return nil, fmt.Errorf("message %d has role %q", i, m.Role)
		}
		var c toolloop.Content
		switch b := m.Content.(type) {
		case *sdk.TextContent:
			c = toolloop.TextContent(b.Text)
			size += len(b.Text)
		case *sdk.ImageContent:
			c = toolloop.ImageContent(b.MIMEType, b.Data)
			size += len(b.Data)
		default:
			return nil, fmt.Errorf("message %d: the client's model takes text and images only, not %T", i, m.Content)
		}
		if size > MaxSamplingBytes {
			return nil, fmt.Errorf("the request holds more than %d bytes", MaxSamplingBytes)
		}
		req.Messages = append(req.Messages, toolloop.Message{Role: role, Content: []toolloop.Content{c}})
	}
	sr := &SamplingRequest{
		Request:       req,
		MaxTokens:     int(min(p.MaxTokens, int64(maxTokens))),
		Temperature:   p.Temperature,
		StopSequences: p.StopSequences,
	}
	if mp := p.ModelPreferences; mp != nil {
		for _, h := range mp.Hints {
			if h != nil && h.Name != "" {
				sr.ModelHints = append(sr.ModelHints, h.Name)
			}
		}
	}
	return sr, nil
}

// fromSamplingResponse converts the model's answer: its text, cut to
// about 4 bytes per token of maxTokens, or, if it has none, its first
// image.
func fromSamplingResponse(resp *toolloop.Response, maxTokens int) (*sdk.CreateMessageResult, error) {
	res := &sdk.CreateMessageResult{Model: resp.Model, Role: "assistant", StopReason: "endTurn"}
	if res.Model == "" {
		res.Model = "unknown"
	}
	switch resp.StopReason {
	case toolloop.StopLength:
		res.StopReason = "maxTokens"
	case toolloop.StopRefusal:
		res.StopReason = "refusal"
	}
	if text := resp.Message.Text(); text != "" {
		if limit := 4 * maxTokens; len(text) > limit {
			for limit > 0 && !utf8.RuneStart(text[limit]) {
				limit--
			}
			text, res.StopReason = text[:limit], "maxTokens"
		}
		res.Content = &sdk.TextContent{Text: text}
		return res, nil
	}
	for _, c := range resp.Message.Content {
		if c.Type == toolloop.ContentImage && len(c.Data) > 0 {
			res.Content = &sdk.ImageContent{MIMEType: c.MIMEType, Data: c.Data}
			return res, nil
		}
	}
	if len(resp.Message.ToolCalls) > 0 {
		return nil, errors.New("the client's model asked for tools, which a sampling request does not offer")
	}
	res.Content = &sdk.TextContent{}
	return res, nil
}
