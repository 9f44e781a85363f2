package sink

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/toolloop/toolloop"
)

// TranscriptOptions configures [FormatTranscript]. The zero value, like a
// nil *TranscriptOptions, is the documented default of every field.
type TranscriptOptions struct {
	// Color says when to colour the output; the zero value colours it only
	// on a terminal, and never when NO_COLOR is set (see [ColorAuto]).
	Color Color
	// MaxBlockBytes bounds each block (a text, a result, a call's
	// arguments); 0 means 2048. A longer block keeps its first two thirds
	// and its last third (where errors usually are) around a line that
	// says how much was left out.
	MaxBlockBytes int
	// HideReasoning leaves out the text of reasoning blocks.
	HideReasoning bool
}

// FormatTranscript writes msgs for a person to read: each message under a
// header that names its role (and, for an assistant turn, its model, stop
// reason and tokens; for a tool result, the tool, the call ID and the
// status), followed by its blocks indented: text, reasoning under a "┊"
// margin, a line per tool call with its arguments as JSON, JSON blocks
// indented, and a bracketed label for images, audio and resources. For
// example:
//
//	user
//	  What is in main.go?
//
//	assistant (stop: tool_use)
//	  → read_file [c1] {"path":"main.go"}
//
//	tool read_file [c1]: ok
//	  package main
//
// Every block is bounded by MaxBlockBytes and cleaned of terminal
// controls, so a transcript from an untrusted source prints safely. It
// returns the first error from w, and writes nothing more after it.
func FormatTranscript(w io.Writer, msgs []toolloop.Message, opts *TranscriptOptions) error {
	var o TranscriptOptions
	if opts != nil {
		o = *opts
	}
	o.MaxBlockBytes = orInt(o.MaxBlockBytes, 2048)
	f := transcriptFormatter{o: o, c: palette{on: useColor(o.Color, w)}}
	for i := range msgs {
		f.buf = f.buf[:0]
		if i > 0 {
			f.buf = append(f.buf, '\n')
		}
		f.message(&msgs[i])
		if _, err := w.Write(f.buf); err != nil {
			return err
		}
	}
	return nil
}

type transcriptFormatter struct {
	o   TranscriptOptions
	c   palette
	buf []byte
}

func (f *transcriptFormatter) message(m *toolloop.Message) {
	switch m.Role {
	case toolloop.RoleTool:
		f.resultHeader(m.Result)
		if m.Result != nil {
			f.blocks(m.Result.Content)
		}
		return
	case toolloop.RoleAssistant:
		f.buf = f.c.add(f.buf, sgrBold+";"+sgrGreen, string(m.Role))
		if meta := turnMeta(m); meta != "" {
			f.buf = append(f.buf, ' ')
			f.buf = f.c.add(f.buf, sgrDim, "("+meta+")")
		}
	case toolloop.RoleUser:
		f.buf = f.c.add(f.buf, sgrBold+";"+sgrCyan, string(m.Role))
	default:
		f.buf = f.c.add(f.buf, sgrBold, orRole(m.Role))
	}
	f.buf = append(f.buf, '\n')
	f.blocks(m.Content)
	for _, tc := range m.ToolCalls {
		f.buf = append(f.buf, "  "...)
		f.buf = f.c.add(f.buf, sgrBold, "→ "+tc.Name)
		f.buf = f.c.add(f.buf, sgrDim, " ["+tc.ID+"]")
		f.buf = append(f.buf, ' ')
		f.buf = f.c.add(f.buf, sgrCyan, f.args(tc.Arguments))
		f.buf = append(f.buf, '\n')
	}
}

func orRole(r toolloop.Role) string {
	if r == "" {
		return "(no role)"
	}
	return string(r)
}

// turnMeta describes an assistant turn: model, stop reason, tokens.
func turnMeta(m *toolloop.Message) string {
	var parts []string
	if m.Model != "" {
		parts = append(parts, m.Model)
	}
	if m.StopReason != "" {
		parts = append(parts, "stop: "+string(m.StopReason))
	}
	if u := m.Usage; u != nil && u.InputTokens+u.OutputTokens > 0 {
		parts = append(parts, strconv.FormatInt(u.InputTokens, 10)+" tokens in, "+strconv.FormatInt(u.OutputTokens, 10)+" out")
	}
	return strings.Join(parts, ", ")
}

