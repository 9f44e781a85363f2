package toolloop

import (
	"slices"
	"strings"
)

// closestNames returns up to n of names that look like a slip for name:
// within a small edit distance, or containing it, or contained in it.
// Closest come first; ties keep the order of names.
func closestNames(name string, names []string, n int) []string {
	return newNameIndex(names).closest(name, n)
}

// A nameIndex finds the names close to a query without measuring the edit
// distance to every name. A name within edit distance k of the query
// shares at least max(len)-1-2k of its character pairs (bigrams) with it,
// since one edit spoils at most two pairs; a name that contains the query,
// or is contained in it, shares all the pairs of the shorter one. The
// index lists, for each pair, the names that have it, so a query counts
// its shared pairs with every name at once and measures the distance only
// to the few names that pass. Names too short for the count to rule them
// out are checked one by one. The result is exactly that of checking
// every name.
type nameIndex struct {
	names []string  // as given
	lower []string  // names in lower case
	byLen [][]int32 // byLen[l]: the names of l bytes, by index
	start []int32   // postings of pair p: post[start[p]:start[p+1]]
	post  []uint32  // a name's index << 8 | how often it has the pair (at most 255)
}

// Characters of tool names each have their own code; every other byte
// shares one, which can only make two names look closer than they are,
// never farther, so no match is lost.
const (
	pairAlphabet = 39
	pairCount    = pairAlphabet * pairAlphabet
)

var pairCode = func() (c [256]uint8) {
	for i := range c {
		switch b := byte(i); {
		case b >= 'a' && b <= 'z':
			c[i] = b - 'a'
		case b >= '0' && b <= '9':
			c[i] = 26 + b - '0'
		case b == '_':
			c[i] = 36
		case b == '-':
			c[i] = 37
		default:
			c[i] = 38
		}
	}
	return c
}()

func pairAt(s string, i int) int {
	return int(pairCode[s[i]])*pairAlphabet + int(pairCode[s[i+1]])
}

func newNameIndex(names []string) *nameIndex {
	ix := &nameIndex{names: names, lower: make([]string, len(names)), start: make([]int32, pairCount+1)}
	// Count each name's distinct pairs, then lay the postings out by pair.
	var seen [pairCount]uint8
	for i, name := range names {
		low := strings.ToLower(name)
		ix.lower[i] = low
		for len(ix.byLen) <= len(low) {
			ix.byLen = append(ix.byLen, nil)
		}
		ix.byLen[len(low)] = append(ix.byLen[len(low)], int32(i))
		for j := 0; j+1 < len(low); j++ {
			p := pairAt(low, j)
			if seen[p] == 0 {
				ix.start[p+1]++
			}
			seen[p] = 1
		}
		for j := 0; j+1 < len(low); j++ {
			seen[pairAt(low, j)] = 0
		}
	}
	for p := range pairCount {
		ix.start[p+1] += ix.start[p]
	}
	ix.post = make([]uint32, ix.start[pairCount])
	fill := slices.Clone(ix.start[:pairCount])
	var count [pairCount]uint8
	for i, low := range ix.lower {
		for j := 0; j+1 < len(low); j++ {
			if p := pairAt(low, j); count[p] < 255 {
				count[p]++
			}
		}
		for j := 0; j+1 < len(low); j++ {
			p := pairAt(low, j)
			if count[p] == 0 {
				continue // posted already
			}
			ix.post[fill[p]] = uint32(i)<<8 | uint32(count[p])
			fill[p]++
			count[p] = 0
		}
	}
	return ix
}

// closest returns up to n names that look like a slip for name, as
// closestNames describes.
func (ix *nameIndex) closest(name string, n int) []string {
	q := strings.ToLower(name)
	lq := len(q)
	limit := max(2, lq/3)
	dist := newDistancer(q)
	best := bestNames{n: n}

	// Names of lengths where the shared pairs rule nothing out are all
	// checked; the others only if they share enough pairs.
	brute := func(l int) bool {
		return abs(lq-l) <= limit && max(lq, l)-1-2*limit <= 0 || lq >= 3 && l <= 1
	}
	var shared []uint16 // pairs name i shares with the query
	if lq >= 2 {
		var qcount [pairCount]uint8
		var qpairs []int
		for j := 0; j+1 < lq; j++ {
			p := pairAt(q, j)
			if qcount[p] == 0 {
				qpairs = append(qpairs, p)
			}
			if qcount[p] < 255 {
				qcount[p]++
			}
		}
		shared = make([]uint16, len(ix.names))
		for _, p := range qpairs {
			for _, v := range ix.post[ix.start[p]:ix.start[p+1]] {
				shared[v>>8] += uint16(min(uint32(qcount[p]), v&0xff))
			}
		}
	}

	// Names within the edit limit; once n are found, only names closer
	// than the farthest of them count, which rules out more.
	for l, ids := range ix.byLen {
		if !brute(l) {
			continue
		}
		for _, i := range ids {
			if k := best.bound(limit); abs(lq-l) <= k {
				best.addWithin(dist.within(ix.lower[i], k), k, int(i))
			}
		}
	}
	for i, s := range shared {
		if s == 0 {
			continue
		}
		c := ix.lower[i]
		lc := len(c)
		if brute(lc) {
			continue // checked above
		}
		if k := best.bound(limit); abs(lq-lc) <= k && int(s) >= max(lq, lc)-1-2*k {
			best.addWithin(dist.within(c, k), k, i)
		}
	}
	if lq < 3 || len(best.found) == n {
		return best.names(ix.names)
	}

	// Fewer than n: names that contain the query or are contained in it
	// come next.
	contains := func(i int) {
		if c := ix.lower[i]; !best.has(i) && (strings.Contains(c, q) || strings.Contains(q, c)) {
			best.add(limit+1, i)
		}
	}
	for l, ids := range ix.byLen {
		if brute(l) {
			for _, i := range ids {
				contains(int(i))
			}
		}
	}
	for i, s := range shared {
		if lc := len(ix.lower[i]); s > 0 && !brute(lc) && int(s) >= min(lq, lc)-1 {
			contains(i)
		}
	}
	return best.names(ix.names)
}

