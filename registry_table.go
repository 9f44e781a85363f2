package toolloop

import (
	"hash/maphash"
	"math/bits"
)

// nameTable maps a tool name to the entry it resolves to. It is
// persistent: a put makes a new table and leaves the old one as it was,
// sharing all but the few nodes on the path to the new name, so the
// registry can publish a table that lookups read without a lock and still
// add a tool in time that does not grow with the number of tools.
//
// It is a hash array mapped trie: each node spends 5 bits of the name's
// 64-bit hash to pick one of up to 32 slots, and stores only the slots in
// use. Past the hash's last bits, a node is a plain list of the names
// whose hashes are equal.
type nameTable struct {
	root *tableNode
	n    int
}

type tableNode struct {
	bitmap uint32      // which of the 32 slots are in use; unused in a list node
	slots  []tableSlot // the slots in use, in slot order
	owner  *tableOwner // the builder that may change the node in place; nil once published
}

// tableSlot holds either a child node or one entry.
type tableSlot struct {
	node *tableNode
	e    *entry
}

// tableOwner marks the nodes one builder made, which it may change in
// place because nothing else sees them yet. It has a size so that two
// owners are never the same pointer.
type tableOwner struct{ _ byte }

const (
	tableBits = 5
	tableMask = 1<<tableBits - 1
)

var tableSeed = maphash.MakeSeed()

func hashName(name string) uint64 { return maphash.String(tableSeed, name) }

// len is the number of names in the table.
func (t nameTable) len() int { return t.n }

// get returns the entry name resolves to, or nil.
func (t nameTable) get(name string) *entry {
	return t.getHash(hashName(name), name)
}

func (t nameTable) getHash(h uint64, name string) *entry {
	n := t.root
	for shift := uint(0); n != nil; shift += tableBits {
		if shift >= 64 {
			for _, s := range n.slots {
				if s.e.spec.Name == name {
					return s.e
				}
			}
			return nil
		}
		bit := uint32(1) << (h >> shift & tableMask)
		if n.bitmap&bit == 0 {
			return nil
		}
		s := &n.slots[bits.OnesCount32(n.bitmap&(bit-1))]
		if s.node == nil {
			if s.e.spec.Name == name {
				return s.e
			}
			return nil
		}
		n = s.node
	}
	return nil
}

// appendTo appends every entry of the table to dst, in no useful order.
func (t nameTable) appendTo(dst []*entry) []*entry {
	var walk func(n *tableNode)
	walk = func(n *tableNode) {
		for _, s := range n.slots {
			if s.node != nil {
				walk(s.node)
			} else {
				dst = append(dst, s.e)
			}
		}
	}
	if t.root != nil {
		walk(t.root)
	}
	return dst
}

// tableBuilder makes a new table from an old one. Nodes it copies or
// makes are its own until table is called, so many puts in a row copy
// each shared node once, not once per put.
type tableBuilder struct {
	t     nameTable
	owner *tableOwner
	hash  func(string) uint64 // hashName; tests choose hashes that collide
}

func (t nameTable) builder() *tableBuilder {
	return &tableBuilder{t: t, owner: new(tableOwner), hash: hashName}
}

// table returns the table built so far. Later puts leave it unchanged.
func (b *tableBuilder) table() nameTable {
	b.owner = new(tableOwner)
	return b.t
}

// put maps e's name to e and returns the entry the name mapped to
// before, or nil.
func (b *tableBuilder) put(e *entry) (prev *entry) {
	b.t.root, prev = b.insert(b.t.root, 0, b.hash(e.spec.Name), e)
	if prev == nil {
		b.t.n++
	}
	return prev
}

// own returns n if the builder may change it, else a copy it may change.
func (b *tableBuilder) own(n *tableNode, extra int) *tableNode {
	if n.owner == b.owner {
		return n
	}
	slots := make([]tableSlot, len(n.slots), len(n.slots)+extra)
	copy(slots, n.slots)
	return &tableNode{bitmap: n.bitmap, slots: slots, owner: b.owner}
}

// insert puts e, whose name has hash h, in the subtree of n, which is at
// shift, and returns the new subtree and the entry e replaced.
func (b *tableBuilder) insert(n *tableNode, shift uint, h uint64, e *entry) (*tableNode, *entry) {
	leaf := tableSlot{e: e}
	if n == nil {
		return b.pair(shift, h, e, 0, nil), nil
	}
	name := e.spec.Name
	if shift >= 64 { // a list of names with equal hashes
		for i, s := range n.slots {
			if s.e.spec.Name == name {
				n = b.own(n, 0)
				n.slots[i] = leaf
				return n, s.e
			}
		}
		n = b.own(n, 1)
		n.slots = append(n.slots, leaf)
		return n, nil
	}
	bit := uint32(1) << (h >> shift & tableMask)
	i := bits.OnesCount32(n.bitmap & (bit - 1))
	if n.bitmap&bit == 0 {
		n = b.own(n, 1)
		n.bitmap |= bit
		n.slots = append(n.slots, tableSlot{})
		copy(n.slots[i+1:], n.slots[i:])
		n.slots[i] = leaf
		return n, nil
	}
	s := n.slots[i]
	var prev *entry
	switch {
	case s.node != nil:
		child, p := b.insert(s.node, shift+tableBits, h, e)
		if child == s.node {
			return n, p // changed in place
		}
		s, prev = tableSlot{node: child}, p
	case s.e.spec.Name == name:
		s, prev = leaf, s.e
	default:
		s = tableSlot{node: b.pair(shift+tableBits, h, e, b.hash(s.e.spec.Name), s.e)}
	}
	n = b.own(n, 0)
	n.slots[i] = s
	return n, prev
}

// pair makes a node at shift holding entry a, whose name has hash ha,
// and, unless it is nil, entry c, of another name, whose name has hash hc.
func (b *tableBuilder) pair(shift uint, ha uint64, a *entry, hc uint64, c *entry) *tableNode {
	n := &tableNode{owner: b.owner}
	if c == nil {
		n.bitmap = 1 << (ha >> shift & tableMask)
		n.slots = []tableSlot{{e: a}}
		return n
	}
	if shift >= 64 {
		n.slots = []tableSlot{{e: a}, {e: c}}
		return n
	}
	ia, ic := ha>>shift&tableMask, hc>>shift&tableMask
	switch {
	case ia == ic:
		n.bitmap = 1 << ia
		n.slots = []tableSlot{{node: b.pair(shift+tableBits, ha, a, hc, c)}}
	case ia < ic:
		n.bitmap = 1<<ia | 1<<ic
		n.slots = []tableSlot{{e: a}, {e: c}}
	default:
		n.bitmap = 1<<ia | 1<<ic
		n.slots = []tableSlot{{e: c}, {e: a}}
	}
	return n
}
