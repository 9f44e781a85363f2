package toolloop

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The fast path accepts arguments without decoding them, for the schemas
// most tools have: a flat object of typed properties. It only ever says
// "certainly valid"; anything it is unsure about, and every failure, goes to
// the full validator (santhosh-tekuri/jsonschema), which stays the
// authority and writes the messages. FuzzFastPath checks that the fast path
// never accepts what the full validator rejects.

type fastKind uint8

const (
	fastAny fastKind = iota
	fastString
	fastInteger
	fastNumber
	fastBoolean
	fastNull
	fastArray
	fastObject
)

var fastKinds = map[string]fastKind{
	"string": fastString, "integer": fastInteger, "number": fastNumber,
	"boolean": fastBoolean, "null": fastNull, "array": fastArray, "object": fastObject,
}

type fastProp struct {
	name  string
	kind  fastKind
	enum  []string // allowed strings, if the property has an enum
	items fastKind // element kind of an array; fastAny when unconstrained
}

type fastSchema struct {
	props    []fastProp
	required uint64
	closed   bool // additionalProperties: false
}

// Keywords that do not constrain a value.
var annotationKeys = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// compileFast returns a fast checker for schema, or nil if the schema
// uses anything beyond the flat subset.
func compileFast(raw json.RawMessage) *fastSchema {
	var root map[string]json.RawMessage
	if json.Unmarshal(raw, &root) != nil {
		return nil
	}
	fs := &fastSchema{}
	var required []string
	for k, v := range root {
		switch k {
		case "type":
			var t string
			if json.Unmarshal(v, &t) != nil || t != "object" {
				return nil
			}
		case "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil || len(props) > 64 {
				return nil
			}
			for name, ps := range props {
				p, ok := compileFastProp(name, ps)
				if !ok {
					return nil
				}
				fs.props = append(fs.props, p)
			}
		case "required":
			if json.Unmarshal(v, &required) != nil {
				return nil
			}
		case "additionalProperties":
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return nil
			}
			fs.closed = !b
		case "$schema", "$id":
		default:
			if !annotationKeys[k] {
				return nil
			}
		}
	}
	for _, r := range required {
		i := fs.index([]byte(r))
		if i < 0 {
			return nil // required but undeclared: leave it to the full validator
		}
		fs.required |= 1 << i
	}
	return fs
}

func compileFastProp(name string, raw json.RawMessage) (fastProp, bool) {
	p := fastProp{name: name}
	var s map[string]json.RawMessage
	if json.Unmarshal(raw, &s) != nil {
		return p, false
	}
	for k, v := range s {
		switch k {
		case "type":
			var t string
			if json.Unmarshal(v, &t) != nil {
				return p, false
			}
			kind, ok := fastKinds[t]
			if !ok {
				return p, false
			}
			p.kind = kind
		case "enum":
			var vals []any
			if json.Unmarshal(v, &vals) != nil || len(vals) == 0 {
				return p, false
			}
			for _, x := range vals {
				s, ok := x.(string)
				if !ok {
					return p, false // null, numbers...: leave to the full validator
				}
				p.enum = append(p.enum, s)
			}
		case "items":
			var it map[string]json.RawMessage
			if json.Unmarshal(v, &it) != nil {
				return p, false
			}
			for ik, iv := range it {
				if ik == "type" {
					var t string
					if json.Unmarshal(iv, &t) != nil {
						return p, false
					}
					kind, ok := fastKinds[t]
					if !ok || kind == fastArray || kind == fastObject {
						return p, false
					}
					p.items = kind
				} else if !annotationKeys[ik] {
					return p, false
				}
			}
		default:
			if !annotationKeys[k] {
				return p, false
			}
		}
	}
	if p.enum != nil && p.kind != fastString && p.kind != fastAny {
		return p, false
	}
	if _, hasItems := s["items"]; hasItems && p.kind != fastArray {
		return p, false
	}
	return p, true
}

