package providertest

import (
	"encoding/json"
	"testing"

	"github.com/toolloop/toolloop"
)

// badFormats are output formats without an object schema.
var badFormats = []struct {
	name   string
	format toolloop.OutputFormat
}{
	{"no schema", toolloop.OutputFormat{Name: "report"}},
	{"null schema", toolloop.OutputFormat{Schema: json.RawMessage(`null`)}},
	{"schema not an object", toolloop.OutputFormat{Schema: json.RawMessage(`["a"]`)}},
}

// outputs checks structured answers to Request.Output, where the model
// takes it, and that it fails before sending where it does not.
func (r *runner) outputs(t *testing.T) {
	alone, withTools := r.native, r.nativeTools
	for _, c := range []struct {
		name         string
		tools, taken bool
	}{{"not_taken", false, alone}, {"not_taken_with_tools", true, withTools}} {
		if !c.taken {
			t.Run(c.name, func(t *testing.T) {
				srv, m := r.serve(t, 0)
				r.failsBeforeSending(t, srv, m, outputRequest(reportFormat, c.tools), true)
			})
		}
	}
	if !alone {
		t.Log("providertest: the model takes no Request.Output (see toolloop.NativeOutput): no structured answers checked")
		return
	}
	t.Run("output_format", func(t *testing.T) { r.each(t, turnOutput, outputRequest(reportFormat, false), "output_format") })
	if withTools {
		t.Run("output_format_tools", func(t *testing.T) { r.each(t, turnOutput, outputRequest(reportFormat, true), "output_format_tools") })
	}
	if r.streams {
		t.Run("output_format_stream", func(t *testing.T) {
			r.each(t, turnStreamOutput, outputRequest(reportFormat, withTools), "output_format_stream")
		})
	}
	if !r.h.Lacks.Refusal {
		t.Run("refusal", func(t *testing.T) { r.each(t, turnRefusal, outputRequest(reportFormat, false), "") })
	}
	for _, bf := range badFormats {
		t.Run(bf.name, func(t *testing.T) {
			srv, m := r.serve(t, 0)
			r.failsBeforeSending(t, srv, m, outputRequest(bf.format, withTools), false)
		})
	}
}
