package codemode

import (
	"context"
	"testing"
)

// BenchmarkProgram is the cost of one program of a few tool calls: a
// fresh runtime, the prelude, compiling and running the code.
func BenchmarkProgram(b *testing.B) {
	f := newFake(map[string]toolFunc{"echo": echo})
	for b.Loop() {
		out, err := runProgram(context.Background(), f, Limits{}, `
const rs = await Promise.all([1, 2, 3].map(n => tools.echo({n})));
return rs.map(r => r.n).reduce((a, b) => a + b, 0)`)
		if err != nil || out.fail != nil || out.value != "6" {
			b.Fatalf("%v %v %q", err, out.fail, out.value)
		}
	}
}