func (fs *fastSchema) index(name []byte) int {
	for i := range fs.props {
		if fs.props[i].name == string(name) {
			return i
		}
	}
	return -1
}

// accepts reports whether b is certainly a valid JSON object that
// satisfies the schema. It checks the JSON syntax strictly as it goes, so
// that it can stand in for json.Valid. False means "ask the full
// validator", which also reports syntax errors.
func (fs *fastSchema) accepts(b []byte) bool {
	var seen uint64
	return eachMember(b, func(key, value []byte) bool {
		if !utf8.Valid(key) {
			return false
		}
		p := fs.index(key)
		if p < 0 {
			return !fs.closed
		}
		if seen&(1<<p) != 0 {
			return false // a duplicate key
		}
		seen |= 1 << p
		return fs.props[p].accepts(value)
	}) && seen&fs.required == fs.required
}

// eachMember checks that b is one JSON object, strictly, and calls member
// with each of its keys (unescaped) and values (well-formed), in order. It
// reports false on a syntax error, on an escaped key (rare: the callers
// leave those to encoding/json), or as soon as member does.
func eachMember(b []byte, member func(key, value []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		end, esc, ok := scanString(b, i)
		if !ok || esc {
			return false
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend, ok := scanValue(b, i, 0)
		if !ok || !member(key, b[i:vend]) {
			return false
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

// accepts checks a value already known to be valid JSON.
func (p *fastProp) accepts(v []byte) bool {
	if !kindAccepts(p.kind, v) {
		return false
	}
	if p.enum != nil {
		if v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
			return false
		}
		s := v[1 : len(v)-1]
		for _, e := range p.enum {
			if string(s) == e {
				return true
			}
		}
		return false
	}
	if p.kind == fastArray && p.items != fastAny {
		i := skipSpace(v, 1)
		if v[i] == ']' {
			return true
		}
		for {
			end, _ := scanValue(v, i, 0)
			if !kindAccepts(p.items, v[i:end]) {
				return false
			}
			i = skipSpace(v, end)
			if v[i] == ']' {
				return true
			}
			i = skipSpace(v, i+1)
		}
	}
	return true
}

func kindAccepts(k fastKind, v []byte) bool {
	c := v[0]
	switch k {
	case fastAny:
		return true
	case fastString:
		return c == '"'
	case fastInteger:
		// Integers written with a fraction or an exponent (1.0, 1e2) are
		// integers too; the full validator decides those.
		return (c == '-' || '0' <= c && c <= '9') && !bytes.ContainsAny(v, ".eE")
	case fastNumber:
		return c == '-' || '0' <= c && c <= '9'
	case fastBoolean:
		return c == 't' || c == 'f'
	case fastNull:
		return c == 'n'
	case fastArray:
		return c == '['
	case fastObject:
		return c == '{'
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// maxFastDepth bounds the nesting the fast path scans; deeper values go to
// the full validator.
const maxFastDepth = 32

// scanValue checks the JSON value at b[i] and returns the index just past
// it.
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case c == '{' || c == '[':
		if depth >= maxFastDepth {
			return i, false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, true
		}
		for {
			if c == '{' {
				end, _, ok := scanString(b, i)
				if !ok {
					return i, false
				}
				i = skipSpace(b, end)
				if i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = skipSpace(b, i+1)
			}
			end, ok := scanValue(b, i, depth+1)
			if !ok {
				return i, false
			}
			i = skipSpace(b, end)
			if i >= len(b) {
				return i, false
			}
			if b[i] == closer {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// scanString checks the string at b[i] and returns the index just past it
// and whether it holds escapes.
func scanString(b []byte, i int) (end int, escaped, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c < 0x20:
			return j, escaped, false
		case c == '\\':
			escaped = true
			j++
			if j >= len(b) {
				return j, escaped, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-j < 5 || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return j, escaped, false
				}
				j += 4
			default:
				return j, escaped, false
			}
		}
	}
	return len(b), escaped, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber checks a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
