package toolloop

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// undescribableError is what [SchemaFor] (and so [NewTool] and
// [OutputFormatFor]) reports for an input type with a field that JSON
// cannot carry, such as a channel or a function: a model could never
// send a value for it.
type undescribableError struct {
	// Type is the input type.
	Type reflect.Type
	// Path is the field's path from the input type, in Go names: "Items[].Done"
	// for a field Done of the elements of a slice field Items.
	Path string
	// Field is the field's type.
	Field reflect.Type
	// recursive says Field contains the field: a recursive type.
	recursive bool
}

// Error implements the error interface.
func (e *undescribableError) Error() string {
	if e.Field == e.Type || e.recursive {
		return fmt.Sprintf("input type %s: field %s refers back to %s: a tool's schema is written out whole, so its type cannot contain itself",
			e.Type, e.Path, e.Field)
	}
	return fmt.Sprintf("input type %s: field %s has type %s, which JSON cannot carry: tag it `json:\"-\"`, unexport it, or change its type",
		e.Type, e.Path, e.Field)
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// describable checks that every field of t that JSON reads can be
// described by a schema, and names the first one that cannot: a type
// JSON cannot carry, or a field whose type contains itself, which the
// schema reflector (writing every type out in place) would follow until
// the stack overflows.
func describable(t reflect.Type) error {
	c := schemaCheck{root: t, seen: map[reflect.Type]bool{}, active: map[reflect.Type]bool{}}
	return c.walk(t, "")
}

type schemaCheck struct {
	root reflect.Type
	// seen holds the struct types checked whole; active those being
	// checked, whose fields lead back to them if met again.
	seen, active map[reflect.Type]bool
}

func (c *schemaCheck) walk(t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if c.active[t] {
		return &undescribableError{Type: c.root, Path: path, Field: t, recursive: true}
	}
	if c.seen[t] || selfDescribed(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return &undescribableError{Type: c.root, Path: orDefault(path, "(itself)"), Field: t}
	case reflect.Slice, reflect.Array:
		return c.walk(t.Elem(), path+"[]")
	case reflect.Map:
		if err := c.walkMapKey(t, path); err != nil {
			return err
		}
		return c.walk(t.Elem(), path+"[value]")
	case reflect.Struct:
		c.active[t] = true
		defer func() { c.active[t], c.seen[t] = false, true }()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("json") == "-" {
				continue
			}
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			if err := c.walk(f.Type, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkMapKey checks that a map's keys are ones encoding/json writes as
// object keys: strings, integers, or text marshalers.
func (c *schemaCheck) walkMapKey(t reflect.Type, path string) error {
	k := t.Key()
	switch k.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return nil
	}
	if k.Implements(textMarshaler) || reflect.PointerTo(k).Implements(textMarshaler) {
		return nil
	}
	return &undescribableError{Type: c.root, Path: strings.TrimPrefix(path+"[key]", "."), Field: k}
}

// selfDescribed reports whether t says itself how it is written or
// described: a JSON or text marshaler, or a type with a JSONSchema method
// (which the schema reflector asks).
func selfDescribed(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	if t.Implements(jsonMarshaler) || p.Implements(jsonMarshaler) || t.Implements(textMarshaler) || p.Implements(textMarshaler) {
		return true
	}
	_, ok := t.MethodByName("JSONSchema")
	_, pok := p.MethodByName("JSONSchema")
	return ok || pok
}
