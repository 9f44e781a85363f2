//go:build ignore

// Foldgen writes fold_table.go: for every rune outside ASCII that a model
// could read as one of the characters a delimiter is made of (the letters
// and digits of a tag, "<", "/", "\", "-", "_", "." or a space), the ASCII
// it reads as. It also writes testdata/fold/letters.txt, the test cases
// of TestFoldLetters and TestEnvelopeFoldedLetters: every rune that NFKC,
// NFKD or the confusables table maps to one ASCII letter or digit, or
// that its Unicode name says is one.
//
// A rune gets an entry when one of these, applied again to what it gives,
// folds it wholly to those characters:
//   - its compatibility decomposition (NFKD, which covers full-width
//     forms, mathematical alphanumerics, ligatures, superscripts and
//     circled letters), minus combining marks;
//   - its UTS #39 confusable prototype (Cyrillic, Greek, Armenian,
//     Cherokee and other look-alikes), from the confusables.txt that
//     github.com/mtibben/confusables compiles in (Unicode 13.0.0; its
//     Skeleton gives a rune's prototype);
//   - its Unicode name (golang.org/x/text/unicode/runenames): a Latin
//     letter named as the letter X, small, capital, small capital, a
//     modifier, parenthesized, circled, squared or a regional indicator,
//     with or without a hook, stroke, tail or other mark ("LATIN LETTER
//     SMALL CAPITAL D", "LATIN SMALL LETTER D WITH HOOK", "NEGATIVE
//     SQUARED LATIN CAPITAL LETTER D"), reads as x. Neither source above
//     maps small capitals (ᴀ ᴅ ᴇ ɴ ʀ) to their letters: confusables.txt
//     keeps them as prototypes of their own. Turned, reversed and inverted
//     letters are not read as their letter.
//
// A short curated list adds the look-alikes of "<", "/", "-", "_", "." and
// " " that none of them maps to those characters (angle brackets and
// quotation marks, dashes drawn as lines, middle dots), and a few letters
// that read as another (п and π as n). Space, dash punctuation (Pd), tag
// characters and ignorable runes are folded by rule in fold.go and need no
// entry.
//
// It needs golang.org/x/text and github.com/mtibben/confusables, which the
// core module must not require, so run it from a scratch module, with the
// Go release the module builds with (fold.go's rules use its unicode
// tables, and x/text picks its Unicode version by Go release):
//
//	mkdir -p /tmp/foldgen && cd /tmp/foldgen && go mod init foldgen
//	go get golang.org/x/text@v0.44.0 github.com/mtibben/confusables@v0.0.0-20210201002637-9d1b0723b659
//	go run $REPO/sanitize/foldgen.go -dir $REPO/sanitize
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/runenames"
)

// confusablesVersion is the version of the confusables.txt that
// github.com/mtibben/confusables compiles in (its tables.go says so).
const confusablesVersion = "13.0.0"

// curated are look-alikes that neither NFKD, confusables.txt nor the
// names fold to a delimiter character.
var curated = map[rune]string{
	// "<": quotation marks, angle brackets, comparison signs.
	0x00AB: "<", 0x2039: "<", 0x2264: "<", 0x2266: "<", 0x226A: "<", 0x226E: "<", 0x227A: "<",
	0x22B0: "<", 0x22D6: "<", 0x2329: "<", 0x276C: "<", 0x276E: "<", 0x2770: "<", 0x27E8: "<",
	0x27EA: "<", 0x29FC: "<", 0x2A79: "<", 0x2A7D: "<", 0x3008: "<", 0x300A: "<", 0xFE64: "<",
	0xFF1C: "<", 0x02C2: "<", 0x1438: "<", 0x16B2: "<", 0x1D236: "<", 0x2CB4: "<", 0x1445: "<",
	0x02F1: "<",
	// "/" and "\".
	0x2215: "/", 0x2044: "/", 0x29F8: "/", 0xFF0F: "/", 0x1735: "/", 0x2041: "/", 0x2571: "/",
	0x27CB: "/", 0x31D3: "/", 0x3033: "/", 0x2CC6: "/", 0x4E3F: "/", 0x2F03: "/", 0x30CE: "/",
	0xFF89: "/", 0x1D23A: "/", 0x2AFD: "//", 0x29F6: "/",
	0xFF3C: "\\", 0xFE68: "\\", 0x2216: "\\", 0x29F5: "\\", 0x29F9: "\\", 0x27CD: "\\", 0x2572: "\\",
	0x31D4: "\\", 0x4E36: "\\", 0x2F02: "\\",
	// "-": minus signs and lines drawn as dashes.
	0x2212: "-", 0x2796: "-", 0x02D7: "-", 0x06D4: "-", 0x2CBA: "-", 0x2043: "-", 0x30FC: "-",
	0xFF70: "-", 0x4E00: "-", 0x2F00: "-", 0x3161: "-", 0x1173: "-", 0x2500: "-", 0x2501: "-",
	0x23AF: "-", 0x2574: "-", 0x2576: "-", 0x2578: "-", 0x257A: "-", 0x2013: "-", 0x2014: "-",
	0x2015: "-", 0x2E3A: "-", 0x2E3B: "-", 0x10EAD: "-", 0x2011: "-", 0x2010: "-", 0x2012: "-",
	// ".": middle dots.
	0x00B7: ".", 0x2027: ".", 0x22C5: ".", 0x2219: ".", 0x30FB: ".", 0xFF65: ".",
	// "_".
	0x2017: "_", 0x2581: "_", 0x07FA: "_",
	// Letters that read as another, which confusables.txt maps to a
	// Greek small capital of their own: pi and pe as n, tse as u.
	0x03C0: "n", 0x043F: "n", 0x1D28: "n", 0x03D6: "n", 0x213C: "n", 0x0446: "u",
	// Blank-looking symbols read as a space.
	0x2800: " ",
}

