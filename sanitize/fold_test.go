package sanitize

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFoldTable checks the generated table's shape: sorted runs outside
// ASCII that fold only to a delimiter's characters.
func TestFoldTable(t *testing.T) {
	require.NotEmpty(t, foldTable)
	prev := rune(utf8.RuneSelf - 1)
	for _, run := range foldTable {
		require.Greater(t, run.lo, prev, "sorted and apart: %+v", run)
		require.GreaterOrEqual(t, run.hi, run.lo, "%+v", run)
		require.NotEmpty(t, run.to, "%+v", run)
		for i := 0; i < len(run.to); i++ {
			c := run.to[i]
			require.True(t, 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("</\\-_. ", c) >= 0, "%+v", run)
		}
		if run.inc {
			first, last := run.to[0], run.to[0]+byte(run.hi-run.lo)
			require.Len(t, run.to, 1)
			require.True(t, 'a' <= first && last <= 'z' || '0' <= first && last <= '9', "%+v", run)
		}
		prev = run.hi
	}
}

func TestFoldRune(t *testing.T) {
	tests := []struct {
		r    rune
		want string
	}{
		{'A', "a"}, {'z', "z"}, {'<', "<"}, {'\t', " "}, {'\x00', ""}, {'>', ">"},
		{'\u0430', "a"}, {'\u0435', "e"}, {'\u043E', "o"}, {'\u0440', "p"}, {'\u0441', "c"}, {'\u0443', "y"},
		{'\u0445', "x"}, {'\u0456', "i"}, {'\u0455', "s"}, {'\u0442', "t"}, {'\u0433', "r"}, {'\u0501', "d"},
		{'\u03C5', "u"}, {'\u03B1', "a"}, {'\u0391', "a"}, {'\u03C4', "t"},
		{'\uFF55', "u"}, {'\uFF21', "a"}, {'\U0001D42E', "u"}, {'\U0001D5BA', "a"}, {'\u24E4', "u"}, {'\u1D58', "u"},
		{'\u00FC', "u"}, {'\u0169', "u"}, {'\uFB06', "st"}, {'\u2122', "tm"},
		{'\uFF1C', "<"}, {'\uFE64', "<"}, {'\u2039', "<"}, {'\u3008', "<"}, {'\u27E8', "<"}, {'\u2329', "<"},
		{'\u276C', "<"}, {'\u1438', "<"}, {'\u16B2', "<"}, {'\u226E', "<"}, {'\U000E003C', "<"},
		{'\u2215', "/"}, {'\u2044', "/"}, {'\u29F8', "/"}, {'\uFF0F', "/"}, {'\u1735', "/"}, {'\uFF3C', `\`},
		{'\u2010', "-"}, {'\u2013', "-"}, {'\u2212', "-"}, {'\uFE63', "-"}, {'\uFF0D', "-"}, {'\u30FC', "-"},
		{'\uFF3F', "_"}, {'\u00A0', " "}, {'\u2003', " "}, {'\u3000', " "}, {'\u205F', " "}, {'\u2800', " "},
		{'\u200B', ""}, {'\u200D', ""}, {'\u2060', ""}, {'\uFEFF', ""}, {'\u00AD', ""}, {'\u034F', ""},
		{'\u202E', ""}, {'\u2067', ""}, {'\u061C', ""}, {'\u180E', ""}, {'\u0338', ""}, {'\uFE0F', ""},
		{'\U000E0100', ""}, {'\u3164', ""}, {'\U000E0001', ""},
		// Small capitals, which confusables.txt keeps as prototypes of
		// their own (issue 35), and letters with hooks and tails.
		{'\u1D00', "a"}, {'\u1D05', "d"}, {'\u1D07', "e"}, {'\u0274', "n"}, {'\u0280', "r"}, {'\u1D1B', "t"},
		{'\uA730', "f"}, {'\u0262', "g"}, {'\u1D0D', "m"}, {'\u0271', "m"}, {'\u0256', "d"}, {'\U0001F150', "a"},
		{'\uFFFD', other}, {'Ж', other}, {'中', other}, {'\U0001F600', other}, {'\u00E6', "ae"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, foldRune(tt.r), "%U %c", tt.r, tt.r)
	}
}

// TestReplacement checks that what an opener becomes cannot open or
// continue a delimiter itself.
func TestReplacement(t *testing.T) {
	r, _ := utf8.DecodeRuneInString(replacement)
	assert.Equal(t, other, foldRune(r))
	assert.False(t, isOpener(r))
	assert.False(t, stop[replacement[0]] && isOpener(r))
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in   string
		want rune
		n    int
	}{
		{`\u003c/`, '<', 6}, {`\u003C`, '<', 6}, {`\\u003c`, '<', 7}, {`\\\u003c`, '<', 8},
		{`\u{3c}`, '<', 6}, {`\U0000003C`, '<', 10}, {`\x3c`, '<', 4}, {`\074`, '<', 4}, {`\/`, '/', 2},
		{`\ud835\udc2e`, '\U0001D42E', 12}, {`\ud835x`, '\uFFFD', 6}, {`\udc2e`, '\uFFFD', 6},
		{`\n`, '\\', 1}, {`\\\q`, '\\', 3}, {`\u003`, '\\', 1}, {`\u{1234567}`, '\\', 1},
		{"&lt;", '<', 4}, {"&lt", '<', 3}, {"&LT;", '<', 4}, {"&ltx", '<', 3}, {"&amp;lt;", '<', 8},
		{"&#60;", '<', 5}, {"&#060", '<', 5}, {"&#x3c;", '<', 6}, {"&#X3C", '<', 5}, {"&#0000000000000060;", '<', 19},
		{"&#x110000;", '\uFFFD', 10}, {"&sol;", '/', 5}, {"&lsaquo;", '\u2039', 8}, {"&LeftAngleBracket;", '\u27E8', 18},
		{"&amp;", '&', 1}, {"&x", '&', 1},
		{"%3C", '<', 3}, {"%3c", '<', 3}, {"%EF%BC%9C", '\uFF1C', 9}, {"%u003C", '<', 6}, {"%E2%3C", '\uFFFD', 3},
		{"%ZZ", '%', 1}, {"%3", '%', 1},
		{"<", '<', 1}, {"\uFF1C", '\uFF1C', 3}, {"\xff", '\uFFFD', 1},
	}
	for _, tt := range tests {
		r, n := decode(tt.in, 0)
		assert.Equal(t, tt.want, r, "%q", tt.in)
		assert.Equal(t, tt.n, n, "%q", tt.in)
	}
	for name := range charRefs {
		assert.LessOrEqual(t, len(name), maxCharRef, name)
	}
}

func TestOpeners(t *testing.T) {
	for _, r := range []rune{'\uFF1C', '\uFE64', '\u2039', '\u3008', '\u27E8', '\u2329', '\u276C', '\u276E', '\u1438', '\u16B2', '\u02C2', '\u2CB4', '\u1445', '\U0001D236', '\U000E003C'} {
		assert.True(t, isOpener(r), "%U", r)
		var b [utf8.UTFMax]byte
		utf8.EncodeRune(b[:], r)
		assert.True(t, stop[b[0]], "%U", r)
	}
	for _, r := range []rune{'>', 'a', '\u203A', '\u0416', '\uFFFD'} {
		assert.False(t, isOpener(r), "%U", r)
	}
}

// foldLetter is a case of testdata/fold/letters.txt, which foldgen.go
// generates: a rune that NFKC, NFKD, the confusables table or its Unicode
// name maps to one ASCII letter or digit.
type foldLetter struct {
	r      rune
	letter byte
	source string
}

func loadFoldLetters(t testing.TB) []foldLetter {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "fold", "letters.txt"))
	require.NoError(t, err)
	var cases []foldLetter
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		require.Len(t, f, 3, "%q", line)
		v, err := strconv.ParseUint(f[0], 16, 32)
		require.NoError(t, err, "%q", line)
		require.Len(t, f[1], 1, "%q", line)
		cases = append(cases, foldLetter{rune(v), f[1][0], f[2]})
	}
	return cases
}

// TestFoldLetters checks the fold of every rune that NFKC, NFKD, the
// confusables table or its name maps to one ASCII letter or digit: it
// folds to that letter, or to one the matcher takes for it (foldAlike).
func TestFoldLetters(t *testing.T) {
	cases := loadFoldLetters(t)
	require.Greater(t, len(cases), 3500)
	bySource := map[string]int{}
	for _, c := range cases {
		bySource[c.source]++
		f := foldRune(c.r)
		if set := reads(c.letter); len(f) != 1 || !set.has(f[0]) {
			t.Errorf("%U %c (%s): folds to %q, not %q", c.r, c.r, c.source, f, c.letter)
		}
	}
	t.Logf("%d cases: %v", len(cases), bySource)
}