func (f *transcriptFormatter) resultHeader(r *toolloop.ToolResult) {
	f.buf = f.c.add(f.buf, sgrBold+";"+sgrYellow, "tool")
	if r == nil {
		f.buf = append(f.buf, " (no result)\n"...)
		return
	}
	f.buf = append(f.buf, ' ')
	f.buf = f.c.add(f.buf, sgrBold, r.Name)
	f.buf = f.c.add(f.buf, sgrDim, " ["+r.CallID+"]")
	f.buf = append(f.buf, ": "...)
	if r.IsError() {
		status := string(r.Status)
		if r.Error != nil {
			status += " (" + string(r.Error.Kind) + ")"
		}
		f.buf = f.c.add(f.buf, sgrRed, status)
	} else {
		f.buf = f.c.add(f.buf, sgrGreen, string(r.Status))
	}
	var notes []string
	if r.Meta.Truncated {
		notes = append(notes, "truncated from "+sizeOf(r.Meta.Bytes))
	}
	if r.Meta.Cleared {
		notes = append(notes, "cleared")
	}
	if len(notes) > 0 {
		f.buf = append(f.buf, ' ')
		f.buf = f.c.add(f.buf, sgrDim, "["+strings.Join(notes, ", ")+"]")
	}
	f.buf = append(f.buf, '\n')
}

// blocks writes content blocks, indented.
func (f *transcriptFormatter) blocks(cs []toolloop.Content) {
	for _, c := range cs {
		switch c.Type {
		case toolloop.ContentText:
			f.text("  ", "", c.Text)
		case toolloop.ContentReasoning:
			if f.o.HideReasoning {
				continue
			}
			if c.Text == "" {
				f.text("  "+reasonMark, sgrDim, "(reasoning withheld)")
				continue
			}
			f.text("  "+reasonMark, sgrDim, c.Text)
		case toolloop.ContentJSON:
			f.text("  ", "", prettyJSON(c.JSON, f.o.MaxBlockBytes))
		default:
			f.text("  ", sgrDim, blockLabel(c))
			if c.Text != "" {
				f.text("  ", "", c.Text)
			}
		}
	}
}

// text writes s line by line under prefix, bounded to MaxBlockBytes: its
// head and its tail around a line that counts what was left out.
func (f *transcriptFormatter) text(prefix, sgr, s string) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return
	}
	max := f.o.MaxBlockBytes
	if len(s) <= max {
		f.lines(prefix, sgr, s)
		return
	}
	head, _ := clip(s, max*2/3)
	tail := clipTail(s, max-len(head))
	f.lines(prefix, sgr, head)
	f.buf = append(f.buf, prefix...)
	f.buf = f.c.add(f.buf, sgrDim, "… "+sizeOf(len(s)-len(head)-len(tail))+" left out …")
	f.buf = append(f.buf, '\n')
	f.lines(prefix, sgr, tail)
}

func (f *transcriptFormatter) lines(prefix, sgr, s string) {
	for {
		line, rest, more := strings.Cut(s, "\n")
		if strings.TrimSpace(line) == "" {
			f.buf = append(f.buf, strings.TrimRight(prefix, " ")...)
		} else {
			f.buf = append(f.buf, prefix...)
			f.buf = f.c.add(f.buf, sgr, line)
		}
		f.buf = append(f.buf, '\n')
		if !more {
			return
		}
		s = rest
	}
}

// args renders a call's arguments on one line: compact JSON, or the raw
// text if it is not JSON, bounded.
func (f *transcriptFormatter) args(raw json.RawMessage) string {
	var s string
	var c bytes.Buffer
	if len(raw) <= argScan && json.Compact(&c, raw) == nil {
		s = c.String()
	} else {
		s = string(raw)
	}
	if s == "" {
		s = "{}"
	}
	s, cut := clip(s, f.o.MaxBlockBytes)
	if cut > 0 {
		s += "… (" + sizeOf(cut) + " more)"
	}
	return s
}

// prettyJSON indents a JSON block that is small enough to indent cheaply.
func prettyJSON(raw json.RawMessage, max int) string {
	if len(raw) <= 4*max {
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") == nil {
			return b.String()
		}
	}
	return string(raw)
}
