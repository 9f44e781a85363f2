package looptest

import "reflect"

// deepCopy returns a copy of v that shares nothing with it that either
// side could change: pointers, slices and maps are copied all the way
// down. Bytes are copied as they are, which a copy through JSON cannot
// do: a json.RawMessage keeps invalid JSON, duplicate keys, its
// whitespace and nesting past the decoder's limit, and a string keeps
// invalid UTF-8. Unexported fields, functions and channels are shared,
// and v must hold no cycle (the loop's types hold none).
func deepCopy[T any](v T) T {
	out := reflect.New(reflect.TypeFor[T]()).Elem()
	copyValue(out, reflect.ValueOf(&v).Elem())
	return out.Interface().(T)
}

// copyValue sets dst, a settable zero value of src's type, to a deep copy
// of src.
func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		copyValue(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		if flat(src.Type().Elem()) {
			reflect.Copy(s, src)
		} else {
			for i := range src.Len() {
				copyValue(s.Index(i), src.Index(i))
			}
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			k := reflect.New(src.Type().Key()).Elem()
			copyValue(k, it.Key())
			e := reflect.New(src.Type().Elem()).Elem()
			copyValue(e, it.Value())
			m.SetMapIndex(k, e)
		}
		dst.Set(m)
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		e := reflect.New(src.Elem().Type()).Elem()
		copyValue(e, src.Elem())
		dst.Set(e)
	case reflect.Struct:
		dst.Set(src)
		for i := range src.NumField() {
			if f := dst.Field(i); f.CanSet() {
				f.SetZero()
				copyValue(f, src.Field(i))
			}
		}
	case reflect.Array:
		for i := range src.Len() {
			copyValue(dst.Index(i), src.Index(i))
		}
	default:
		dst.Set(src)
	}
}

// flat reports whether values of t hold nothing a copy must follow.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	}
	return false
}
