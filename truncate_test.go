package toolloop

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// markerRE finds the truncation marker's words; the marker may also have a
// line break on either side.
var markerRE = regexp.MustCompile(`\[\.\.\. (\d+) of (\d+) bytes cut from the middle of this output \.\.\.\]`)

// checkTruncated checks the invariants of TruncateText(s, budget) = out
// for valid UTF-8 s: within budget, valid UTF-8, s itself when it fits,
// and otherwise a head of s, a marker that counts the cut exactly, and a
// tail of s; or, when the budget has no room for a marker, a head of s.
func checkTruncated(t *testing.T, s string, budget int, out string) {
	t.Helper()
	require.True(t, utf8.ValidString(out), "not valid UTF-8: %q", out)
	if budget < 0 {
		require.Empty(t, out)
		return
	}
	require.LessOrEqual(t, len(out), budget)
	if len(s) <= budget {
		require.Equal(t, s, out)
		return
	}
	head, tail, cut, total, ok := splitTruncated(out)
	if !ok {
		require.True(t, strings.HasPrefix(s, out), "without a marker, the output is a head of the input")
		return
	}
	require.Equal(t, len(s), total, "the marker gives the input's size")
	// The marker may bring a line break on either side; one reading of
	// the output must be head + cut + tail = s exactly.
	for _, h := range []string{head, strings.TrimSuffix(head, "\n")} {
		for _, tl := range []string{tail, strings.TrimPrefix(tail, "\n")} {
			if strings.HasPrefix(s, h) && strings.HasSuffix(s, tl) && len(h)+cut+len(tl) == len(s) {
				return
			}
		}
	}
	t.Fatalf("output is not head + marker + tail of the input, with the marker counting the cut exactly:\n%q", out)
}

// splitTruncated splits a truncated output around its marker.
func splitTruncated(out string) (head, tail string, cut, total int, ok bool) {
	loc := markerRE.FindStringSubmatchIndex(out)
	if loc == nil {
		return "", "", 0, 0, false
	}
	cut, _ = strconv.Atoi(out[loc[2]:loc[3]])
	total, _ = strconv.Atoi(out[loc[4]:loc[5]])
	return out[:loc[0]], out[loc[1]:], cut, total, true
}

func TestTruncateText(t *testing.T) {
	long := strings.Repeat("0123456789", 1000)
	tests := []struct {
		name   string
		s      string
		budget int
		want   string // checked when not empty
	}{
		{"short", "hello", 100, "hello"},
		{"exact budget", strings.Repeat("x", 50), 50, strings.Repeat("x", 50)},
		{"empty", "", 0, ""},
		{"long ASCII", long, 1000, ""},
		{"long ASCII large budget", long, 9999, ""},
		{"budget smaller than the marker", long, 20, long[:20]},
		{"budget just past the marker", long, 90, ""},
		{"zero budget", long, 0, ""},
		{"negative budget", long, -5, ""},
		{"multi-byte", strings.Repeat("é€😀", 500), 300, ""},
		{"invalid UTF-8 fits after repair", "abc\xffdef", 100, "abc\uFFFDdef"},
		{"invalid UTF-8 grows past the budget", "\xff\xff\xff\xff", 4, "\uFFFD"},
		{"invalid UTF-8 long", strings.Repeat("ab\xc3", 1000), 500, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := TruncateText(tt.s, tt.budget)
			if fixed := strings.ToValidUTF8(tt.s, "\uFFFD"); fixed == tt.s || len(tt.s) <= 2*tt.budget {
				checkTruncated(t, fixed, tt.budget, out)
			} else {
				checkTruncatedInvalid(t, tt.s, tt.budget, out)
			}
			if tt.want != "" {
				assert.Equal(t, tt.want, out)
			}
		})
	}
}

func TestTruncateTextKeepsLongerTail(t *testing.T) {
	s := strings.Repeat("a", 5000) + strings.Repeat("z", 5000)
	out := TruncateText(s, 1000)
	head, tail, _, _, ok := splitTruncated(out)
	require.True(t, ok, "no marker in %q", out)
	assert.Greater(t, len(tail), len(head), "errors live at the end: the tail gets more room")
	assert.NotEmpty(t, head)
}

