package temporal_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/looptest"
	"github.com/toolloop/toolloop/temporal"
)

// newAESCodec is the example's encrypting codec with a fresh key.
func newAESCodec(t *testing.T) *aesGCMCodec {
	key := make([]byte, 32)
	_, err := rand.Read(key)
	require.NoError(t, err)
	c, err := newAESGCMCodec(key)
	require.NoError(t, err)
	return c
}

// vaultAgent reads a secret from a tool and repeats it; the input holds
// it too.
func vaultAgent(secret string, perExec int) temporal.Agent {
	var reg toolloop.ToolRegistry
	reg.MustRegister(toolloop.NewTool("vault", "Read the deploy token.", func(context.Context, struct{}) (any, error) {
		return "token=" + secret, nil
	}))
	reg.MustRegister(toolloop.NewTool("big_log", "Print a long log.", func(context.Context, struct{}) (any, error) {
		return strings.Repeat("compiling unit ok\n", 4000), nil
	}))
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == toolloop.RoleAssistant {
				n++
			}
		}
		switch n {
		case 0:
			return looptest.Calls(looptest.Call("call_1", "vault", `{}`)), nil
		case 1:
			return looptest.Calls(looptest.Call("call_2", "big_log", `{}`)), nil
		}
		return looptest.Text("The token is " + secret + "."), nil
	})
	return temporal.Agent{Loop: &toolloop.AgentLoop{Model: model, Tools: &reg}, MaxTurnsPerExecution: perExec}
}

// runWith runs the vault agent on a real server with a client (and so a
// worker) using dc, and returns the result and every event of every
// execution of the run, as the server stores them.
func runWith(t *testing.T, dc converter.DataConverter, secret string) (*toolloop.RunResult, [][]byte) {
	t.Helper()
	c, err := dialWith(serverAddress(t), dc)
	require.NoError(t, err)
	defer c.Close()
	queue := "codec-" + fmt.Sprint(time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{})
	temporal.Register(w, vaultAgent(secret, 1))
	require.NoError(t, w.Start())
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, temporal.RunOptions{StartWorkflowOptions: client.StartWorkflowOptions{ID: queue, TaskQueue: queue}},
		[]toolloop.Message{toolloop.UserMessage("Use the token " + secret + " to deploy.")})
	require.NoError(t, err)
	res, err := temporal.Wait(ctx, run)
	require.NoError(t, err)
	var events [][]byte
	runID := ""
	for {
		it := c.GetWorkflowHistory(ctx, run.GetID(), runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		runID = ""
		for it.HasNext() {
			e, err := it.Next()
			require.NoError(t, err)
			b, err := proto.Marshal(e)
			require.NoError(t, err)
			events = append(events, b)
			if a := e.GetWorkflowExecutionStartedEventAttributes(); a != nil {
				runID = a.GetContinuedExecutionRunId()
			}
		}
		if runID == "" {
			return res, events
		}
	}
}

func containsAny(events [][]byte, s string) bool {
	for _, e := range events {
		if bytes.Contains(e, []byte(s)) {
			return true
		}
	}
	return false
}

func size(events [][]byte) int {
	n := 0
	for _, e := range events {
		n += len(e)
	}
	return n
}

func newSecret(t *testing.T) string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "sk-test-" + hex.EncodeToString(b)
}

// TestIntegrationEncryptedHistory runs a transcript that holds a secret
// (in the input, in a tool's output, in the model's answer) with an
// encrypting codec on the client and the worker: the history the server
// stores, every execution of it, does not hold the secret, while the
// result the client decodes does. The same run without the codec shows
// that the search finds the secret when it is there.
func TestIntegrationEncryptedHistory(t *testing.T) {
	secret := newSecret(t)
	plainRes, plain := runWith(t, nil, secret)
	require.True(t, containsAny(plain, secret), "without a codec the history holds the secret")
	assert.Contains(t, plainRes.FinalText, secret)

	secret = newSecret(t)
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), newAESCodec(t))
	res, enc := runWith(t, dc, secret)
	assert.False(t, containsAny(enc, secret), "the stored history holds the secret in clear")
	assert.Equal(t, "The token is "+secret+".", res.FinalText)
	assert.Equal(t, "token="+secret, looptest.Results(res.Messages)["call_1"].Text())
	looptest.AssertValid(t, res.Messages)
}

