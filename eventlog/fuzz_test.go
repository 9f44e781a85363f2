package eventlog_test

import (
	"bytes"
	"testing"

	"github.com/toolloop/toolloop/eventlog"
)

// FuzzRead checks that no log, however broken, makes Read panic, and that
// the transcript it gives is one the loop can repair.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"type":"run.start","run_id":"r","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}` + "\n" +
		`{"type":"model.response","run_id":"r","turn":1,"response":{"message":{"role":"assistant","tool_calls":[{"id":"c1","name":"t","arguments":{}}]}}}` + "\n" +
		`{"type":"tool.execution_complete","run_id":"r","call_id":"c1","result":{"call_id":"c1","name":"t","status":"ok"}}` + "\n"))
	f.Add([]byte("{garbage\n\n{\"type\":\"run.end\"}"))
	f.Add([]byte(`{"type":"run.paused","run_id":"r"}`))
	f.Fuzz(func(t *testing.T, log []byte) {
		rp, _ := eventlog.Read(bytes.NewReader(log))
		if rp == nil {
			t.Fatal("no replay")
		}
		_ = rp.Transcript()
		for range eventlog.Events(bytes.NewReader(log)) {
		}
	})
}
