package builtin

import (
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// requiredLiteral returns a piece of text that every match of the regular
// expression contains, or nil if there is none worth looking for: the
// longest run of literal characters that the expression requires, outside
// any repetition, alternation or case folding. A line without it cannot
// match, so a searcher can skip to it with a fast substring search.
func requiredLiteral(expr string) []byte {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lit := required(re.Simplify())
	if len(lit) == 0 {
		return nil
	}
	return []byte(lit)
}

// required returns the longest literal text re's every match contains.
func required(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if !plain(re) {
			return ""
		}
		return runesString(re.Rune)
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		// x+ contains x at least once.
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literals join into one run; otherwise take the longest
		// requirement of any part.
		best, run := "", ""
		for _, sub := range re.Sub {
			if plain(sub) {
				run += runesString(sub.Rune)
				if len(run) > len(best) {
					best = run
				}
				continue
			}
			run = ""
			if r := required(sub); len(r) > len(best) {
				best = r
			}
		}
		return best
	}
	return ""
}

// plain reports whether re is a literal that matches only its own bytes:
// no case folding, and no U+FFFD, which also matches invalid UTF-8.
func plain(re *syntax.Regexp) bool {
	if re.Op != syntax.OpLiteral || re.Flags&syntax.FoldCase != 0 {
		return false
	}
	return !slices.Contains(re.Rune, utf8.RuneError)
}

func runesString(rs []rune) string {
	b := make([]byte, 0, len(rs))
	for _, r := range rs {
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}