// Cut a string of mixed 1- to 4-byte characters at every budget.
func TestTruncateTextEveryCut(t *testing.T) {
	s := strings.Repeat("aé€😀", 40) // 10 bytes a repetition
	for budget := -1; budget <= len(s)+1; budget++ {
		out := TruncateText(s, budget)
		checkTruncated(t, s, budget, out)
	}
	// The same with the multi-byte characters at the edges.
	s = "😀" + strings.Repeat("€é", 60) + "😀"
	for budget := 0; budget <= len(s); budget++ {
		checkTruncated(t, s, budget, TruncateText(s, budget))
	}
}

// Errors live at the end of an output: the last line survives.
func TestTruncateTextKeepsLastLine(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %d: compiling package number %d\n", i, i)
	}
	b.WriteString("FAIL: error: undefined: fooBar at main.go:42")
	s := b.String()
	out := TruncateText(s, 4096)
	checkTruncated(t, s, 4096, out)
	assert.True(t, strings.HasPrefix(out, "line 1: "), "head kept")
	assert.True(t, strings.HasSuffix(out, "FAIL: error: undefined: fooBar at main.go:42"), "last line kept")
	assert.Regexp(t, markerRE, out)
}

func TestTruncateContentUnchanged(t *testing.T) {
	cs := []Content{TextContent("hello"), JSONContent(json.RawMessage(`{"a":1}`)), ImageContent("image/png", make([]byte, 1<<20))}
	out, truncated := truncateContent(cs, 100)
	assert.False(t, truncated)
	require.Len(t, out, 3)
	assert.Same(t, &cs[0], &out[0], "nothing to change: the same slice comes back")
}

func TestTruncateContentImagesNotCounted(t *testing.T) {
	img := make([]byte, 1<<20)
	img[len(img)-1] = 7
	cs := []Content{
		ImageContent("image/png", img),
		{Type: ContentAudio, MIMEType: "audio/wav", Data: img},
		{Type: ContentImage, URI: "https://example.com/" + strings.Repeat("x", 500)},
		TextContent(strings.Repeat("t", 1000)),
	}
	out, truncated := truncateContent(cs, 200)
	assert.True(t, truncated)
	require.Len(t, out, 4)
	assert.Equal(t, img, out[0].Data, "image bytes kept whole")
	assert.Equal(t, img, out[1].Data, "audio bytes kept whole")
	assert.Equal(t, cs[2], out[2])
	assert.LessOrEqual(t, len(out[3].Text), 200)
	assert.Equal(t, strings.Repeat("t", 1000), cs[3].Text, "the input is not modified")
}

func TestTruncateContentFairShares(t *testing.T) {
	small := "small block"
	big1, big2 := strings.Repeat("a", 5000), strings.Repeat("b", 8000)
	cs := []Content{TextContent(big1), TextContent(small), TextContent(big2)}
	budget := 1011
	out, truncated := truncateContent(cs, budget)
	assert.True(t, truncated)
	require.Len(t, out, 3)
	assert.Equal(t, small, out[1].Text, "a block under its share keeps everything")
	assert.LessOrEqual(t, contentBytes(out), budget)
	// The large blocks split what is left equally.
	share := (budget - len(small)) / 2
	assert.LessOrEqual(t, len(out[0].Text), share)
	assert.LessOrEqual(t, len(out[2].Text), share)
	assert.Greater(t, len(out[0].Text), share-100, "a large block uses most of its share")
	assert.Greater(t, len(out[2].Text), share-100)
	checkTruncated(t, big1, share, out[0].Text)
	checkTruncated(t, big2, share, out[2].Text)
}

func TestFairShares(t *testing.T) {
	tests := []struct {
		sizes  []int
		budget int
		want   []int
	}{
		{[]int{10, 10}, 100, []int{10, 10}},
		{[]int{100, 100}, 100, []int{50, 50}},
		{[]int{10, 5000, 5000}, 1010, []int{10, 500, 500}},
		{[]int{0, 300, 0, 30}, 100, []int{0, 70, 0, 30}},
		{[]int{50, 60, 70}, 0, []int{0, 0, 0}},
		{[]int{50, 60}, -10, []int{0, 0}},
		{nil, 10, []int{}},
	}
	for _, tt := range tests {
		got := fairShares(tt.sizes, tt.budget)
		assert.Equal(t, tt.want, got, "sizes %v budget %d", tt.sizes, tt.budget)
	}
}

