package anthropic

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/providers/internal/wire"
)

// NativeOutput implements [toolloop.NativeOutput]: it reports whether the
// model takes Request.Output as output_config.format, with or without
// tools (the API takes both in one request). Structured outputs are
// generally available for Claude 4.5 models and later (Haiku 4.5, Sonnet
// 4.5, Opus 4.5, Opus 4.6, Sonnet 4.6, ...), which this reads from the
// model's name, on the Claude API, Bedrock ("anthropic.claude-...") and
// Vertex AI ("claude-...@date"); for older models and names it cannot
// read, it is false and the loop asks for the answer through a tool.
func (m *Model) NativeOutput(withTools bool) bool {
	major, minor, ok := claudeVersion(m.cfg.Model)
	return ok && (major > 4 || major == 4 && minor >= 5)
}

// claudeVersion reads the version in a Claude model's name: 4.5 in
// "claude-sonnet-4-5-20250929", 4.0 in "claude-sonnet-4-20250514", 3.7
// in "claude-3-7-sonnet-latest", with any prefix before "claude-" (a
// Bedrock region and vendor) and a Vertex AI "@date".
func claudeVersion(model string) (major, minor int, ok bool) {
	_, rest, found := strings.Cut(strings.ToLower(model), "claude-")
	if !found {
		return 0, 0, false
	}
	var nums []int
	for tok := range strings.FieldsFuncSeq(rest, func(r rune) bool { return r == '-' || r == '@' }) {
		n, err := strconv.Atoi(tok)
		switch {
		case err == nil && len(tok) <= 2 && len(nums) < 2:
			nums = append(nums, n)
			continue
		case len(nums) == 0 && err != nil:
			continue // the family, before the version: "sonnet"
		}
		break // a date, a family after the version, a suffix
	}
	switch len(nums) {
	case 0:
		return 0, 0, false
	case 1:
		return nums[0], 0, true
	}
	return nums[0], nums[1], true
}

// outputFormat converts the request's output format to output_config's
// format, or returns an error, before anything is sent, for one the model
// cannot take (wrapping [ErrConfig]) or no request can carry: no schema,
// a schema that is not a JSON object.
func (m *Model) outputFormat(req *toolloop.Request) (sdk.JSONOutputFormatParam, error) {
	f := req.Output
	if !m.NativeOutput(len(req.Tools) > 0) {
		return sdk.JSONOutputFormatParam{}, fmt.Errorf("%w: model %q takes no structured output (Claude 4.5 and later do); without NativeOutput, ask for the answer through a tool",
			ErrConfig, m.cfg.Model)
	}
	key := wire.Key(f.Name, f.Description, string(f.Schema))
	o := m.outputs.Get(key, func() convertedOutput {
		name, schema, notes, err := wire.OutputSchema("anthropic", f)
		if err != nil {
			return convertedOutput{err: err}
		}
		notes = append(notes, fitSchema(schema, "#")...)
		for _, n := range notes {
			m.log.Debug("anthropic: output schema loosened for the API", "format", name, "change", n)
		}
		return convertedOutput{schema: schema}
	})
	return sdk.JSONOutputFormatParam{Schema: o.schema}, o.err
}

// convertedOutput is a converted output format, cached per format.
type convertedOutput struct {
	schema map[string]any
	err    error
}

// outputKeywords are the keywords structured outputs take, as the SDK's
// schema transform (BetaJSONSchemaOutputFormat) keeps them, with
// definitions beside $defs. Any other keyword moves into the
// description.
var outputKeywords = map[string]bool{
	"$ref": true, "$defs": true, "definitions": true,
	"type": true, "anyOf": true, "oneOf": true, "allOf": true,
	"description": true, "title": true, "enum": true, "const": true,
	"properties": true, "additionalProperties": true, "required": true,
	"items": true, "minItems": true, "format": true, "pattern": true,
}

