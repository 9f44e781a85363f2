package taskbench

import (
	"testing"
)

func TestStripMarkers(t *testing.T) {
	in := `{"a":[{"text":"x","cache_control":{"type":"ephemeral"}},{"cache_control":{"type":"ephemeral","ttl":"1h"},"text":"y \"cache_control\":"},{"text":"z"}]}`
	out, bps := stripMarkers([]byte(in))
	want := `{"a":[{"text":"x"},{"text":"y \"cache_control\":"},{"text":"z"}]}`
	if string(out) != want {
		t.Fatalf("stripped:\n got %s\nwant %s", out, want)
	}
	first := len(`{"a":[{"text":"x"}`)
	second := len(`{"a":[{"text":"x"},{"text":"y \"cache_control\":"}`)
	if len(bps) != 2 || bps[0] != first || bps[1] != second {
		t.Errorf("breakpoints at %v, want [%d %d]", bps, first, second)
	}
}

func TestPromptOrder(t *testing.T) {
	got, err := promptOrder([]byte(` {"messages":[1, {"k":"}"}],"model":"m", "tools" : [2],"max":4096 }`), []string{"tools", "messages"})
	if err != nil {
		t.Fatal(err)
	}
	want := "max=4096\nmodel=\"m\"\ntools=[2]\nmessages=[1, {\"k\":\"}\"}]\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := promptOrder([]byte(`[1]`), nil); err == nil {
		t.Error("an array is not a request")
	}
}

func TestImplicitCache(t *testing.T) {
	c := implicitCache{min: 1024, block: 128}
	for _, tc := range []struct {
		lcp  int
		want int64
	}{{0, 0}, {4 * 1023, 0}, {4 * 1024, 1024}, {4*1024 + 4*127, 1024}, {4 * 1152, 1152}} {
		if read, write := c.cached(tc.lcp, nil, nil); read != tc.want || write != 0 {
			t.Errorf("a prefix of %d bytes reads %d and writes %d tokens, want %d and 0", tc.lcp, read, write, tc.want)
		}
	}
}

func TestBreakpointCache(t *testing.T) {
	c := breakpointCache{min: 1024}
	const k = 4 * 1024 // bytes of the minimum
	for _, tc := range []struct {
		name                string
		lcp                 int
		prev, cur           []int
		wantRead, wantWrite int64
	}{
		{"no breakpoints", 10 * k, []int{k}, nil, 0, 0},
		{"first request", 0, nil, []int{2 * k}, 0, 2048},
		{"reads the previous last breakpoint", 3 * k, []int{k, 2 * k}, []int{k, 3 * k}, 2048, 1024},
		{"the prefix differs before the last breakpoint", 2*k - 1, []int{k, 2 * k}, []int{k, 3 * k}, 1024, 2048},
		{"under the minimum", k - 4, []int{k - 4}, []int{k - 4}, 0, 0},
	} {
		read, write := c.cached(tc.lcp, tc.prev, tc.cur)
		if read != tc.wantRead || write != tc.wantWrite {
			t.Errorf("%s: read %d, wrote %d; want %d, %d", tc.name, read, write, tc.wantRead, tc.wantWrite)
		}
	}
}