func main() {
	dir := flag.String("dir", ".", "the sanitize package's directory: fold_table.go and testdata/fold/letters.txt are written there")
	flag.Parse()
	g := gen{}
	type entry struct {
		r  rune
		to string
	}
	var entries []entry
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if byRule(r) != "" || !utf8Valid(r) {
			continue
		}
		to, ok := g.fold(r, 0)
		if !ok || to == "" {
			continue
		}
		if unicode.Is(unicode.Pd, r) && to == "-" {
			continue // by rule
		}
		entries = append(entries, entry{r, to})
	}
	// Merge runs: consecutive runes that give the same string, or single
	// letters or digits that count up with them.
	type run struct {
		lo, hi rune
		to     string
		inc    bool
	}
	var runs []run
	for _, e := range entries {
		if n := len(runs); n > 0 {
			last := &runs[n-1]
			if e.r == last.hi+1 {
				switch {
				case !last.inc && e.to == last.to:
					last.hi = e.r
					continue
				case len(e.to) == 1 && len(last.to) == 1 && sameClass(last.to[0], e.to[0]) &&
					(last.inc || last.lo == last.hi) && rune(e.to[0]) == rune(last.to[0])+(e.r-last.lo):
					last.hi, last.inc = e.r, true
					continue
				}
			}
		}
		runs = append(runs, run{e.r, e.r, e.to, false})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by foldgen.go from NFKD (Unicode %s), confusables.txt (version %s) and the Unicode names (%s); DO NOT EDIT.\n",
		norm.Version, confusablesVersion, runenames.UnicodeVersion)
	fmt.Fprintf(&b, "//\n// It was made with %s, outside this module's build: foldgen.go's doc says how.\n\n", modules())
	fmt.Fprintf(&b, "package sanitize\n\n")
	fmt.Fprintf(&b, "// foldTable folds %d runes in %d runs, sorted by lo.\n", len(entries), len(runs))
	fmt.Fprintf(&b, "var foldTable = [...]foldRun{\n")
	for i, r := range runs {
		if i%4 == 0 {
			b.WriteString("\t")
		}
		fmt.Fprintf(&b, "{0x%04X, 0x%04X, %s, %v},", r.lo, r.hi, strconv.Quote(r.to), r.inc)
		if i%4 == 3 || i == len(runs)-1 {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
	}
	fmt.Fprintf(&b, "}\n\n")
	alike := g.alike()
	fmt.Fprintf(&b, "// foldAlike are the pairs of ASCII letters and digits that one rune reads\n")
	fmt.Fprintf(&b, "// as either of, by its sources: the matcher takes each of a pair for the other.\n")
	fmt.Fprintf(&b, "var foldAlike = [...]string{")
	for i, a := range alike {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(a))
	}
	fmt.Fprintf(&b, "}\n")
	write(filepath.Join(*dir, "fold_table.go"), b.String())
	write(filepath.Join(*dir, "testdata", "fold", "letters.txt"), g.cases())
	log.Printf("fold_table.go: %d runes in %d runs", len(entries), len(runs))
}