func TestTruncateContentJSONArray(t *testing.T) {
	elems := make([]int, 1000)
	for i := range elems {
		elems[i] = i
	}
	raw, err := json.Marshal(elems)
	require.NoError(t, err)
	for _, pretty := range []bool{false, true} {
		t.Run(fmt.Sprintf("pretty=%v", pretty), func(t *testing.T) {
			in := raw
			if pretty {
				in, err = json.MarshalIndent(elems, "  ", "\t")
				require.NoError(t, err)
				in = append([]byte("\n "), in...)
			}
			out, truncated := truncateContent([]Content{JSONContent(in)}, 200)
			assert.True(t, truncated)
			require.Len(t, out, 1)
			c := out[0]
			require.Equal(t, ContentJSON, c.Type)
			assert.LessOrEqual(t, len(c.JSON), 200)
			require.True(t, json.Valid(c.JSON), "still valid JSON: %s", c.JSON)

			var got []any
			require.NoError(t, json.Unmarshal(c.JSON, &got))
			require.Greater(t, len(got), 1)
			kept := got[:len(got)-1]
			for i, v := range kept {
				assert.Equal(t, float64(i), v, "leading elements kept in order")
			}
			note, ok := got[len(got)-1].(map[string]any)
			require.True(t, ok, "the last element is a note: %v", got[len(got)-1])
			assert.Contains(t, note["_truncated"], strconv.Itoa(1000-len(kept))+" of 1000")
		})
	}
}

func TestTruncateContentJSONObject(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 200 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%03d":{"v":"value, with [brackets] and \"quotes\" }","n":[%d]}`, i, i)
	}
	b.WriteString("}")
	raw := json.RawMessage(b.String())
	require.True(t, json.Valid(raw))

	out, truncated := truncateContent([]Content{JSONContent(raw)}, 500)
	assert.True(t, truncated)
	c := out[0]
	require.Equal(t, ContentJSON, c.Type)
	assert.LessOrEqual(t, len(c.JSON), 500)
	require.True(t, json.Valid(c.JSON), "still valid JSON: %s", c.JSON)

	// Keys in document order: the leading members, then the note.
	dec := json.NewDecoder(strings.NewReader(string(c.JSON)))
	_, _ = dec.Token()
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
	}
	require.Greater(t, len(keys), 1)
	assert.Equal(t, "_truncated", keys[len(keys)-1])
	for i, k := range keys[:len(keys)-1] {
		assert.Equal(t, fmt.Sprintf("k%03d", i), k)
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(c.JSON, &m))
	assert.Contains(t, m["_truncated"], strconv.Itoa(200-(len(keys)-1))+" of 200")
	assert.Equal(t, map[string]any{"v": "value, with [brackets] and \"quotes\" }", "n": []any{float64(0)}}, m["k000"])
}

func TestTruncateContentJSONFallsBackToText(t *testing.T) {
	tests := []struct {
		name string
		raw  string
	}{
		{"string scalar", `"` + strings.Repeat("x", 5000) + `"`},
		{"number scalar", strings.Repeat("9", 5000)},
		{"first element too big", `["` + strings.Repeat("x", 5000) + `",1,2]`},
		{"first member too big", `{"a":"` + strings.Repeat("x", 5000) + `","b":1}`},
		{"empty array padded", `[` + strings.Repeat(" ", 5000) + `]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, json.Valid([]byte(tt.raw)))
			out, truncated := truncateContent([]Content{JSONContent(json.RawMessage(tt.raw))}, 200)
			assert.True(t, truncated)
			c := out[0]
			assert.Equal(t, ContentText, c.Type)
			assert.Nil(t, c.JSON)
			assert.LessOrEqual(t, len(c.Text), 200)
			assert.True(t, utf8.ValidString(c.Text))
			assert.True(t, strings.HasPrefix(strings.TrimSpace(tt.raw), c.Text[:10]), "the text is the JSON source, cut")
		})
	}
}

