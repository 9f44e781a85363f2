package toolloop

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The fast decoder fills the input struct of a typed tool in one pass over
// the arguments, for the structs most tools have: flat, with string, bool,
// integer and float fields. It decodes exactly as encoding/json would, or
// not at all: on anything it is unsure about (an escaped key, a key that
// matches a field only when case is ignored, a number that does not fit,
// a syntax error) it reports false and the caller decodes with
// encoding/json, which stays the authority and writes the errors.
// FuzzFastDecode checks that the two always agree.

// structDecoder decodes a JSON object into one struct type.
type structDecoder struct {
	fields []decField
}

type decField struct {
	name  string
	index int
	kind  reflect.Kind
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether t, or a pointer to it, has its own
// decoding, which the fast decoder would bypass.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || pt.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// newStructDecoder returns a decoder for t, or nil if t is not a struct
// of the flat kind.
func newStructDecoder(t reflect.Type) *structDecoder {
	if t.Kind() != reflect.Struct || decodesItself(t) || t.NumField() > 64 {
		return nil
	}
	d := &structDecoder{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // embedded structs promote fields: leave those to encoding/json
		}
		if !f.IsExported() {
			continue
		}
		name := f.Name
		tag, hasTag := f.Tag.Lookup("json")
		if hasTag {
			if tag == "-" {
				continue
			}
			tagName, opts, _ := strings.Cut(tag, ",")
			if strings.Contains(","+opts+",", ",string,") {
				return nil
			}
			if tagName != "" {
				name = tagName
			}
		}
		if !validTagName(name) || seen[strings.ToLower(name)] {
			return nil // names that differ only by case resolve by rules this decoder does not keep
		}
		seen[strings.ToLower(name)] = true
		k := f.Type.Kind()
		switch k {
		case reflect.String, reflect.Bool,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
		default:
			return nil
		}
		if decodesItself(f.Type) || f.Type == reflect.TypeFor[json.Number]() {
			return nil
		}
		d.fields = append(d.fields, decField{name: name, index: i, kind: k})
	}
	return d
}

// validTagName reports whether name is one encoding/json takes from a tag
// and is plain ASCII, so that matching keys to it needs no Unicode case
// folding. For any other name the decoder steps aside.
func validTagName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) >= 0) {
			return false
		}
	}
	return name != ""
}

// field finds the field named key, exactly. It reports ok false when key
// names no field exactly but might match one ignoring case, which
// encoding/json would accept.
func (d *structDecoder) field(key []byte) (f *decField, ok bool) {
	for i := range d.fields {
		if d.fields[i].name == string(key) {
			return &d.fields[i], true
		}
	}
	for i := range d.fields {
		if len(d.fields[i].name) == len(key) && asciiFoldEqual(d.fields[i].name, key) {
			return nil, false
		}
	}
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return nil, false // 'ſ' and 'K' fold to ASCII letters
		}
	}
	return nil, true
}

func asciiFoldEqual(a string, b []byte) bool {
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// decode fills v, a settable struct of the decoder's type, from b. It
// reports false if it could not be sure to decode as encoding/json would;
// v may then hold part of the arguments, and the caller must reset it.
func (d *structDecoder) decode(b []byte, v reflect.Value) bool {
	return eachMember(b, func(key, raw []byte) bool {
		f, ok := d.field(key)
		return ok && (f == nil || f.set(v.Field(f.index), raw))
	})
}

// set stores the JSON value raw, known to be well-formed, in fv.
func (f *decField) set(fv reflect.Value, raw []byte) bool {
	if raw[0] == 'n' {
		return true // null leaves the field as it is
	}
	switch f.kind {
	case reflect.String:
		if raw[0] != '"' {
			return false
		}
		s := raw[1 : len(raw)-1]
		if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
			return f.setString(fv, raw)
		}
		fv.SetString(string(s))
	case reflect.Bool:
		switch raw[0] {
		case 't':
			fv.SetBool(true)
		case 'f':
			fv.SetBool(false)
		default:
			return false
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, fv.Type().Bits())
		if err != nil {
			return false
		}
		fv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if raw[0] == '-' {
			return false
		}
		n, err := strconv.ParseUint(string(raw), 10, fv.Type().Bits())
		if err != nil {
			return false
		}
		fv.SetUint(n)
	case reflect.Float32, reflect.Float64:
		if c := raw[0]; c != '-' && (c < '0' || c > '9') {
			return false
		}
		n, err := strconv.ParseFloat(string(raw), fv.Type().Bits())
		if err != nil {
			return false
		}
		fv.SetFloat(n)
	default:
		return false
	}
	return true
}

// setString decodes a string with escapes or non-ASCII text the way
// encoding/json does.
func (f *decField) setString(fv reflect.Value, raw []byte) bool {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	fv.SetString(s)
	return true
}
