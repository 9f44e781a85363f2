package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on the elicitation requests a server may make.
const (
	// MaxElicitMessageBytes bounds the message shown to the user; a
	// longer one is refused.
	MaxElicitMessageBytes = 16 << 10
	// MaxElicitSchemaBytes bounds the requested schema; a larger one is
	// refused.
	MaxElicitSchemaBytes = 64 << 10
)

// ElicitFunc answers a server's elicitation request: a question for the
// user, with a form whose fields a flat JSON Schema describes. Like a
// [toolloop.Approver], it is synchronous and may take as long as the user
// does; it must honour ctx, which ends when the server gives up or the
// connection closes. An error, or a panic, fails the server's request.
//
// Only servers whose [ServerConfig] sets Elicitation may ask. The answer's
// Content is checked against the requested schema (with its defaults
// filled in) before the server sees it: content that does not match fails
// the server's request. Requests to open a URL (URL-mode elicitation) are
// not declared, and refused.
type ElicitFunc func(ctx context.Context, server string, req *ElicitRequest) (ElicitResult, error)

// ElicitRequest is a server's question.
type ElicitRequest struct {
	// Message is the question, written by the server for the user.
	Message string
	// Schema is the JSON Schema of the answer: an object whose properties
	// are strings, numbers, integers, booleans or enums.
	Schema json.RawMessage
}

// ElicitAction is the user's choice.
type ElicitAction string

// The actions of an answer.
const (
	// ElicitAccept: the user answered; Content holds the answer.
	ElicitAccept ElicitAction = "accept"
	// ElicitDecline: the user refused to answer.
	ElicitDecline ElicitAction = "decline"
	// ElicitCancel: the user dismissed the question without choosing.
	ElicitCancel ElicitAction = "cancel"
)

// ElicitResult is the user's answer.
type ElicitResult struct {
	Action ElicitAction
	// Content is the answer, for ElicitAccept: a value per property of
	// the requested schema.
	Content map[string]any
}

// onElicit answers an elicitation request.
func (s *Source) onElicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := req.Params
	if p == nil || (p.Mode != "" && p.Mode != "form") {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the client answers form elicitation only"}
	}
	if len(p.Message) > MaxElicitMessageBytes {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the message is longer than %d bytes", MaxElicitMessageBytes)}
	}
	er := &ElicitRequest{Message: p.Message}
	if p.RequestedSchema != nil {
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil || len(b) > MaxElicitSchemaBytes {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the requested schema is not JSON of at most %d bytes", MaxElicitSchemaBytes)}
		}
		er.Schema = b
	}
	var res ElicitResult
	err := s.protect("elicitation handler", func() (err error) {
		res, err = s.opts.Elicit(ctx, s.name, er)
		return err
	})
	if err != nil {
		s.logger.Warn("mcp elicitation failed", "err", err)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client could not ask the user"}
	}
	switch res.Action {
	case ElicitAccept:
	case ElicitDecline, ElicitCancel:
		res.Content = nil
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the client answered with action %q", res.Action)}
	}
	// The SDK checks accepted content against the schema and fills in its
	// defaults after this returns.
	return &sdk.ElicitResult{Action: string(res.Action), Content: res.Content}, nil
}
