package temporal_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"log"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/temporal"
)

// aesGCMCodec is a converter.PayloadCodec that encrypts every payload
// with AES-GCM: a transcript, a tool's output, a model's answer. Temporal
// stores only ciphertext; clients and workers with the key read it.
type aesGCMCodec struct{ aead cipher.AEAD }

const encryptedEncoding = "binary/encrypted"

func newAESGCMCodec(key []byte) (*aesGCMCodec, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &aesGCMCodec{aead: aead}, nil
}

func (c *aesGCMCodec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, c.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(encryptedEncoding)},
			Data:     c.aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

func (c *aesGCMCodec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != encryptedEncoding {
			out[i] = p // not ours
			continue
		}
		n := c.aead.NonceSize()
		if len(p.GetData()) < n {
			return nil, errors.New("ciphertext too short")
		}
		plain, err := c.aead.Open(nil, p.GetData()[:n], p.GetData()[n:], nil)
		if err != nil {
			return nil, err
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return nil, err
		}
		out[i] = &orig
	}
	return out, nil
}

// Transcripts that hold secrets are encrypted at rest by a payload codec
// in the data converter of every client: the workers' (which they take
// from their client) and the starters'. Temporal's history then holds
// ciphertext only. To keep large transcripts out of the history as well,
// list a StoreCodec before the encrypting codec: the store then receives
// ciphertext too.
func Example_encryption() {
	key := make([]byte, 32) // in production, from your key management, the same everywhere
	if _, err := rand.Read(key); err != nil {
		log.Fatal(err)
	}
	codec, err := newAESGCMCodec(key)
	if err != nil {
		log.Fatal(err)
	}
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec)
	// c, err := client.Dial(client.Options{DataConverter: dc})

	in := temporal.Input{Messages: []toolloop.Message{toolloop.UserMessage("Deploy with the token sk-live-1234.")}}
	p, err := dc.ToPayload(in)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(p.GetMetadata()[converter.MetadataEncoding]), bytes.Contains(p.GetData(), []byte("sk-live-1234")))
	var back temporal.Input
	if err := dc.FromPayload(p, &back); err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.Messages[0].Text())
	// Output:
	// binary/encrypted false
	// Deploy with the token sk-live-1234.
}
