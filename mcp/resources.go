package mcp

import (
	"context"
	"errors"
	"fmt"
	"iter"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolloop/toolloop"
)

// MaxListItems bounds the items one listing of resources, resource
// templates or prompts yields; a server that lists more ends the listing
// with [ErrTooManyItems]. Each page is a message, bounded as any
// (see [Options.MaxOutputBytes]).
const MaxListItems = 10000

// maxURI bounds a resource URI we accept from a caller or a server.
const maxURI = 8 << 10

// ErrTooManyItems ends a listing that goes past [MaxListItems].
var ErrTooManyItems = errors.New("mcp: the server lists too many items")

// Resources lists the server's resources, page by page, connecting if
// need be. An error ends the listing: yielded with a nil resource, it is
// a failure of the request (a *toolloop.ToolError of kind
// execution_failed, as a failed call's), or ctx's error, or
// [ErrTooManyItems], or [ErrClosed].
func (s *Source) Resources(ctx context.Context) iter.Seq2[*sdk.Resource, error] {
	return listing(s, ctx, "the resource listing", func(cs *sdk.ClientSession) iter.Seq2[*sdk.Resource, error] {
		return cs.Resources(ctx, nil)
	})
}

// ResourceTemplates lists the server's resource templates (URI templates
// of resources it can read), as [Source.Resources] lists resources.
func (s *Source) ResourceTemplates(ctx context.Context) iter.Seq2[*sdk.ResourceTemplate, error] {
	return listing(s, ctx, "the resource template listing", func(cs *sdk.ClientSession) iter.Seq2[*sdk.ResourceTemplate, error] {
		return cs.ResourceTemplates(ctx, nil)
	})
}

// Prompts lists the server's prompts, as [Source.Resources] lists
// resources.
func (s *Source) Prompts(ctx context.Context) iter.Seq2[*sdk.Prompt, error] {
	return listing(s, ctx, "the prompt listing", func(cs *sdk.ClientSession) iter.Seq2[*sdk.Prompt, error] {
		return cs.Prompts(ctx, nil)
	})
}

func listing[T any](s *Source, ctx context.Context, what string, list func(*sdk.ClientSession) iter.Seq2[*T, error]) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		sess, err := s.request(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		n := 0
		for item, err := range list(sess.cs) {
			if err != nil {
				yield(nil, s.callError(ctx, sess, what, err, false))
				return
			}
			if n++; n > MaxListItems {
				yield(nil, ErrTooManyItems)
				return
			}
			if item != nil && !yield(item, nil) {
				return
			}
		}
	}
}

// request returns the session for a request of the Go API, as a call
// gets it.
func (s *Source) request(ctx context.Context) (*session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sess, err := s.session(ctx, false)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, ErrClosed):
			return nil, ErrClosed
		}
		return nil, toolloop.Errorf(toolloop.KindExecutionFailed, "MCP %v", err)
	}
	return sess, nil
}

// ReadResource reads a resource of the server. Each of its contents is a
// block of type resource, with its URI, MIME type, and text or bytes. The
// text is cut to [Options.MaxOutputBytes] in all (first come, first
// served, each cut in the middle as the loop cuts), and bytes beyond
// [Options.MaxBinaryBytes] in all are left out, with a text block saying
// so. Errors are as [Source.Resources]'s.
func (s *Source) ReadResource(ctx context.Context, uri string) ([]toolloop.Content, error) {
	return s.readResource(ctx, uri, s.textBudget(0))
}