func TestTruncateContentMixed(t *testing.T) {
	arr, _ := json.Marshal(make([]int, 3000))
	cs := []Content{
		TextContent("header"),
		JSONContent(arr),
		ImageContent("image/png", []byte{1, 2, 3}),
		TextContent(strings.Repeat("log line\n", 1000)),
		{Type: ContentResource, URI: "file:///x", Text: strings.Repeat("r", 3000)},
	}
	budget := 1200
	out, truncated := truncateContent(cs, budget)
	assert.True(t, truncated)
	require.Len(t, out, len(cs))
	assert.LessOrEqual(t, contentBytes(out), budget)
	assert.Equal(t, "header", out[0].Text)
	assert.Equal(t, ContentJSON, out[1].Type)
	assert.True(t, json.Valid(out[1].JSON))
	assert.Equal(t, cs[2], out[2])
	assert.Equal(t, ContentResource, out[4].Type, "a resource keeps its type")
	assert.Equal(t, "file:///x", out[4].URI)
	for _, c := range out {
		assert.True(t, utf8.ValidString(c.Text))
	}
}

// Text with invalid UTF-8 grows when it is repaired (one byte becomes the
// three of U+FFFD). Far under the budget, it must still come through whole,
// and anything cut must be reported as truncated.
func TestTruncateContentInvalidUTF8UnderBudgetNotCut(t *testing.T) {
	cs := []Content{TextContent("ok \xff done")}
	out, truncated := truncateContent(cs, 1000)
	assert.Equal(t, "ok \uFFFD done", out[0].Text)
	assert.False(t, truncated, "nothing was cut")
	assert.Equal(t, "ok \xff done", cs[0].Text, "the input is not modified")

	// Latin-1 output, 1000 bytes, a third of them not UTF-8.
	latin1 := strings.Repeat("caf\xe9 ", 200)
	out, truncated = truncateContent([]Content{TextContent(latin1)}, 64<<10)
	assert.Equal(t, strings.ToValidUTF8(latin1, "\uFFFD"), out[0].Text, "64 KiB budget, 1.4 KB after repair")
	assert.False(t, truncated)
}

func TestTruncateContentInvalidUTF8OverBudget(t *testing.T) {
	latin1 := strings.Repeat("caf\xe9 ", 2000)
	out, truncated := truncateContent([]Content{TextContent(latin1)}, 1000)
	assert.True(t, truncated)
	checkTruncatedInvalid(t, latin1, 1000, out[0].Text)
}

// checkTruncatedInvalid checks TruncateText(s, budget) = out for s that
// is not valid UTF-8 and longer than budget: within budget, valid UTF-8, a
// head and a tail of s repaired, and a marker that gives s's own size.
func checkTruncatedInvalid(t *testing.T, s string, budget int, out string) {
	t.Helper()
	require.True(t, utf8.ValidString(out), "not valid UTF-8: %q", out)
	require.LessOrEqual(t, len(out), budget)
	head, tail, cut, total, ok := splitTruncated(out)
	require.True(t, ok, "a marker: %q", out)
	require.Equal(t, len(s), total, "the marker gives the input's size in bytes")
	require.Less(t, cut, total)
	fixed := strings.ToValidUTF8(s, "\uFFFD")
	require.True(t, strings.HasPrefix(fixed, strings.TrimSuffix(head, "\n")), "head: %q", head)
	require.True(t, strings.HasSuffix(fixed, strings.TrimPrefix(tail, "\n")), "tail: %q", tail)
}

// A huge output that is not valid UTF-8 is repaired only where it is
// kept: truncating it costs about the budget, not a copy of itself.
func TestTruncateTextInvalidHugeAllocatesBudget(t *testing.T) {
	huge := strings.Repeat("\xff\xfeok ", 1<<20) // 6 MiB of mostly invalid bytes
	out := TruncateText(huge, 4096)
	checkTruncatedInvalid(t, huge, 4096, out)
	allocs := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = TruncateText(huge, 4096)
		}
	})
	require.Less(t, allocs.AllocedBytesPerOp(), int64(64<<10), "bytes allocated to truncate 6 MiB to 4 KiB")
}

