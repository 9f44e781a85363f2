package providertest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// maxDiffs bounds the differences a diff lists.
const maxDiffs = 20

// diffJSON compares two JSON documents as decoded values and returns
// their differences, one line each (the path, then what was wanted and
// what came), or "" if they match.
func diffJSON(want, got []byte) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "want is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "got is not JSON: " + err.Error()
	}
	var lines []string
	diffValues("$", w, g, &lines)
	if len(lines) > maxDiffs {
		lines = append(lines[:maxDiffs], fmt.Sprintf("... and %d more", len(lines)-maxDiffs))
	}
	return strings.Join(lines, "\n")
}

// diffValues appends to lines the differences between decoded JSON
// values w and g at path.
func diffValues(path string, w, g any, lines *[]string) {
	switch w := w.(type) {
	case map[string]any:
		g, ok := g.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			wv, inW := w[k]
			gv, inG := g[k]
			p := path + "." + k
			switch {
			case !inW:
				*lines = append(*lines, fmt.Sprintf("%s: want nothing, got %s", p, show(gv)))
			case !inG:
				*lines = append(*lines, fmt.Sprintf("%s: want %s, got nothing", p, show(wv)))
			default:
				diffValues(p, wv, gv, lines)
			}
		}
		return
	case []any:
		g, ok := g.([]any)
		if !ok {
			break
		}
		for i := range max(len(w), len(g)) {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(w):
				*lines = append(*lines, fmt.Sprintf("%s: want nothing, got %s", p, show(g[i])))
			case i >= len(g):
				*lines = append(*lines, fmt.Sprintf("%s: want %s, got nothing", p, show(w[i])))
			default:
				diffValues(p, w[i], g[i], lines)
			}
		}
		return
	default:
		if w == g {
			return
		}
	}
	*lines = append(*lines, fmt.Sprintf("%s: want %s, got %s", path, show(w), show(g)))
}

// show writes a decoded JSON value for a diff line, cut short if long.
func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