func (s *Source) readResource(ctx context.Context, uri string, budget int) ([]toolloop.Content, error) {
	if uri == "" || len(uri) > maxURI {
		return nil, fmt.Errorf("mcp: resource URI of %d bytes: want 1 to %d", len(uri), maxURI)
	}
	sess, err := s.request(ctx)
	if err != nil {
		return nil, err
	}
	res, err := sess.cs.ReadResource(withBudget(ctx, budget), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, s.callError(ctx, sess, fmt.Sprintf("reading %q", uri), err, false)
	}
	text, bin := budget, orInt(s.opts.MaxBinaryBytes, DefaultMaxBinaryBytes)
	out := make([]toolloop.Content, 0, len(res.Contents))
	left := 0
	for _, rc := range res.Contents {
		if rc == nil {
			continue
		}
		c := toolloop.Content{Type: toolloop.ContentResource, URI: rc.URI, MIMEType: rc.MIMEType}
		switch {
		case len(rc.Blob) > 0:
			if n := (len(rc.Blob) + 2) / 3 * 4; n <= bin {
				bin -= n
				c.Data = rc.Blob
			} else {
				left++
				continue
			}
		case rc.Text != "":
			if len(rc.Text) > text {
				c.Text = toolloop.TruncateText(rc.Text, max(text, markerRoom))
				text = 0
			} else {
				c.Text = rc.Text
				text -= len(rc.Text)
			}
		}
		out = append(out, c)
	}
	if left > 0 {
		out = append(out, toolloop.TextContent(fmt.Sprintf(
			"[... %d of %d contents left out: their data does not fit the %d-byte limit ...]", left, len(res.Contents), orInt(s.opts.MaxBinaryBytes, DefaultMaxBinaryBytes))))
	}
	return out, nil
}

// markerRoom is the least a cut text keeps: room for the cut's marker.
const markerRoom = 128

// Subscribe asks the server to report changes to the resource at uri:
// each comes to [Options.OnEvent] as an [EventResourceUpdated] event. The
// subscription is renewed when the server restarts, until Unsubscribe.
// The server must support subscriptions; errors are as
// [Source.Resources]'s.
func (s *Source) Subscribe(ctx context.Context, uri string) error {
	if uri == "" || len(uri) > maxURI {
		return fmt.Errorf("mcp: resource URI of %d bytes: want 1 to %d", len(uri), maxURI)
	}
	sess, err := s.request(ctx)
	if err != nil {
		return err
	}
	if err := sess.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		return s.callError(ctx, sess, fmt.Sprintf("subscribing to %q", uri), err, false)
	}
	s.cl.mu.Lock()
	if s.cl.subs == nil {
		s.cl.subs = make(map[string]bool)
	}
	s.cl.subs[uri] = true
	s.cl.mu.Unlock()
	return nil
}

// Unsubscribe ends a subscription made with [Source.Subscribe]. The
// source forgets it even if the server cannot be told.
func (s *Source) Unsubscribe(ctx context.Context, uri string) error {
	s.cl.mu.Lock()
	delete(s.cl.subs, uri)
	s.cl.mu.Unlock()
	sess, err := s.request(ctx)
	if err != nil {
		return err
	}
	if err := sess.cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		return s.callError(ctx, sess, fmt.Sprintf("unsubscribing from %q", uri), err, false)
	}
	return nil
}

// GetPrompt gets a prompt of the server, filled in with args, as messages
// for a transcript: text, images, audio and resources become their
// blocks, cut as a tool result's are (see [Source.ReadResource]). Errors
// are as [Source.Resources]'s.
func (s *Source) GetPrompt(ctx context.Context, name string, args map[string]string) ([]toolloop.Message, error) {
	sess, err := s.request(ctx)
	if err != nil {
		return nil, err
	}
	budget := s.textBudget(0)
	res, err := sess.cs.GetPrompt(withBudget(ctx, budget), &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, s.callError(ctx, sess, fmt.Sprintf("getting prompt %q", name), err, false)
	}
	var roles []toolloop.Role
	var blocks []toolloop.Content
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		if c, ok := convertContent(m.Content); ok {
			role := toolloop.RoleUser
			if m.Role == "assistant" {
				role = toolloop.RoleAssistant
			}
			roles, blocks = append(roles, role), append(blocks, c)
		}
	}
	if cut, _ := toolloop.TruncateContent(blocks, budget); len(cut) == len(blocks) {
		blocks = cut
	}
	var msgs []toolloop.Message
	for i, c := range blocks {
		if n := len(msgs); n > 0 && msgs[n-1].Role == roles[i] {
			msgs[n-1].Content = append(msgs[n-1].Content, c)
			continue
		}
		msgs = append(msgs, toolloop.Message{Role: roles[i], Content: []toolloop.Content{c}})
	}
	return msgs, nil
}