// TestIntegrationStoreCodec keeps payloads in a store, encrypted: the
// history holds keys, the store holds ciphertext, and the client gets the
// whole result back.
func TestIntegrationStoreCodec(t *testing.T) {
	secret := newSecret(t)
	_, plain := runWith(t, nil, secret)

	store := &memStore{}
	secret = newSecret(t)
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(),
		&temporal.StoreCodec{Store: store, MinBytes: 1024}, newAESCodec(t))
	res, stored := runWith(t, dc, secret)
	looptest.AssertValid(t, res.Messages)
	assert.Equal(t, "The token is "+secret+".", res.FinalText)
	log := looptest.Results(res.Messages)["call_2"]
	require.NotNil(t, log)
	assert.Greater(t, len(log.Text()), 60_000, "the run's transcript is large")
	t.Logf("history: %d bytes with the store codec, %d bytes without", size(stored), size(plain))
	assert.Less(t, size(stored)*5, size(plain), "the history holds keys, not transcripts")
	assert.False(t, containsAny(stored, secret))
	assert.False(t, containsAny(stored, "compiling unit ok"), "no transcript in the history")

	store.mu.Lock()
	defer store.mu.Unlock()
	require.NotEmpty(t, store.blobs)
	for key, blob := range store.blobs {
		assert.NotContains(t, string(blob), secret, "the store got ciphertext (%s)", key)
		assert.NotContains(t, string(blob), "compiling unit ok", "the store got ciphertext (%s)", key)
	}
}

// TestStoreCodec: small payloads stay inline; large ones go to the store
// under their hash and come back as they were; a store that returns other
// data, or none, is an error.
func TestStoreCodec(t *testing.T) {
	store := &memStore{}
	codec := &temporal.StoreCodec{Store: store, MinBytes: 64}
	dc := converter.GetDefaultDataConverter()
	small, err := dc.ToPayload("hi")
	require.NoError(t, err)
	large, err := dc.ToPayload(strings.Repeat("x", 500))
	require.NoError(t, err)

	enc, err := codec.Encode([]*commonpb.Payload{small, large})
	require.NoError(t, err)
	assert.True(t, proto.Equal(small, enc[0]), "a small payload stays inline")
	assert.Less(t, len(enc[1].GetData()), 100)
	assert.Equal(t, 1, store.puts)
	dec, err := codec.Decode(enc)
	require.NoError(t, err)
	assert.True(t, proto.Equal(small, dec[0]))
	assert.True(t, proto.Equal(large, dec[1]))

	again, err := codec.Encode([]*commonpb.Payload{large})
	require.NoError(t, err)
	assert.Equal(t, enc[1].GetData(), again[0].GetData(), "the same payload, the same key")
	assert.Len(t, store.blobs, 1)

	key := string(enc[1].GetData())
	store.blobs[key] = []byte("tampered")
	_, err = codec.Decode(enc[1:])
	require.Error(t, err)
	delete(store.blobs, key)
	_, err = codec.Decode(enc[1:])
	require.Error(t, err)

	failing := &temporal.StoreCodec{Store: failStore{}, MinBytes: 64}
	_, err = failing.Encode([]*commonpb.Payload{large})
	require.ErrorIs(t, err, errStoreDown)
}

var errStoreDown = errors.New("store down")

type failStore struct{}

func (failStore) Put(context.Context, string, []byte) error   { return errStoreDown }
func (failStore) Get(context.Context, string) ([]byte, error) { return nil, errStoreDown }
