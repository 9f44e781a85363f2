package view

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptOf returns the text of the page's script element (its last).
func scriptOf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	require.Len(t, m, 1, "one script element that runs")
	return m[0][1]
}

func policyOf(t *testing.T, page string) string {
	t.Helper()
	csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(page)
	require.Len(t, csp, 2)
	return html.UnescapeString(csp[1])
}

// TestRenderLive: a live page adds live.js to its script, names its data
// URL, and its policy allows that script by hash and requests to its own
// origin; a static page has neither, and makes no request.
func TestRenderLive(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"static", Options{}},
		{"live", Options{Live: "/data?after=12-34"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, Render(&out, events(sampleEvents()...), tc.opts))
			page := out.String()
			script, policy := scriptOf(t, page), policyOf(t, page)
			assert.Equal(t, Policy(tc.opts), policy, "the page's policy is Policy's")
			assert.Contains(t, policy, "script-src "+cspHash(script), "the policy allows the script the page holds")
			assert.Contains(t, policy, "default-src 'none'")
			if tc.opts.Live == "" {
				assert.Equal(t, pageJS, script)
				assert.NotContains(t, policy, "connect-src")
				assert.NotContains(t, page, "data-live")
				return
			}
			assert.Equal(t, pageJS+"\n"+liveJS, script)
			assert.Contains(t, policy, "; connect-src 'self'")
			assert.NotContains(t, policy, "http", "no other origin")
			assert.Contains(t, page, `<body data-live="/data?after=12-34">`)
		})
	}
}

// TestData: the data Data writes is the page's, decoded the same.
func TestData(t *testing.T) {
	var page, data bytes.Buffer
	require.NoError(t, Render(&page, events(sampleEvents()...), Options{Title: "t"}))
	require.NoError(t, Data(&data, events(sampleEvents()...), Options{Title: "t"}))
	var got map[string]any
	require.NoError(t, json.Unmarshal(data.Bytes(), &got))
	assert.Equal(t, decode(t, page.Bytes()), got)
	assert.NotContains(t, data.String(), "\n", "one line")

	err := Data(&data, events(), Options{})
	assert.ErrorIs(t, err, ErrNoEvents)
}