// modules names the Go release and the modules the generator was built
// with.
func modules() string {
	out := runtime.Version()
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "golang.org/x/text" || m.Path == "github.com/mtibben/confusables" {
				out += ", " + m.Path + " " + m.Version
			}
		}
	}
	return out
}

func write(path, text string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		log.Fatal(err)
	}
}

// cases returns testdata/fold/letters.txt: one line per rune that a source
// maps, by itself and in one step, to one ASCII letter or digit.
func (g *gen) cases() string {
	var b strings.Builder
	fmt.Fprintf(&b, `# Generated by foldgen.go (with %s); DO NOT EDIT.
# The test cases of TestFoldLetters and TestEnvelopeFoldedLetters: every
# rune outside ASCII that one of these maps, by itself, to one ASCII letter
# or digit, the letter, and which:
#   nfkc         its NFKC form (Unicode %s) is the letter;
#   nfkd         its NFKD form less combining marks is, and its NFKC form is not;
#   confusables  its UTS #39 prototype (confusables.txt %s) is the letter;
#   name         its Unicode name (%s) says it is the letter (see foldgen.go).
# A rune two sources map to different letters is listed under each.
`, modules(), norm.Version, confusablesVersion, runenames.UnicodeVersion)
	n := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !utf8Valid(r) || byRule(r) != "" {
			continue // folded by rule, to nothing or a space
		}
		s := string(r)
		var lines []string
		add := func(to, source string) {
			if c, ok := oneAlnum(to); ok {
				lines = append(lines, fmt.Sprintf("%04X %c %s\n", r, c, source))
			}
		}
		if k := norm.NFKC.String(s); k != s {
			add(k, "nfkc")
			if _, ok := oneAlnum(k); !ok {
				add(stripMarks(norm.NFKD.String(s)), "nfkd")
			}
		} else if d := norm.NFKD.String(s); d != s {
			add(stripMarks(d), "nfkd")
		}
		if p, ok := g.prototype(r); ok {
			add(string(p), "confusables")
		}
		if c, ok := nameLetter(r); ok {
			add(string(c), "name")
		}
		for _, l := range slices.Compact(lines) {
			b.WriteString(l)
			n++
		}
	}
	log.Printf("letters.txt: %d cases", n)
	return b.String()
}

