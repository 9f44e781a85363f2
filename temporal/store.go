package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// PayloadStore keeps large payloads outside Temporal, for a
// [StoreCodec]: a key-value store of immutable blobs (an object store, a
// database table, a directory). Keys are the SHA-256 of the data, in hex,
// so a payload put twice (a replay encodes the payloads of a workflow
// task again) is one entry.
//
// Put must return only once the data is durable: the history will hold
// nothing but the key. Get returns what Put stored under key. Entries
// must live as long as the histories that refer to them (the namespace's
// retention), and as long as the results clients still have to read. Both
// may be called from many goroutines at once.
type PayloadStore interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// DefaultStoreMinBytes is the size from which a StoreCodec with no
// MinBytes moves a payload to its store.
const DefaultStoreMinBytes = 4 << 10

// storedEncoding marks a payload whose data is a key in a PayloadStore.
const storedEncoding = "binary/toolloop-stored"

// StoreCodec is a converter.PayloadCodec that moves every payload of at
// least MinBytes into Store and leaves only its key in Temporal (the
// "claim check" pattern). A run's transcript travels in the payloads of
// its model turns, its continue-as-new input and its result, so with a
// StoreCodec the workflow history holds keys, not transcripts: the size
// of a transcript is no longer bounded by Temporal's payload limit (2 MB
// by default) and a long run's history stays small.
//
// Use it on the client and on every worker, through
// converter.NewCodecDataConverter (client.Options.DataConverter; workers
// take their client's):
//
//	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), &temporal.StoreCodec{Store: s})
//
// The trade-off: every model turn stores the transcript it sends anew
// (under a new key, since the transcript grew), so the store holds the
// sum of a run's transcripts, not the last one; a worker reads payloads
// back when it replays a history (after a restart, or when its cache lost
// the run); and the Temporal UI and CLI show keys unless they use a codec
// server with the same store. Payloads that hold secrets are as safe as
// the store: to encrypt them as well, list the encrypting codec after
// this one, so that the store receives ciphertext.
type StoreCodec struct {
	Store PayloadStore
	// MinBytes is the size of a payload, encoded, from which it goes to
	// the store; 0 means DefaultStoreMinBytes.
	MinBytes int
	// Timeout bounds each Put and Get; 0 means 30 seconds. A failed Put
	// or Get fails the workflow task or activity that needed it, which
	// Temporal retries.
	Timeout time.Duration
}

var _ converter.PayloadCodec = (*StoreCodec)(nil)

// Encode implements converter.PayloadCodec.
func (c *StoreCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	minBytes := c.MinBytes
	if minBytes <= 0 {
		minBytes = DefaultStoreMinBytes
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if proto.Size(p) < minBytes {
			out[i] = p
			continue
		}
		data, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("toolloop/temporal: store codec: %w", err)
		}
		sum := sha256.Sum256(data)
		key := hex.EncodeToString(sum[:])
		ctx, cancel := c.context()
		err = c.Store.Put(ctx, key, data)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("toolloop/temporal: store codec: put %s: %w", key, err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(storedEncoding)},
			Data:     []byte(key),
		}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec. Payloads it did not encode
// pass through.
func (c *StoreCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != storedEncoding {
			out[i] = p
			continue
		}
		key := string(p.GetData())
		ctx, cancel := c.context()
		data, err := c.Store.Get(ctx, key)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("toolloop/temporal: store codec: get %s: %w", key, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != key {
			return nil, fmt.Errorf("toolloop/temporal: store codec: the store returned other data for %s", key)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(data, &orig); err != nil {
			return nil, fmt.Errorf("toolloop/temporal: store codec: %s: %w", key, err)
		}
		out[i] = &orig
	}
	return out, nil
}

func (c *StoreCodec) context() (context.Context, context.CancelFunc) {
	d := c.Timeout
	if d <= 0 {
		d = 30 * time.Second
	}
	return context.WithTimeout(context.Background(), d)
}
