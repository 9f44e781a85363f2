package sanitize

import (
	"strings"
	"sync"
)

// An index finds, in one pass over a text, where the keywords of a rule
// set occur, so that each rule's regular expression runs only near its
// keywords: a few lines out of megabytes, or none at all.
//
// It looks at every pair of adjacent bytes, folded to lower case, and
// checks a bit set of the pairs that begin some keyword; only then does it
// compare the keywords that begin with that pair. Looking for a hundred
// keywords costs about as much as looking for one.
type index struct {
	rules []Rule
	// always lists the rules without a usable keyword: they search the
	// whole text.
	always []int
	// pairs has a bit for each folded byte pair that begins a keyword;
	// first maps the pair to its keywords in words (1-based; 0 is none).
	pairs [1 << 16 / 64]uint64
	first [1 << 16]uint16
	words [][]keyword
}

type keyword struct {
	word  string // lower case unless exact
	exact bool
	rules []int
	// pre is the one rule's Rule.pre, if it has one: its keywords are
	// its own.
	pre func(s string, hit int) bool
}

// fold maps ASCII upper case letters to lower case and every other byte to
// itself.
var fold = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

func pairOf(a, b byte) uint16 { return uint16(fold[a])<<8 | uint16(fold[b]) }

func newIndex(rules []Rule) *index {
	ix := &index{rules: rules, words: [][]keyword{nil}}
	type key struct {
		word  string
		exact bool
		rule  int // the rule, if it has a pre; else -1
	}
	var order []key
	byWord := make(map[key][]int)
	for i := range rules {
		r := &rules[i]
		if r.Pattern == nil && r.match == nil {
			continue
		}
		usable := len(r.Keywords) > 0
		for _, w := range r.Keywords {
			if len(w) < 2 {
				usable = false
			}
		}
		if !usable {
			ix.always = append(ix.always, i)
			continue
		}
		for _, w := range r.Keywords {
			if !r.exact {
				w = strings.ToLower(w)
			}
			k := key{w, r.exact, -1}
			if r.pre != nil {
				k.rule = i
			}
			if _, ok := byWord[k]; !ok {
				order = append(order, k)
			}
			if rs := byWord[k]; len(rs) == 0 || rs[len(rs)-1] != i {
				byWord[k] = append(rs, i)
			}
		}
	}
	for _, k := range order {
		p := pairOf(k.word[0], k.word[1])
		if ix.first[p] == 0 {
			ix.first[p] = uint16(len(ix.words))
			ix.words = append(ix.words, nil)
			ix.pairs[p/64] |= 1 << (p % 64)
		}
		kw := keyword{word: k.word, exact: k.exact, rules: byWord[k]}
		if k.rule >= 0 {
			kw.pre = rules[k.rule].pre
		}
		ix.words[ix.first[p]] = append(ix.words[ix.first[p]], kw)
	}
	return ix
}

// scan calls hit for each occurrence of a keyword in s, in order of
// position, with the rules that keyword belongs to.
func (ix *index) scan(s string, hit func(pos int, rules []int)) {
	for i := 0; i+1 < len(s); i++ {
		p := pairOf(s[i], s[i+1])
		if ix.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, k := range ix.words[ix.first[p]] {
			if hasWord(s[i:], k) && (k.pre == nil || k.pre(s, i)) {
				hit(i, k.rules)
			}
		}
	}
}

func hasWord(s string, k keyword) bool {
	if len(s) < len(k.word) {
		return false
	}
	if k.exact {
		return s[:len(k.word)] == k.word
	}
	for j := 0; j < len(k.word); j++ {
		if fold[s[j]] != k.word[j] {
			return false
		}
	}
	return true
}

// indexes caches the index of each rule set in use, keyed by the slice.
var indexes sync.Map // ruleSet -> *index

type ruleSet struct {
	first *Rule
	n     int
}

// maxCached bounds the cache, for a program that builds rule sets on the
// fly; past it, indexes are built for each call.
const maxCached = 64

var cached struct {
	sync.Mutex
	n int
}

func indexFor(rules []Rule) *index {
	if len(rules) == 0 {
		return &index{}
	}
	key := ruleSet{&rules[0], len(rules)}
	if ix, ok := indexes.Load(key); ok {
		return ix.(*index)
	}
	ix := newIndex(rules)
	cached.Lock()
	defer cached.Unlock()
	if cached.n < maxCached {
		if prev, loaded := indexes.LoadOrStore(key, ix); loaded {
			return prev.(*index)
		}
		cached.n++
	}
	return ix
}
