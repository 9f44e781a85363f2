package gemini

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// ErrConfig is the error, wrapped, of a call whose request the model's
// [Config] rules out: one with an output format (Request.Output) that
// the model cannot take as native structured output, at all or beside
// tools (see [Model.NativeOutput]). It is returned before anything is
// sent. It matches [providers.ErrConfig] too.
var ErrConfig = wire.ConfigError("gemini: the request asks for what the model's config rules out")

// jsonMIMEType is the responseMimeType of structured output.
const jsonMIMEType = "application/json"

// NativeOutput implements [toolloop.NativeOutput]: it reports whether the
// model takes Request.Output as responseJsonSchema. Gemini 2.5 and later
// do; beside function declarations, only Gemini 3 and later do (the
// API's structured output documentation: structured outputs with tools
// are for the Gemini 3 series). The version is read from the model's
// name ("gemini-2.5-flash", "gemini-3-pro-preview", with any
// "models/..." or Vertex AI "publishers/google/models/..." prefix); for
// other names (aliases such as "gemini-flash-latest", tuned models,
// Gemma) it is false, and the loop asks for the answer through a tool.
func (m *Model) NativeOutput(withTools bool) bool {
	major, minor, ok := geminiVersion(m.cfg.Model)
	if !ok {
		return false
	}
	if withTools {
		return major >= 3
	}
	return major > 2 || major == 2 && minor >= 5
}

// geminiVersion reads the version in a Gemini model's name: 2.5 in
// "gemini-2.5-flash", 3.0 in "gemini-3-pro-preview".
func geminiVersion(model string) (major, minor int, ok bool) {
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	rest, found := strings.CutPrefix(name, "gemini-")
	if !found {
		return 0, 0, false
	}
	ver, _, _ := strings.Cut(rest, "-")
	majText, minText, hasMinor := strings.Cut(ver, ".")
	major, err := strconv.Atoi(majText)
	if err != nil || major < 0 {
		return 0, 0, false
	}
	if hasMinor {
		if minor, err = strconv.Atoi(minText); err != nil || minor < 0 {
			return 0, 0, false
		}
	}
	return major, minor, true
}

// convertedOutput is a converted output format, cached per format.
type convertedOutput struct {
	schema map[string]any
	err    error
}

// output sets the request's output format in config (responseMimeType
// application/json and responseJsonSchema), or returns an error, before
// anything is sent, for one the model cannot take (wrapping [ErrConfig])
// or no request can carry: no schema, a schema that is not a JSON
// object.
func (m *Model) output(req *toolloop.Request, config *genai.GenerateContentConfig) error {
	f := req.Output
	if !m.NativeOutput(len(req.Tools) > 0) {
		what := "structured output"
		if len(req.Tools) > 0 {
			what = "structured output beside tools (Gemini 3 and later do)"
		}
		return fmt.Errorf("%w: model %q takes no %s; without NativeOutput, ask for the answer through a tool", ErrConfig, m.cfg.Model, what)
	}
	key := wire.Key(f.Name, f.Description, string(f.Schema))
	o := m.outputs.Get(key, func() convertedOutput {
		name, schema, notes, err := wire.OutputSchema("gemini", f)
		if err != nil {
			return convertedOutput{err: err}
		}
		notes = append(notes, cleanSchema(schema)...)
		for _, n := range notes {
			m.log.Debug("gemini: output schema loosened for the API", "format", name, "change", n)
		}
		return convertedOutput{schema: schema}
	})
	if o.err != nil {
		return o.err
	}
	config.ResponseMIMEType = jsonMIMEType
	config.ResponseJsonSchema = o.schema
	return nil
}
