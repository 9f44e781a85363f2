package toolloop

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type decodeAll struct {
	S     string  `json:"s"`
	B     bool    `json:"b,omitempty"`
	I     int     `json:"i"`
	I8    int8    `json:"i8"`
	U16   uint16  `json:"u16"`
	U     uint    `json:"u"`
	F32   float32 `json:"f32"`
	F     float64 `json:"f"`
	Plain string
	Skip  string `json:"-"`
	//lint:ignore SA5008 "-," names the key "-", which is what this case is about
	Dash string `json:"-,"`
	Mode mode   `json:"mode"`
	//lint:ignore U1000 unexported: encoding/json ignores it, and so must the decoder
	inner int
}

type mode string

// fastDecodes decodes b into a decodeAll with the fast decoder, reporting
// whether it was sure, and with encoding/json.
func fastDecodes(t testing.TB, b []byte) (fast decodeAll, ok bool, slow decodeAll, slowErr error) {
	t.Helper()
	d := newStructDecoder(reflect.TypeFor[decodeAll]())
	require.NotNil(t, d)
	ok = d.decode(b, reflect.ValueOf(&fast).Elem())
	slowErr = json.Unmarshal(b, &slow)
	return fast, ok, slow, slowErr
}

func TestFastDecodeAgreesWithEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		fast bool // the fast decoder is sure
	}{
		{"empty", `{}`, true},
		{"space", " \n{ } \t", true},
		{"all kinds", `{"s":"x","b":true,"i":-12,"i8":127,"u16":65535,"u":0,"f32":1.5,"f":-2e-3,"Plain":"p","-":"d","mode":"fast"}`, true},
		{"null keeps zero", `{"s":null,"i":null}`, true},
		{"unknown keys skipped", `{"zzz":[1,{"a":[true,null]}],"s":"x","other":{"k":"v"}}`, true},
		{"duplicate key, last wins", `{"s":"a","s":"b"}`, true},
		{"unicode text", `{"s":"héllo, 世界"}`, true},
		{"escaped text", `{"s":"a\"b\\n\u00e9\ud83d\ude00"}`, true},
		{"lone surrogate", `{"s":"\ud800"}`, true},
		{"empty key", `{"":1}`, true},
		{"json-minus field ignored", `{"Skip":"x"}`, true},
		{"case-insensitive key", `{"S":"x"}`, false},
		{"case-insensitive plain", `{"plain":"x"}`, false},
		{"kelvin sign key", "{\"\u212a\":1}", false},
		{"escaped key", `{"\u0073":"x"}`, false},
		{"int with fraction", `{"i":1.0}`, false},
		{"int overflow", `{"i8":128}`, false},
		{"negative uint", `{"u":-1}`, false},
		{"negative zero uint", `{"u":-0}`, false},
		{"float overflow", `{"f32":1e39}`, false},
		{"string into int", `{"i":"3"}`, false},
		{"number into string", `{"s":3}`, false},
		{"number into bool", `{"b":1}`, false},
		{"object into string", `{"s":{}}`, false},
		{"invalid utf8, replaced", "{\"s\":\"\xff\"}", true},
		{"trailing comma", `{"s":"x",}`, false},
		{"trailing data", `{"s":"x"} {}`, false},
		{"not an object", `["s"]`, false},
		{"truncated", `{"s":"x"`, false},
		{"empty input", ``, false},
		{"bad literal", `{"b":tru}`, false},
		{"leading zero", `{"i":01}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, ok, slow, slowErr := fastDecodes(t, []byte(tc.in))
			assert.Equal(t, tc.fast, ok)
			if ok {
				require.NoError(t, slowErr, "the fast decoder accepted what encoding/json rejects")
				assert.Equal(t, slow, fast)
			}
		})
	}
}

func TestFastDecoderOnlyForFlatStructs(t *testing.T) {
	type withTime struct {
		At time.Time `json:"at"`
	}
	type withString struct {
		N int `json:"n,string"`
	}
	type withSlice struct {
		L []string `json:"l"`
	}
	type withPointer struct {
		P *string `json:"p"`
	}
	type embedded struct{ decodeAll }
	type caseTwins struct {
		A string `json:"name"`
		B string `json:"Name"`
	}
	type oddTag struct {
		//lint:ignore SA5008 a tag encoding/json finds invalid is what this case is about
		A string `json:"it's"` // encoding/json ignores the name and uses "A"
	}
	type withNumber struct {
		N json.Number `json:"n"`
	}
	for name, typ := range map[string]reflect.Type{
		"text unmarshaler":     reflect.TypeFor[withTime](),
		"string option":        reflect.TypeFor[withString](),
		"slice":                reflect.TypeFor[withSlice](),
		"pointer":              reflect.TypeFor[withPointer](),
		"embedded":             reflect.TypeFor[embedded](),
		"names differ by case": reflect.TypeFor[caseTwins](),
		"json.Number":          reflect.TypeFor[withNumber](),
		"invalid tag name":     reflect.TypeFor[oddTag](),
		"not a struct":         reflect.TypeFor[map[string]any](),
		"pointer to struct":    reflect.TypeFor[*decodeAll](),
	} {
		assert.Nil(t, newStructDecoder(typ), name)
	}
	assert.NotNil(t, newStructDecoder(reflect.TypeFor[struct{}]()))
}

// FuzzFastDecode checks that whenever the fast decoder is sure, it
// decodes exactly what encoding/json decodes.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{
		`{"s":"x","b":true,"i":-12,"i8":127,"u16":65535,"u":0,"f32":1.5,"f":-2e-3,"Plain":"p","mode":"m"}`,
		`{"s":"a\"b","zzz":[1,{"a":null}]}`, `{"i":1e2}`, `{"S":"x"}`, `{"s":"\ud800"}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	d := newStructDecoder(reflect.TypeFor[decodeAll]())
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, slow decodeAll
		if !d.decode(b, reflect.ValueOf(&fast).Elem()) {
			return
		}
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("fast decoder accepted %q, encoding/json says %v", b, err)
		}
		if fast != slow {
			t.Fatalf("%q: fast %+v, encoding/json %+v", b, fast, slow)
		}
	})
}

func TestTypedToolFallsBackToEncodingJSON(t *testing.T) {
	var got decodeAll
	tool := NewTool("t", "t", func(_ context.Context, in decodeAll) (any, error) {
		got = in
		return nil, nil
	})
	require.NotNil(t, tool.dec)
	call := &Call{Name: "t", Arguments: json.RawMessage(`{"S":"upper","i":3}`)}
	_, err := tool.Run(context.Background(), call)
	require.NoError(t, err)
	assert.Equal(t, decodeAll{S: "upper", I: 3}, got, "a key that matches only ignoring case decodes as encoding/json does")

	// A value the fast decoder cannot take is refused as encoding/json refuses it.
	call.Arguments = json.RawMessage(`{"s":"first","i":1.5}`)
	_, err = tool.Run(context.Background(), call)
	var te *ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, KindInvalidArgs, te.Kind)
}
