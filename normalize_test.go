package toolloop_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop"
)

func TestRepairArguments(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// want is the repaired arguments, compared as JSON when valid.
		want    string
		repairs int
	}{
		{"fence with info string", "```json\n{\"a\":1}\n```", `{"a":1}`, 1},
		{"fence with capitalized info", "```JSON\n{\"a\":1}\n```", `{"a":1}`, 1},
		{"fence without info string", "```\n{\"a\":1}\n```", `{"a":1}`, 1},
		{"fence on one line", "```{\"a\":1}```", `{"a":1}`, 1},
		{"fence with surrounding space", "  \n```json\n  {\"a\": [1, 2]}  \n```\n ", `{"a":[1,2]}`, 1},
		{"trailing comma in object", `{"a":1,}`, `{"a":1}`, 1},
		{"trailing comma in array", `{"a":[1,2,]}`, `{"a":[1,2]}`, 1},
		{"trailing commas nested", `{"a":{"b":[1,{"c":2,},],},}`, `{"a":{"b":[1,{"c":2}]}}`, 1},
		{"trailing comma before whitespace", "{\"a\":1 ,\n\t }", `{"a":1}`, 1},
		{"commas inside strings untouched", `{"a":"x,}","b":[",]"],}`, `{"a":"x,}","b":[",]"]}`, 1},
		{"escaped quotes in strings", `{"a":"say \"hi,}\"","b":"\\",}`, `{"a":"say \"hi,}\"","b":"\\"}`, 1},
		{"JSON sent as a string", `"{\"a\":1,\"b\":\"x\"}"`, `{"a":1,"b":"x"}`, 1},
		{"JSON string with space", `" {\"a\":1} "`, `{"a":1}`, 1},
		{"fence and trailing comma", "```json\n{\"a\":1,}\n```", `{"a":1}`, 2},
		{"fence around a JSON string", "```\n\"{\\\"a\\\":1}\"\n```", `{"a":1}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, repairs := toolloop.RepairArguments(json.RawMessage(tt.in))
			assert.Len(t, repairs, tt.repairs, "repairs: %q", repairs)
			for _, r := range repairs {
				assert.NotEmpty(t, r)
			}
			if assert.True(t, json.Valid(got), "repaired arguments are not JSON: %q", got) {
				assert.JSONEq(t, tt.want, string(got))
			}
		})
	}
}

func TestRepairArgumentsNothingToFix(t *testing.T) {
	for _, in := range []string{
		`{"a":1}`,
		`  {"a":1}  `,
		`{"a":"x,}","b":[1,2]}`,
		`{}`,
		`"just a string"`,
		`"[1,2]"`,        // a string holding an array: only objects are decoded
		`"{\"a\":"`,      // a string holding broken JSON
		`[1,2]`,          // not an object, but nothing to fix
		`not json`,       // garbage stays garbage
		`{"a":`,          // truncated: nothing a repair may guess
		`{a:1}`,          // unquoted keys are not fixed
		`{'a':1}`,        // nor single quotes
		`{"a":1}} `,      // nor stray brackets
		"``",             // too short to be a fence
		"```",            // a lone fence
		"{\"a\":1}\n```", // half a fence
		``,
	} {
		t.Run(in, func(t *testing.T) {
			got, repairs := toolloop.RepairArguments(json.RawMessage(in))
			assert.Empty(t, repairs)
			assert.Equal(t, in, string(got), "unchanged, byte for byte")
		})
	}
}

// A repair is recorded even when the result is still not JSON; validation
// then reports the error to the model.
func TestRepairArgumentsGarbageInsideFence(t *testing.T) {
	got, repairs := toolloop.RepairArguments(json.RawMessage("```\nnot json\n```"))
	assert.Len(t, repairs, 1)
	assert.Equal(t, "not json", string(got))
	assert.False(t, json.Valid(got))
}

// The repairer must not alter the caller's bytes.
func TestRepairArgumentsDoesNotModifyInput(t *testing.T) {
	in := []byte(`{"a":[1,2,],"b":"c",}`)
	orig := string(in)
	_, repairs := toolloop.RepairArguments(in)
	assert.NotEmpty(t, repairs)
	assert.Equal(t, orig, string(in))
}
