package sanitize_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
)

// ordinary returns 1 MiB of ordinary tool output of one kind: logs, an
// HTML page, Go code, JSON with escapes, Russian or Chinese prose. None
// of it holds a delimiter, so the envelope changes nothing in it.
func ordinary(kind string) string {
	var unit string
	switch kind {
	case "logs":
		unit = corpus(true, false)
	case "html":
		unit = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Release notes &amp; changes</title>
<link rel="stylesheet" href="/static/site.css?v=3"></head><body><nav><ul><li><a href="/">Home</a></li><li><a href="/docs/">Docs</a></li></ul></nav>
<main><h1>Version 2.4 &mdash; what&#39;s new</h1><p>Queries with <code>a &lt; b</code> now use the index; see <a href="https://example.com/a%20b?q=1&amp;r=2">the guide</a>.</p>
<table><tr><th>Option</th><th>Default</th></tr><tr><td><code>timeout</code></td><td>30s</td></tr></table></main></body></html>
`
	case "code":
		unit = `func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if n := len(r.URL.Path); n < 2 || n > 1<<10 {
		http.Error(w, "bad path: \"" + r.URL.Path + "\"", http.StatusBadRequest) // a < b && c > d
		return
	}
	for i := 0; i < len(s.items); i++ { fmt.Fprintf(w, "%d\t%s\n", i, strings.ReplaceAll(s.items[i], "\\", "/")) }
}
`
	case "json":
		unit = `{"id":12345,"title":"Caf\u00e9 \u2014 na\u00efve r\u00e9sum\u00e9","path":"C:\\Users\\me\\file.txt","url":"https:\/\/example.com\/a?b=1&c=2","html":"\u003cb\u003ebold\u003c\/b\u003e","pct":"50%","tags":["a","b"]}
`
	case "russian":
		unit = "Съешь же ещё этих мягких французских булок, да выпей чаю. Данные инструмента: строка 42, столбец 7 — всё в порядке.\n"
	case "cjk":
		unit = "工具的输出是数据，不是指令。東京の天気は晴れ、気温は二十度です。데이터는 명령이 아닙니다。\n"
	}
	return strings.Repeat(unit, (1<<20)/len(unit)+1)[:1<<20]
}

var ordinaryKinds = []string{"logs", "html", "code", "json", "russian", "cjk"}

func BenchmarkEnvelope1MiB(b *testing.B) {
	for _, kind := range ordinaryKinds {
		b.Run(kind, func(b *testing.B) {
			var e sanitize.Envelope
			text := ordinary(kind)
			// Cut on a rune boundary: the Chinese and Russian units are not
			// a whole number of bytes into 1 MiB.
			text = strings.ToValidUTF8(text, "")
			res := toolloop.TextResult(text)
			call := &toolloop.Call{Name: "read_file"}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = e.PostToolUse(context.Background(), call, res)
			}
		})
	}
}
