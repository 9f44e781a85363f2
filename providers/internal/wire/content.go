package wire

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/toolloop/toolloop"
)

// ImageTypes are the image MIME types both APIs accept as bytes.
var imageTypes = map[string]bool{
	"image/png":  true,
	"image/jpeg": true,
	"image/gif":  true,
	"image/webp": true,
}

// ImageType returns the normalized MIME type of an image block and whether
// the APIs accept images of that type as bytes.
func ImageType(mime string) (string, bool) {
	m := strings.ToLower(strings.TrimSpace(mime))
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimSpace(m[:i])
	}
	if m == "image/jpg" {
		m = "image/jpeg"
	}
	return m, imageTypes[m]
}

// DataURL returns data as a base64 data URL.
func DataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// AsText renders a block the provider cannot take natively as text, so
// the model still learns it was there: JSON as its JSON, an embedded
// resource as its text, anything else as a short note saying what was
// left out.
func AsText(c toolloop.Content) string {
	switch c.Type {
	case toolloop.ContentText:
		return c.Text
	case toolloop.ContentJSON:
		return string(c.JSON)
	case toolloop.ContentResource:
		switch {
		case c.Text != "":
			return c.Text
		case c.URI != "":
			return fmt.Sprintf("[resource %s (%s, %d bytes) not shown]", c.URI, orUnknown(c.MIMEType), len(c.Data))
		}
	}
	return fmt.Sprintf("[%s content (%s, %d bytes) not shown: the provider does not accept it here]",
		c.Type, orUnknown(c.MIMEType), len(c.Data))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// OwnReasoning reports whether c is a reasoning block that provider made,
// and so must be sent back to it in its place. Every other reasoning block
// is dropped, never rendered as text: its signature means nothing to
// another provider, and its text is the model's, not the user's.
func OwnReasoning(c toolloop.Content, provider string) bool {
	return c.Type == toolloop.ContentReasoning && c.Reasoning != nil && c.Reasoning.Provider == provider
}
