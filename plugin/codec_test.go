package plugin

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// TestMsgReader: messages over the limit are skipped, whole, and the
// stream goes on with the next message, type definitions included.
func TestMsgReader(t *testing.T) {
	type msg struct{ Text string }
	sizes := []int{10, 100, 5000, 40, 70000, 0, 200}
	const limit = 4096
	var stream bytes.Buffer
	enc := gob.NewEncoder(&stream)
	for _, n := range sizes {
		require.NoError(t, enc.Encode(msg{Text: strings.Repeat("a", n)}))
	}
	dec := newDecoder(&stream, limit)
	for _, n := range sizes {
		var m msg
		err := dec.Decode(&m)
		if n > limit {
			var tl *tooLargeError
			require.ErrorAs(t, err, &tl, "a %d-byte text", n)
			assert.Greater(t, tl.size, int64(n), "the size is the encoded message's")
			assert.EqualValues(t, limit, tl.limit)
			continue
		}
		require.NoError(t, err, "a %d-byte text", n)
		assert.Len(t, m.Text, n)
	}
	assert.Zero(t, stream.Len(), "the stream was read to its end")
}

func TestMsgReaderCorruptCount(t *testing.T) {
	tests := []struct {
		name   string
		stream []byte
	}{
		{name: "count longer than 8 bytes", stream: []byte{0x80, 1, 2, 3}},
		{name: "count beyond int64", stream: []byte{0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{name: "oversize message cut short", stream: []byte{0xfd, 0x10, 0x00, 0x00, 'x'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v struct{ A int }
			err := newDecoder(bytes.NewReader(tt.stream), 1024).Decode(&v)
			require.Error(t, err)
			var tl *tooLargeError
			assert.False(t, errors.As(err, &tl), "not a message skipped whole: %v", err)
		})
	}
}

// TestClientCodecRefusesRunReply: a Run reply over the limit is marked
// refused, not decoded, and the codec reads the next reply.
func TestClientCodecRefusesRunReply(t *testing.T) {
	var stream bytes.Buffer
	enc := gob.NewEncoder(&stream)
	big, err := json.Marshal(toolloop.TextResult(strings.Repeat("x", 10000)))
	require.NoError(t, err)
	small, err := json.Marshal(toolloop.TextResult("ok"))
	require.NoError(t, err)
	require.NoError(t, enc.Encode(wire.RunReply{Result: big}))
	require.NoError(t, enc.Encode(wire.RunReply{Result: small}))

	c := newClientCodec(nopCloser{&stream}, 4096)
	var r1, r2 wire.RunReply
	require.NoError(t, c.ReadResponseBody(&r1))
	assert.Greater(t, r1.Refused(), int64(10000))
	assert.Nil(t, r1.Result)
	require.NoError(t, c.ReadResponseBody(&r2))
	assert.Zero(t, r2.Refused())
	assert.JSONEq(t, string(small), string(r2.Result))
}

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// TestFieldOf: dispense finds go-plugin's unexported fields only when
// they have the type it expects, and otherwise falls back.
func TestFieldOf(t *testing.T) {
	type hidden struct {
		n    int
		name string
	}
	v := reflect.ValueOf(&hidden{n: 7, name: "x"}).Elem()
	n, ok := fieldOf[int](v, "n")
	assert.True(t, ok)
	assert.Equal(t, 7, n)
	_, ok = fieldOf[int](v, "name")
	assert.False(t, ok, "a field of another type")
	_, ok = fieldOf[int](v, "missing")
	assert.False(t, ok, "no such field")

	_, _, ok = rpcClientParts(nil)
	assert.False(t, ok, "not a net/rpc client")
}
