package eval_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/toolloop/toolloop/eval"
)

// FuzzReadDataset: any input is read as cases or refused with a line
// error; it never panics, and every case it accepts has an ID and input.
func FuzzReadDataset(f *testing.F) {
	seed, err := os.ReadFile("testdata/weather.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(goodDataset))
	f.Add([]byte(`{"id": "a", "prompt": "x", "expect": [{"type": "output", "equal": {"/a/0": 1}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := eval.ReadDataset(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, c := range cases {
			if c.ID == "" || len(c.Input()) == 0 {
				t.Fatalf("accepted a case without ID or input: %+v", c)
			}
		}
	})
}

// FuzzMatchJSON: a value always matches itself, and matching never
// panics.
func FuzzMatchJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":null}]}`), []byte(`{"a":[1.0,{"b":null,"c":2}]}`))
	f.Add([]byte(`1e400`), []byte(`"x"`))
	f.Fuzz(func(t *testing.T, want, got []byte) {
		eval.MatchJSON(want, got)
		if json.Valid(want) && !eval.MatchJSON(want, want) {
			t.Fatalf("%s does not match itself", want)
		}
	})
}