// readings returns the ASCII letters and digits that r reads as by
// itself, in one step: itself (for ASCII), its NFKC and NFKD forms, its
// prototype and its name.
func (g *gen) readings(r rune) []byte {
	var out []byte
	add := func(s string) {
		if c, ok := oneAlnum(s); ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	s := string(r)
	if r < 0x80 {
		add(s)
	}
	add(norm.NFKC.String(s))
	add(stripMarks(norm.NFKD.String(s)))
	if p, ok := g.prototype(r); ok {
		add(string(p))
	}
	if c, ok := nameLetter(r); ok {
		add(string(c))
	}
	return out
}

// alike returns the pairs of ASCII letters and digits that some rune
// reads as both of: ſ as s and f, ℐ as i and l, and by confusables.txt I
// as l and 0 as O. They are pairs, not classes: ʋ reads as u or v, and ᶌ
// as v or y, but nothing as u or y.
func (g *gen) alike() []string {
	var out []string
	for r := rune(0x21); r <= unicode.MaxRune; r++ {
		if !utf8Valid(r) {
			continue
		}
		rs := g.readings(r)
		for i, a := range rs {
			for _, b := range rs[i+1:] {
				out = append(out, string([]byte{min(a, b), max(a, b)}))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// oneAlnum returns the ASCII letter (lower case) or digit s is, if it is
// one.
func oneAlnum(s string) (byte, bool) {
	if len(s) != 1 {
		return 0, false
	}
	c := byte(unicode.ToLower(rune(s[0])))
	return c, isAlnum(c)
}

func stripMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

func utf8Valid(r rune) bool { return r < 0xD800 || r > 0xDFFF }

// sameClass reports whether a and b are both letters or both digits.
func sameClass(a, b byte) bool {
	return 'a' <= a && a <= 'z' && 'a' <= b && b <= 'z' || '0' <= a && a <= '9' && '0' <= b && b <= '9'
}

func allAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(b byte) bool { return 'a' <= b && b <= 'z' || '0' <= b && b <= '9' }

// byRule reports what fold.go's rules make of r before its table: space,
// tag characters, ignorables ("\x00" stands for "nothing").
func byRule(r rune) string {
	switch {
	case r >= 0xE0020 && r <= 0xE007E:
		return "tag"
	case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
		return " "
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc, unicode.Cf, unicode.Cc,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector):
		return "\x00"
	}
	return ""
}

// letterName matches the Unicode name of a letter that reads as the Latin
// letter it names: its group 1. A name with a word before the letter
// other than those (TURNED, REVERSED, INVERTED, BARRED, OPEN, ...) does
// not match, nor does one whose letter is a word (ETH, EZH, OU), nor
// (see nameLetter) a digraph (D WITH SMALL LETTER Z).
var letterName = regexp.MustCompile(`^(?:(?:PARENTHESIZED|CIRCLED|NEGATIVE CIRCLED|SQUARED|NEGATIVE SQUARED|FULLWIDTH) )?` +
	`(?:LATIN|MODIFIER|REGIONAL INDICATOR SYMBOL) ` +
	`(?:(?:SMALL |CAPITAL |SUBSCRIPT SMALL )?LETTER (?:SMALL CAPITAL |SMALL )?|(?:SMALL |CAPITAL )?CAPITAL LETTER SMALL CAPITAL |SMALL CAPITAL LETTER )` +
	`([A-Z])( WITH [A-Z -]+)?$`)

// nameLetter returns the ASCII letter r's name says it is, if it is a
// letter or a symbol (a circled letter, say).
func nameLetter(r rune) (byte, bool) {
	if !unicode.In(r, unicode.L, unicode.So) {
		return 0, false
	}
	m := letterName.FindStringSubmatch(runenames.Name(r))
	if m == nil || strings.Contains(m[2], "LETTER") { // ǅ: D WITH SMALL LETTER Z WITH CARON
		return 0, false
	}
	return m[1][0] + 'a' - 'A', true
}

type gen struct{}

// prototype returns r's UTS #39 prototype, if it has one other than
// itself.
func (g *gen) prototype(r rune) ([]rune, bool) {
	s := string(r)
	p := confusables.Skeleton(s)
	if p == norm.NFD.String(s) {
		return nil, false
	}
	return []rune(p), true
}

// fold returns the delimiter characters r reads as, if it reads as
// nothing else: by the curated list or fold.go's rules if they say, or
// else by NFKD, its prototype, its name or its lower case, the first of
// them that gives anything, unless that is letters and a later one gives
// one letter (ǆ reads as "dz", ɱ as "m" rather than its prototype "rn").
func (g *gen) fold(r rune, depth int) (string, bool) {
	if depth > 5 {
		return "", false
	}
	if r < 0x80 {
		c := byte(unicode.ToLower(r))
		if isAlnum(c) || strings.IndexByte("</\\-_. ", c) >= 0 {
			return string(c), true
		}
		return "", false
	}
	if s, ok := curated[r]; ok {
		return s, true
	}
	switch byRule(r) {
	case " ":
		return " ", true
	case "\x00":
		return "", true
	case "tag":
		return g.fold(r-0xE0000, depth+1)
	}
	if unicode.Is(unicode.Pd, r) {
		return "-", true
	}
	var found []string
	if d := []rune(norm.NFKD.String(string(r))); len(d) != 1 || d[0] != r {
		if s, ok := g.foldAll(d, depth); ok && s != "" {
			found = append(found, s)
		}
	}
	if t, ok := g.prototype(r); ok {
		if s, ok := g.foldAll(t, depth); ok && s != "" {
			found = append(found, s)
		}
	}
	if c, ok := nameLetter(r); ok {
		found = append(found, string(c))
	}
	if l := unicode.ToLower(r); l != r {
		if s, ok := g.fold(l, depth+1); ok && s != "" {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return "", false
	}
	// A source that maps r to one ASCII letter or digit itself wins: Ϲ
	// is "c" by its prototype, not "o" by way of its NFKD form Σ and σ.
	for _, c := range g.readings(r) {
		return string(c), true
	}
	if len(found[0]) > 1 && allAlnum(found[0]) {
		for _, s := range found[1:] {
			if _, ok := oneAlnum(s); ok {
				return s, true
			}
		}
	}
	return found[0], true
}

func (g *gen) foldAll(rs []rune, depth int) (string, bool) {
	var b strings.Builder
	for _, c := range rs {
		s, ok := g.fold(c, depth+1)
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return b.String(), true
}
