package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/eval"
)

// evalFrom is toolloop eval -from LOG: the recorded run as a case of a
// dataset, appended to dataset (or printed when it is empty).
func evalFrom(e *env, logPath, dataset string) error {
	rp, err := readLog(e, logPath)
	if err != nil {
		return err
	}
	c, err := caseFromRun(rp.RunID, rp.Transcript())
	if err != nil {
		return usagef("%s: %v", logPath, err)
	}
	if dataset == "" {
		return eval.WriteDataset(e.stdout, []eval.Case{c})
	}
	var prev []byte
	if b, err := os.ReadFile(dataset); err == nil {
		cases, err := eval.ReadDataset(bytes.NewReader(b))
		if err != nil {
			return datasetError(dataset, err)
		}
		if slices.ContainsFunc(cases, func(o eval.Case) bool { return o.ID == c.ID }) {
			return usagef("%s has a case %q already", dataset, c.ID)
		}
		prev = b
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var b bytes.Buffer
	if len(prev) > 0 && prev[len(prev)-1] != '\n' {
		b.WriteByte('\n')
	}
	if err := eval.WriteDataset(&b, []eval.Case{c}); err != nil {
		return err
	}
	f, err := os.OpenFile(dataset, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "toolloop: added case %s to %s\n", clean(c.ID), dataset)
	return nil
}

// caseFromRun makes a case of a run: its input (the messages before the
// model's first turn: a system prompt, then the prompt or the messages)
// and, as its expectation, the tools it called in order (in_order, so a
// model may call more between them), or no tool if it called none. The
// final text is not pinned: a model words its answer differently each
// time.
func caseFromRun(runID string, msgs []toolloop.Message) (eval.Case, error) {
	if runID == "" {
		return eval.Case{}, errors.New("the log has no run ID")
	}
	first := slices.IndexFunc(msgs, func(m toolloop.Message) bool { return m.Role == toolloop.RoleAssistant })
	if first < 0 {
		return eval.Case{}, errors.New("the run has no model turn")
	}
	c := eval.Case{ID: runID}
	input := msgs[:first]
	if len(input) > 0 && input[0].Role == toolloop.RoleSystem {
		c.System = input[0].Text()
		input = input[1:]
	}
	if len(input) == 1 && input[0].Role == toolloop.RoleUser && isText(input[0]) {
		c.Prompt = input[0].Text()
	} else {
		c.Messages = slices.Clone(input)
	}
	if c.Prompt == "" && len(c.Messages) == 0 {
		return eval.Case{}, errors.New("the run has no input before the model's first turn")
	}
	var tools []string
	for _, m := range msgs[first:] {
		for _, tc := range m.ToolCalls {
			tools = append(tools, tc.Name)
		}
	}
	var (
		exp eval.Expectation
		err error
	)
	if len(tools) > 0 {
		exp, err = eval.NewExpectation("trajectory", map[string]any{"tools": tools, "mode": eval.InOrder})
	} else {
		exp, err = eval.NewExpectation("no_tool_called", nil)
	}
	if err != nil {
		return eval.Case{}, err
	}
	c.Expect = []eval.Expectation{exp}
	return c, nil
}

// isText reports that m holds text alone.
func isText(m toolloop.Message) bool {
	for _, p := range m.Content {
		if p.Type != toolloop.ContentText {
			return false
		}
	}
	return len(m.ToolCalls) == 0 && m.Text() != ""
}