// outputFormats are the string formats structured outputs take.
var outputFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// fitSchema rewrites, in place, what structured outputs refuse in a
// schema, by the rules of the SDK's own transform: a keyword it does not
// take (minimum, maxLength, ...), a string format it does not know and a
// minItems other than 0 or 1 move into the description, as
// "{keyword: value, ...}", so that the model still reads them; oneOf
// becomes anyOf; an object with properties gets additionalProperties:
// false, one with neither properties nor an additionalProperties schema
// becomes the empty object; $ref stands alone. Unlike the SDK's (which
// gives up on them), type lists such as ["string", "null"] are kept. The
// loop validates the answer against the schema as written, so nothing
// moved out of the way lets a wrong answer through. It returns what it
// changed.
func fitSchema(s map[string]any, path string) []string {
	if _, ok := s["$ref"]; ok {
		var notes []string
		for _, k := range wire.SortedKeys(s) {
			if k != "$ref" {
				delete(s, k)
				notes = append(notes, fmt.Sprintf("%s: dropped %s beside $ref", path, k))
			}
		}
		return notes
	}
	extras := map[string]any{}
	for k, v := range s {
		if !outputKeywords[k] {
			extras[k] = v
			delete(s, k)
		}
	}
	if f, ok := s["format"].(string); ok && hasType(s, "string") && !slices.Contains(outputFormats, f) {
		extras["format"] = f
		delete(s, "format")
	}
	if n, ok := s["minItems"].(float64); ok && n != 0 && n != 1 {
		extras["minItems"] = s["minItems"]
		delete(s, "minItems")
	}
	if alts, ok := s["oneOf"]; ok {
		if _, has := s["anyOf"]; !has {
			s["anyOf"] = alts
		} else {
			extras["oneOf"] = alts
		}
		delete(s, "oneOf")
	}
	var notes []string
	for _, k := range []string{"$defs", "definitions", "properties"} {
		if m, ok := s[k].(map[string]any); ok {
			for _, name := range wire.SortedKeys(m) {
				if sub, ok := m[name].(map[string]any); ok {
					notes = append(notes, fitSchema(sub, path+"/"+k+"/"+name)...)
				}
			}
		}
	}
	for _, k := range []string{"anyOf", "allOf"} {
		if l, ok := s[k].([]any); ok {
			for i, v := range l {
				if sub, ok := v.(map[string]any); ok {
					notes = append(notes, fitSchema(sub, fmt.Sprintf("%s/%s/%d", path, k, i))...)
				}
			}
		}
	}
	if sub, ok := s["items"].(map[string]any); ok {
		notes = append(notes, fitSchema(sub, path+"/items")...)
	}
	if hasType(s, "object") {
		_, hasProps := s["properties"]
		dict, isDict := s["additionalProperties"].(map[string]any)
		switch {
		case hasProps:
			if s["additionalProperties"] != false {
				s["additionalProperties"] = false
				notes = append(notes, path+": set additionalProperties to false")
			}
		case isDict:
			notes = append(notes, fitSchema(dict, path+"/additionalProperties")...)
		default:
			s["properties"] = map[string]any{}
			s["additionalProperties"] = false
			notes = append(notes, path+": an object without properties became the empty object")
		}
	}
	if len(extras) > 0 {
		keys := wire.SortedKeys(extras)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + extraValue(extras[k])
		}
		moved := "{" + strings.Join(parts, ", ") + "}"
		if d, _ := s["description"].(string); d != "" {
			moved = d + "\n\n" + moved
		}
		s["description"] = moved
		notes = append(notes, fmt.Sprintf("%s: moved %s into the description", path, strings.Join(keys, ", ")))
	}
	return notes
}

// hasType reports whether schema s allows type t, by its type keyword (a
// name or a list of names).
func hasType(s map[string]any, t string) bool {
	switch v := s["type"].(type) {
	case string:
		return v == t
	case []any:
		return slices.Contains(v, any(t))
	}
	return false
}

// extraValue renders a keyword's value for the description: a string as
// it is, anything else as JSON.
func extraValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
