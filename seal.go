package toolloop

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// ErrTampered: Resume was given a pause state that is not sealed with the
// loop's key (see [Sealing]), or that was changed after it was sealed, or
// a decision for a call the state does not wait on. Nothing was run.
var ErrTampered = errors.New("toolloop: the pause state or its decisions were tampered with")

// Sealing protects paused states that leave the process (to a web
// client, a queue, a file the agent's tools can reach) from being changed
// before they come back to Resume: a pending call's arguments rewritten,
// a call added, the transcript or the queued messages edited. The zero
// value seals nothing.
type Sealing struct {
	// Key, if set, seals the state of every run that pauses (see
	// [PauseState.Seal]) and makes Resume, ResumeStream and ResumeTyped
	// refuse, with ErrTampered, a state that is not sealed with it or was
	// changed since. It should be 32 random bytes that the program keeps
	// and never sends with the state; a key shorter than 16 bytes fails
	// Validate. A program that changes a paused state itself (adds to
	// PauseState.Queued) seals it again.
	Key []byte
}

// minSealKey is the shortest key Seal and Verify accept.
const minSealKey = 16

// errSealKey: a seal key too short to be secret.
var errSealKey = fmt.Errorf("toolloop: a seal key must be at least %d bytes", minSealKey)

// sealPrefix marks the format of PauseState.MAC.
const sealPrefix = "v1:"

// sealDomain starts the bytes a seal covers, so that they mean nothing
// else to whoever holds the key.
const sealDomain = "toolloop.PauseState.v1"

// Seal sets st.MAC to an HMAC-SHA256, under key, of everything in st that
// the resumed run will act on, so that [PauseState.Verify], and Resume on
// a loop whose [Sealing] holds key, refuse the state if any of it changes.
// It returns an error if key is shorter than 16 bytes or st cannot be
// encoded as JSON (a NaN cost).
//
// The MAC covers sealDomain ("toolloop.PauseState.v1") followed by the
// fields below, each written as the 8-byte big-endian length of its
// canonical JSON and that JSON:
//
//	RunID, Turn, Messages, Results,
//	len(Pending), then each pending call's fields (see below),
//	len(Agents), then each paused agent call's fields,
//	Executions, Accounting, Output, InvalidOutputs, Queued, Interrupt
//
// A call's fields are CallID, Name, Arguments, ParentCallID, Index,
// Reason, Rule, Meta, Notes, and whether Child is set (0 or 1), then,
// if it is, the child's state, nested the same way; then, if Program is
// set, 2 and the program's state: Started, len(Calls), each call's ID,
// Name, Arguments and Result, and its Pending calls as above. MAC itself and a
// child's MAC are left out.
//
// The canonical JSON of a field is encoding/json's encoding of the value
// it reads back as: struct fields in declaration order, map keys sorted,
// numbers in their shortest round-trip form, invalid UTF-8 replaced, and
// embedded JSON (arguments, schemas) compacted with <, > and & escaped
// but otherwise as it is, keys in their order, since that is what a tool
// is handed. Reading back first makes it the same bytes on both sides of
// a JSON round trip, whatever whitespace, order of the state's own keys
// or spelling of its numbers the stored state used: it is what the
// resumed run decodes and acts on. A field is length-prefixed, so no two
// states give the same bytes.
//
// A seal proves that whoever sealed the state holds key; it does not
// make the state secret (encrypt it for that) or single-use: a sealed
// state resumed twice runs its approved calls twice, so a program that
// hands states out keeps track of those it has resumed.
func (st *PauseState) Seal(key []byte) error {
	sum, err := st.mac(key)
	if err != nil {
		return err
	}
	st.MAC = sealPrefix + base64.RawURLEncoding.EncodeToString(sum)
	return nil
}

// Verify reports whether st was sealed with key (see [PauseState.Seal])
// and is unchanged since: nil if so, or an error wrapping ErrTampered
// that says what is wrong (no seal, or a seal that does not match). The
// comparison takes constant time.
func (st *PauseState) Verify(key []byte) error {
	if len(key) < minSealKey {
		return errSealKey
	}
	if st.MAC == "" {
		return fmt.Errorf("%w: the pause state is not sealed", ErrTampered)
	}
	got, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(st.MAC, sealPrefix))
	if err != nil || !strings.HasPrefix(st.MAC, sealPrefix) {
		return fmt.Errorf("%w: the pause state's seal is malformed", ErrTampered)
	}
	want, err := st.mac(key)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrTampered, err)
	}
	if !hmac.Equal(got, want) {
		return fmt.Errorf("%w: the pause state was changed after it was sealed, or sealed with another key", ErrTampered)
	}
	return nil
}

// mac is the HMAC-SHA256 of st under key, as Seal documents it.
func (st *PauseState) mac(key []byte) ([]byte, error) {
	if len(key) < minSealKey {
		return nil, errSealKey
	}
	w := &sealWriter{h: hmac.New(sha256.New, key)}
	w.h.Write([]byte(sealDomain))
	w.state(st)
	if w.err != nil {
		return nil, fmt.Errorf("toolloop: sealing the pause state: %w", w.err)
	}
	return w.h.Sum(nil), nil
}

// sealWriter writes the fields of a state into a MAC, as Seal documents.
type sealWriter struct {
	h   hash.Hash
	err error
}

func (w *sealWriter) state(st *PauseState) {
	field(w, st.RunID)
	field(w, st.Turn)
	field(w, st.Messages)
	field(w, st.Results)
	w.calls(st.Pending)
	w.calls(st.Agents)
	field(w, st.Executions)
	field(w, st.Accounting)
	field(w, st.Output)
	field(w, st.InvalidOutputs)
	field(w, st.Queued)
	field(w, st.Interrupt)
}

func (w *sealWriter) calls(cs []PendingCall) {
	field(w, len(cs))
	for i := range cs {
		p := &cs[i]
		field(w, p.CallID)
		field(w, p.Name)
		field(w, p.Arguments)
		field(w, p.ParentCallID)
		field(w, p.Index)
		field(w, p.Reason)
		field(w, p.Rule)
		field(w, p.Meta)
		field(w, p.Notes)
		if p.Child == nil {
			field(w, 0)
		} else {
			field(w, 1)
			w.state(p.Child)
		}
		if p.Program != nil {
			field(w, 2)
			field(w, p.Program.Started)
			field(w, len(p.Program.Calls))
			for _, c := range p.Program.Calls {
				field(w, c.ID)
				field(w, c.Name)
				field(w, c.Arguments)
				field(w, c.Result)
			}
			w.calls(p.Program.Pending)
		}
	}
}

// field writes v's canonical JSON, length first: the encoding of the
// value v reads back as.
func field[T any](w *sealWriter, v T) {
	if w.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		var back T
		if err = json.Unmarshal(b, &back); err == nil {
			b, err = json.Marshal(back)
		}
	}
	if err != nil {
		w.err = err
		return
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	w.h.Write(n[:])
	w.h.Write(b)
}