// More budget never makes a JSON container fall back to text: if k
// elements and the note fit in b bytes, they fit in b+1.
func TestTruncateJSONContainerMonotonic(t *testing.T) {
	arr, err := json.Marshal(make([]int, 500))
	require.NoError(t, err)
	obj := make(map[string]int, 100)
	for i := range 100 {
		obj[fmt.Sprintf("key%03d", i)] = i
	}
	objRaw, err := json.Marshal(obj)
	require.NoError(t, err)
	for name, raw := range map[string][]byte{"array": arr, "object": objRaw} {
		t.Run(name, func(t *testing.T) {
			first := -1
			var fellBack []int
			for budget := 0; budget < 300; budget++ {
				j, text, typ := truncateJSON(raw, budget)
				if typ == ContentJSON {
					require.True(t, json.Valid(j), "budget %d: %s", budget, j)
					require.LessOrEqual(t, len(j), budget)
					if first < 0 {
						first = budget
					}
					continue
				}
				require.LessOrEqual(t, len(text), budget)
				if first >= 0 {
					fellBack = append(fellBack, budget)
				}
			}
			require.GreaterOrEqual(t, first, 0, "never kept as JSON")
			assert.Empty(t, fellBack, "fell back to text at these budgets, though a smaller budget (%d) kept JSON", first)
		})
	}
}

// FuzzTruncate checks TruncateText and truncateContent: the output is
// always valid UTF-8 within the budget, and JSON that stays JSON stays
// valid.
func FuzzTruncate(f *testing.F) {
	f.Add("hello, world", 5)
	f.Add(strings.Repeat("é€😀a", 100), 120)
	f.Add("ab\xffcd\xc3", 3)
	f.Add(`[1,2,3,{"a":"b,c"},[4,5]]`, 12)
	f.Add(`{"a":1,"b":"x]}","c":[1,2,3],"d":{"e":null}}`, 20)
	f.Add(` [ "a" , "b" ] `, 9)
	f.Add(`"just a string"`, 4)
	f.Add(strings.Repeat("line\n", 200)+"error at the end", 100)
	f.Add("", 0)
	f.Add("x", -1)
	f.Fuzz(func(t *testing.T, s string, budget int) {
		out := TruncateText(s, budget)
		if !utf8.ValidString(out) {
			t.Fatalf("TruncateText(%q, %d) = %q: not valid UTF-8", s, budget, out)
		}
		if budget >= 0 && len(out) > budget {
			t.Fatalf("TruncateText(%q, %d) = %q: %d bytes, over budget", s, budget, out, len(out))
		}
		if budget < 0 && out != "" {
			t.Fatalf("TruncateText(%q, %d) = %q, want empty", s, budget, out)
		}
		if utf8.ValidString(s) && len(s) <= budget && out != s {
			t.Fatalf("TruncateText(%q, %d) = %q, want it unchanged", s, budget, out)
		}

		cs := []Content{TextContent(s)}
		isJSON := json.Valid([]byte(s))
		if isJSON {
			cs = append(cs, JSONContent(json.RawMessage(s)))
		}
		res, _ := truncateContent(cs, budget)
		if budget >= 0 && contentBytes(res) > budget {
			t.Fatalf("truncateContent over budget %d: %d bytes", budget, contentBytes(res))
		}
		if !utf8.ValidString(res[0].Text) {
			t.Fatalf("truncateContent text not valid UTF-8: %q", res[0].Text)
		}
		if isJSON {
			c := res[1]
			switch c.Type {
			case ContentJSON:
				if !json.Valid(c.JSON) {
					t.Fatalf("truncateContent(%q, %d): JSON block no longer valid JSON: %q", s, budget, c.JSON)
				}
			case ContentText:
				if !utf8.ValidString(c.Text) {
					t.Fatalf("truncateContent JSON fell back to invalid UTF-8 text: %q", c.Text)
				}
			default:
				t.Fatalf("JSON block became %q", c.Type)
			}
		}
	})
}
