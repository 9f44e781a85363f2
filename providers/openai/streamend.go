package openai

import (
	"bytes"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/option"
)

// doneWatch notes the data: [DONE] line that ends a complete Chat
// Completions stream, which the SDK's stream swallows: a stream that ends
// with it but no finish reason (some servers send none) ended normally; one
// without it was cut off.
type doneWatch struct {
	done bool
	line []byte // the start of the current line
}

// middleware watches the body of a successful response.
func (w *doneWatch) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res != nil && res.StatusCode < 300 && res.Body != nil {
		res.Body = &doneReader{ReadCloser: res.Body, w: w}
	}
	return res, err
}

type doneReader struct {
	io.ReadCloser
	w *doneWatch
}

// Read implements [io.Reader], watching what it reads for the [DONE] line.
func (r *doneReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	w := r.w
	for _, b := range p[:n] {
		if b == '\n' || b == '\r' {
			w.endLine()
			continue
		}
		if len(w.line) < 16 {
			w.line = append(w.line, b)
		}
	}
	if err != nil {
		w.endLine()
	}
	return n, err
}

func (w *doneWatch) endLine() {
	if data, ok := bytes.CutPrefix(w.line, []byte("data:")); ok &&
		bytes.HasPrefix(bytes.TrimLeft(data, " "), []byte("[DONE]")) {
		w.done = true
	}
	w.line = w.line[:0]
}
