package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// serverMark stands for the fake server's address in an answer file.
const serverMark = "$SERVER"

// answerFile is the file holding the answer to reply, or "" if the reply
// is to give its turn's Want.
func (r *runner) answerFile(reply Reply) string {
	if r.h.Answers == "" || reply.File == "" {
		return ""
	}
	base := filepath.Base(reply.File)
	return filepath.Join(r.h.Answers, strings.TrimSuffix(base, filepath.Ext(base))+".json")
}

// want returns the answer reply is to give to tn, sent by srv.
func (r *runner) want(tn Turn, reply Reply, srv *Server) (Want, error) {
	path := r.answerFile(reply)
	if path == "" {
		return tn.Want, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Want{}, fmt.Errorf("%v (run the tests with -update to write it from the model's answer, and review it)", err)
	}
	b = bytes.ReplaceAll(b, []byte(serverMark), []byte(srv.Listener.Addr().String()))
	var w Want
	if err := json.Unmarshal(b, &w); err != nil {
		return Want{}, fmt.Errorf("%s: %v", path, err)
	}
	return w, nil
}

// record writes a, the answer to reply sent by srv, as reply's answer.
func (r *runner) record(reply Reply, a answer, stream bool, srv *Server) error {
	w := Want{Response: *a.resp}
	if stream {
		w.Text, w.Reasoning = a.text, a.reasoning
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(w); err != nil {
		return err
	}
	path := r.answerFile(reply)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, bytes.ReplaceAll(b.Bytes(), []byte(srv.Listener.Addr().String()), []byte(serverMark)), 0o644)
}
