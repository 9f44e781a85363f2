package mcp

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// maxNameLen is the longest tool name every major provider accepts.
const maxNameLen = 64

// Separator joins a server's name and a tool's name into the name the
// model sees: server "github" and tool "create_issue" make
// "github__create_issue".
const Separator = "__"

// sanitize replaces every character outside a-z, A-Z, 0-9, _ and - with _.
func sanitize(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && nameByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// ToolName returns the name under which a server's tool is offered to the
// model before any disambiguation: server + "__" + tool, with every
// character outside a-z, A-Z, 0-9, _ and - replaced by _, cut to 64
// characters. When two of a server's tools come out with the same name, the
// source keeps it for the one whose name needed no change (or, failing
// that, the first by original name) and gives the others a suffix made from
// a hash of their original name, so names are stable from one listing to
// the next.
func ToolName(server, tool string) string {
	name, _ := baseName(server, tool)
	return name
}

// baseName returns the namespaced, sanitized, cut name, and whether it is
// faithful: nothing was replaced or cut.
func baseName(server, tool string) (string, bool) {
	raw := server + Separator + tool
	name := sanitize(raw)
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return name, name == raw
}

// assignNames maps each of a server's tool names to a unique model-facing
// name. The result does not depend on the order of tools.
func assignNames(server string, tools []string) map[string]string {
	type cand struct {
		orig, base string
		exact      bool
	}
	cands := make([]cand, len(tools))
	for i, t := range tools {
		base, exact := baseName(server, t)
		cands[i] = cand{orig: t, base: base, exact: exact}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.orig, b.orig)
	})
	taken := make(map[string]bool, len(cands))
	out := make(map[string]string, len(cands))
	for _, c := range cands {
		name := c.base
		for n := 1; taken[name]; n++ {
			key := c.orig
			if n > 1 {
				key += "#" + strconv.Itoa(n)
			}
			name = withHash(c.base, key)
		}
		taken[name] = true
		out[c.orig] = name
	}
	return out
}

// withHash appends to base a short hash of key, cutting base to keep the
// whole within maxNameLen.
func withHash(base, key string) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	suffix := "_" + strconv.FormatUint(uint64(h.Sum32()), 36)
	if len(base)+len(suffix) > maxNameLen {
		base = base[:maxNameLen-len(suffix)]
	}
	return base + suffix
}
