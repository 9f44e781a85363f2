package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sink"
)

// toolJSON is one tool in the output of toolloop tools -json, a stable
// shape for scripts:
//
//	{"tools": [{"name": "read_file", "description": "...", "source": "builtin",
//	  "source_name": "workspace", "annotations": {"read_only": true},
//	  "input_schema": {...}, "exclusive": false}]}
//
// source is the kind of source (local, builtin, plugin, mcp) and
// source_name its name (an MCP server's name in the config); annotations
// holds only the flags that are set (title, read_only, destructive,
// idempotent, open_world, judgment_required); input_schema is the JSON
// Schema of the arguments. Tools are sorted by name. Fields may be added;
// none will be removed or change meaning.
type toolJSON struct {
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Source      toolloop.SourceKind  `json:"source"`
	SourceName  string               `json:"source_name"`
	Annotations toolloop.Annotations `json:"annotations"`
	InputSchema json.RawMessage      `json:"input_schema"`
	Exclusive   bool                 `json:"exclusive"`
}

// cmdTools is toolloop tools.
func cmdTools(ctx context.Context, e *env, args []string) error {
	var tf toolFlags
	var asJSON bool
	fs := newFlagSet(e, "tools", "[-C DIR] [-mcp FILE] [-json]")
	tf.register(fs)
	fs.BoolVar(&asJSON, "json", false, `print {"tools": [...]} as JSON (see the command's doc for the shape)`)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	t, err := openTools(ctx, e, tf)
	if err != nil {
		return err
	}
	defer t.close()
	infos := t.reg.Tools(ctx)
	out := make([]toolJSON, 0, len(infos))
	for _, ti := range infos {
		schema := ti.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, toolJSON{Name: ti.Name, Description: ti.Description, Source: ti.Source, SourceName: ti.SourceName,
			Annotations: ti.Annotations, InputSchema: schema, Exclusive: ti.Exclusive})
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"tools": out})
	}
	for _, ti := range out {
		src := string(ti.Source)
		if ti.SourceName != "" {
			src += "/" + ti.SourceName
		}
		fmt.Fprintf(e.stdout, "%s  [%s]%s\n", ti.Name, src, annotationList(ti.Annotations, ti.Exclusive))
		if d := strings.TrimSpace(firstLine(ti.Description)); d != "" {
			fmt.Fprintf(e.stdout, "    %s\n", clean(d))
		}
		fmt.Fprintf(e.stdout, "    schema: %s\n", clean(string(ti.InputSchema)))
	}
	return nil
}

func annotationList(a toolloop.Annotations, exclusive bool) string {
	var fl []string
	for _, x := range []struct {
		on   bool
		name string
	}{{a.ReadOnly, "read-only"}, {a.Destructive, "destructive"}, {a.Idempotent, "idempotent"},
		{a.OpenWorld, "open-world"}, {a.JudgmentRequired, "judgment-required"}, {exclusive, "exclusive"}} {
		if x.on {
			fl = append(fl, x.name)
		}
	}
	if len(fl) == 0 {
		return ""
	}
	return " " + strings.Join(fl, ", ")
}

// cmdCall is toolloop call.
func cmdCall(ctx context.Context, e *env, args []string) error {
	var tf toolFlags
	var yes, asJSON bool
	fs := newFlagSet(e, "call", "[-C DIR] [-mcp FILE] [-yes] [-json] NAME ARGS")
	tf.register(fs)
	fs.BoolVar(&yes, "yes", false, "approve the call if the guard asks, without asking")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON (a toolloop.ToolResult)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usagef("which tool? toolloop call NAME ARGS")
	case len(pos) == 1:
		pos = append(pos, "{}")
	case len(pos) > 2:
		return usagef("too many arguments: quote the JSON arguments as one (toolloop call NAME '{\"k\":\"v\"}')")
	}
	name, raw := pos[0], pos[1]
	var obj map[string]any
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
		return usagef("the arguments are not a JSON object: %s", clean(firstLine(raw)))
	}
	t, err := openTools(ctx, e, tf)
	if err != nil {
		return err
	}
	defer t.close()
	if _, ok := t.reg.Lookup(ctx, name); !ok {
		msg := fmt.Sprintf("unknown tool %q", name)
		if near := t.reg.Suggest(name); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, ", ") + "?"
		}
		return usagef("%s (toolloop tools lists them)", msg)
	}
	red := redactor(e.getenv)
	in := newLineReader(e.stdin)
	defer in.close()
	var term *terminal
	if e.tty || yes {
		term = newTerminal(e, in, t.reg, yes)
	}
	printer := sink.NewPrinter(e.stderr, &sink.PrinterOptions{Verbose: true})
	loop := loopFor(nil, t, term, red, func(ev toolloop.Event) { printer(red.RedactEvent(ev)) })
	runID := "call-" + time.Now().UTC().Format("20060102T150405.000")
	res, pending := loop.RunCall(ctx, runID, 1, toolloop.ToolCall{ID: "call_1", Name: name, Arguments: json.RawMessage(raw)}, nil)
	if pending != nil {
		return usagef("%s needs approval (%s): run toolloop call at a terminal, or with -yes", name, clean(pending.Reason))
	}
	res, _ = red.Result(res)
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else if res.IsError() {
		fmt.Fprintln(e.stdout, clean(res.Text()))
	} else {
		fmt.Fprintln(e.stdout, clean(res.Text()))
	}
	if res.IsError() {
		kind := toolloop.ErrorKind("error")
		if res.Error != nil {
			kind = res.Error.Kind
		}
		return fmt.Errorf("the call failed (%s)", kind)
	}
	return nil
}