// bestNames keeps the n best matches found so far: by distance, then by
// the name's place.
type bestNames struct {
	n     int
	found []nameMatch // sorted
}

type nameMatch struct{ d, i int }

func (m nameMatch) less(o nameMatch) bool { return m.d < o.d || m.d == o.d && m.i < o.i }

// bound is the largest distance a match may have and still be kept.
func (b *bestNames) bound(limit int) int {
	if len(b.found) < b.n {
		return limit
	}
	return b.found[len(b.found)-1].d
}

// addWithin keeps name i at distance d if d is at most k and the name is
// among the n best.
func (b *bestNames) addWithin(d, k, i int) {
	if d <= k {
		b.add(d, i)
	}
}

// add keeps name i at distance d if it is among the n best.
func (b *bestNames) add(d, i int) {
	m := nameMatch{d, i}
	if b.n == 0 || len(b.found) == b.n && !m.less(b.found[len(b.found)-1]) {
		return
	}
	if len(b.found) == b.n {
		b.found = b.found[:b.n-1]
	}
	at, _ := slices.BinarySearchFunc(b.found, m, func(x, y nameMatch) int {
		if x.less(y) {
			return -1
		}
		return 1
	})
	b.found = slices.Insert(b.found, at, m)
}

func (b *bestNames) has(i int) bool {
	return slices.ContainsFunc(b.found, func(m nameMatch) bool { return m.i == i })
}

func (b *bestNames) names(names []string) []string {
	res := make([]string, len(b.found))
	for j, m := range b.found {
		res[j] = names[m.i]
	}
	return res
}

// A distancer measures the edit distance from one query to many names.
// For a query of up to 64 bytes it runs Myers' bit-parallel algorithm
// (Hyyrö's form for whole strings), a few word operations per byte of the
// name; a longer query falls back to boundedEditDistance.
type distancer struct {
	q   string
	peq [256]uint64 // peq[c]: the positions of byte c in the query
}

func newDistancer(q string) *distancer {
	d := &distancer{q: q}
	if len(q) <= 64 {
		for i := range len(q) {
			d.peq[q[i]] |= 1 << i
		}
	}
	return d
}

// within returns the edit distance from the query to t if it is at most
// k, and k+1 if it is more.
func (d *distancer) within(t string, k int) int {
	m := len(d.q)
	if m > 64 {
		return boundedEditDistance(d.q, t, k)
	}
	if abs(m-len(t)) > k {
		return k + 1
	}
	if m == 0 {
		return len(t)
	}
	last := uint64(1) << (m - 1)
	pv, mv := ^uint64(0), uint64(0)
	score := m
	for j := range len(t) {
		eq := d.peq[t[j]]
		xv := eq | mv
		xh := ((eq & pv) + pv) ^ pv | eq
		ph := mv | ^(xh | pv)
		mh := pv & xh
		if ph&last != 0 {
			score++
		} else if mh&last != 0 {
			score--
		}
		ph = ph<<1 | 1
		mh <<= 1
		pv = mh | ^(xv | ph)
		mv = ph & xv
		// Each byte left can lower the score by one at most.
		if score-(len(t)-1-j) > k {
			return k + 1
		}
	}
	return min(score, k+1)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// boundedEditDistance is the Levenshtein distance between a and b, by
// bytes, if it is at most k, and k+1 if it is more. It fills only the
// band of cells within k of the diagonal and stops at the first row whose
// cells all exceed k.
func boundedEditDistance(a, b string, k int) int {
	la, lb := len(a), len(b)
	big := k + 1
	if abs(la-lb) > k {
		return big
	}
	var buf [2 * 80]int
	var prev, cur []int
	if lb+1 <= len(buf)/2 {
		prev, cur = buf[:lb+1], buf[lb+1:2*(lb+1)]
	} else {
		prev, cur = make([]int, lb+1), make([]int, lb+1)
	}
	for j := range prev {
		prev[j] = min(j, big)
	}
	for i := 1; i <= la; i++ {
		lo, hi := max(1, i-k), min(lb, i+k)
		rowMin := big
		if lo == 1 {
			cur[0] = min(i, big)
			rowMin = cur[0]
		} else {
			cur[lo-1] = big
		}
		for j := lo; j <= hi; j++ {
			v := prev[j-1]
			if a[i-1] != b[j-1] {
				v++
			}
			v = min(v, prev[j]+1, cur[j-1]+1, big)
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if hi < lb {
			cur[hi+1] = big
		}
		if rowMin > k {
			return big
		}
		prev, cur = cur, prev
	}
	return prev[lb]
}
