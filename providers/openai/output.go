package openai

import (
	"fmt"
	"regexp"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// ErrConfig is the error, wrapped, of a call whose request the model's
// [Config] rules out: one with an output format (Request.Output) that
// the model cannot take as native structured output (see
// [Model.NativeOutput]). It is returned before anything is sent. It
// matches [providers.ErrConfig] too.
var ErrConfig = wire.ConfigError("openai: the request asks for what the model's config rules out")

// defaultOutputName names an output format that has no name.
const defaultOutputName = "final_answer"

// outputName is what the APIs accept as a format's name.
var outputName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// NativeOutput implements [toolloop.NativeOutput]: it reports whether
// the model takes Request.Output as response_format json_schema, with or
// without tools (the API takes both together). It is false with
// Config.NoNativeOutput, for models that predate Structured Outputs
// (gpt-3.5, gpt-4 and gpt-4-turbo, the first gpt-4o snapshot, o1-mini
// and o1-preview), and for DeepSeek's API, which takes json_object only;
// the loop then asks for the answer through a tool.
func (m *Model) NativeOutput(withTools bool) bool {
	return nativeOutput(&m.cfg, m.server)
}

// NativeOutput implements [toolloop.NativeOutput]: it reports whether
// the model takes Request.Output as text.format json_schema, by the same
// rules as [Model.NativeOutput].
func (m *ResponsesModel) NativeOutput(withTools bool) bool {
	return m.chat.NativeOutput(withTools)
}

// nativeOutput reports whether the model cfg names, behind server (see
// serverOf), takes a json_schema format.
func nativeOutput(cfg *Config, server string) bool {
	if cfg.NoNativeOutput {
		return false
	}
	if host, _, _ := strings.Cut(server, "/"); strings.Contains(host, "deepseek.com") {
		return false
	}
	name := strings.ToLower(cfg.Model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		// A gateway's "openai/gpt-4o".
		name = name[i+1:]
	}
	switch {
	case strings.HasPrefix(name, "gpt-3.5"), name == "gpt-4", strings.HasPrefix(name, "gpt-4-"),
		name == "gpt-4o-2024-05-13", strings.HasPrefix(name, "o1-mini"), strings.HasPrefix(name, "o1-preview"):
		return false
	}
	return true
}

// convertedOutput is a converted output format, cached per format.
type convertedOutput struct {
	name, description string
	schema            map[string]any
	// strict says whether strict mode can take the schema as it is.
	strict bool
	err    error
}

// output converts the request's output format, or returns an error, before
// anything is sent, for one that the model cannot take or that no request
// can carry: a name the API refuses, no schema, a schema that is not a
// JSON object.
func (m *Model) output(req *toolloop.Request) (convertedOutput, error) {
	f := req.Output
	if !m.NativeOutput(len(req.Tools) > 0) {
		return convertedOutput{}, fmt.Errorf("%w: model %q takes no json_schema output format; without NativeOutput, ask for the answer through a tool",
			ErrConfig, m.cfg.Model)
	}
	name := f.Name
	if name == "" {
		name = defaultOutputName
	}
	key := wire.Key(name, f.Description, string(f.Schema))
	o := m.outputs.Get(key, func() convertedOutput {
		switch {
		case !outputName.MatchString(name):
			return convertedOutput{err: fmt.Errorf("openai: output format name %q is not 1 to 64 of a-z, A-Z, 0-9, _ and -", name)}
		case len(f.Schema) == 0 || string(f.Schema) == "null":
			return convertedOutput{err: fmt.Errorf("openai: output format %s has no schema", name)}
		}
		schema, notes, err := wire.ObjectSchema(f.Schema)
		if err != nil {
			return convertedOutput{err: fmt.Errorf("openai: output format %s: %w", name, err)}
		}
		for _, n := range notes {
			m.log.Debug("openai: output schema loosened for the API", "format", name, "change", n)
		}
		why := strictProblem(schema)
		if len(notes) > 0 {
			why = "the schema was loosened for the API: " + notes[0]
		}
		if why != "" {
			m.log.Debug("openai: output format sent without strict mode", "format", name, "reason", why)
		}
		return convertedOutput{name: name, description: f.Description, schema: schema, strict: why == ""}
	})
	return o, o.err
}

// chatFormat is o as Chat Completions' response_format.
func (o *convertedOutput) chatFormat() oai.ChatCompletionNewParamsResponseFormatUnion {
	js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: o.name, Schema: o.schema, Strict: oai.Bool(o.strict)}
	if o.description != "" {
		js.Description = oai.String(o.description)
	}
	return oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
}

// responsesFormat is o as the Responses API's text.format.
func (o *convertedOutput) responsesFormat() responses.ResponseFormatTextConfigUnionParam {
	js := &responses.ResponseFormatTextJSONSchemaConfigParam{Name: o.name, Schema: o.schema, Strict: oai.Bool(o.strict)}
	if o.description != "" {
		js.Description = oai.String(o.description)
	}
	return responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: js}
}
