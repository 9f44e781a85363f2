package looptest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
)

type inner struct {
	N    int
	Tags []string
}

type sample struct {
	Raw     json.RawMessage
	Ptr     *inner
	Nil     *inner
	Map     map[string]*inner
	Any     any
	Arr     [2]*inner
	Time    time.Time
	Fn      func() int
	private *inner
}

func TestDeepCopy(t *testing.T) {
	p := &inner{N: 9}
	in := sample{
		Raw:     json.RawMessage(`{"a":1,"a":2}`),
		Ptr:     &inner{N: 1, Tags: []string{"x"}},
		Map:     map[string]*inner{"k": {N: 2}},
		Any:     map[string]any{"list": []any{"y"}},
		Arr:     [2]*inner{{N: 3}, nil},
		Time:    time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC),
		Fn:      func() int { return 7 },
		private: p,
	}
	out := deepCopy(in)
	assert.Equal(t, `{"a":1,"a":2}`, string(out.Raw))
	assert.Equal(t, 1, out.Ptr.N)
	assert.Nil(t, out.Nil)
	assert.True(t, out.Time.Equal(in.Time))
	assert.Equal(t, 7, out.Fn())
	assert.Same(t, p, out.private, "unexported fields are shared")

	// Changing the copy leaves the original alone.
	out.Raw[2] = 'b'
	out.Ptr.Tags[0] = "changed"
	out.Map["k"].N = 20
	out.Map["new"] = nil
	out.Any.(map[string]any)["list"].([]any)[0] = "changed"
	out.Arr[0].N = 30
	assert.Equal(t, `{"a":1,"a":2}`, string(in.Raw))
	assert.Equal(t, "x", in.Ptr.Tags[0])
	assert.Equal(t, 2, in.Map["k"].N)
	assert.Len(t, in.Map, 1)
	assert.Equal(t, "y", in.Any.(map[string]any)["list"].([]any)[0])
	assert.Equal(t, 3, in.Arr[0].N)
}

func TestDeepCopyKeepsNilAndEmptyApart(t *testing.T) {
	r := &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{}, ToolCalls: nil}}
	out := deepCopy(r)
	require.NotNil(t, out.Message.Content)
	assert.Empty(t, out.Message.Content)
	assert.Nil(t, out.Message.ToolCalls)
	assert.Nil(t, deepCopy[*toolloop.Response](nil))
}
