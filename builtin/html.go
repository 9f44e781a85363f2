package builtin

import (
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlText renders an HTML page as plain text for a model: the title,
// then the visible text with a line break at each block, headings marked
// with #, list items with -, and links as [text](url) resolved against
// base. Scripts, styles and other invisible parts are left out.
func htmlText(src string, base *url.URL) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b textBuf
	var title string
	skip, pre := 0, 0
	var links []string // hrefs of the open <a> elements
	inTitle := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return finishText(title, b.String())
		case html.TextToken:
			t := string(z.Text())
			switch {
			case inTitle:
				title += t
			case skip > 0:
			default:
				b.text(t, pre > 0)
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			end := tt == html.EndTagToken
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe, atom.Object:
				if tt == html.StartTagToken {
					skip++
				} else if end && skip > 0 {
					skip--
				}
				continue
			case atom.Title:
				inTitle = tt == html.StartTagToken
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.Pre:
				b.WriteString("\n")
				if end {
					pre = max(pre-1, 0)
				} else {
					pre++
				}
			case atom.Br, atom.P, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Main, atom.Nav,
				atom.Table, atom.Tr, atom.Ul, atom.Ol, atom.Blockquote, atom.Dl, atom.Dt, atom.Dd, atom.Figure, atom.Form:
				b.WriteString("\n")
			case atom.Hr:
				b.WriteString("\n---\n")
			case atom.Td, atom.Th:
				b.WriteString(" | ")
			case atom.Li:
				if !end {
					b.WriteString("\n- ")
				}
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				b.WriteString("\n\n")
				if !end {
					b.WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
				}
			case atom.A:
				switch {
				case end && len(links) > 0:
					if href := links[len(links)-1]; href != "" {
						b.WriteString("](" + href + ")")
					}
					links = links[:len(links)-1]
				case tt == html.StartTagToken:
					href := ""
					for hasAttr {
						var k, v []byte
						k, v, hasAttr = z.TagAttr()
						if string(k) == "href" {
							href = resolveLink(base, string(v))
						}
					}
					if href != "" {
						b.WriteString("[")
					}
					links = append(links, href)
				}
			}
		}
	}
}

// resolveLink makes an http(s) link absolute; other links are dropped.
func resolveLink(base *url.URL, href string) string {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil || strings.HasPrefix(href, "#") {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	return u.String()
}

var (
	spaceRE     = regexp.MustCompile(`[ \t\r\n\f]+`)
	trailingRE  = regexp.MustCompile(`(?m)[ \t]+$`)
	blankRunsRE = regexp.MustCompile(`\n{3,}`)
)

// textBuf collects text, dropping the spaces that collapsed whitespace
// leaves at the start of a line.
type textBuf struct {
	strings.Builder
	bol bool
}

func (t *textBuf) text(s string, pre bool) {
	if !pre {
		s = collapseSpace(s)
		if t.bol || t.Len() == 0 {
			s = strings.TrimLeft(s, " ")
		}
	}
	if s != "" {
		t.WriteString(s)
		t.bol = strings.HasSuffix(s, "\n")
	}
}

// WriteString writes markup text such as line breaks and list markers.
func (t *textBuf) WriteString(s string) {
	t.Builder.WriteString(s)
	t.bol = strings.HasSuffix(s, "\n")
}

func collapseSpace(s string) string { return spaceRE.ReplaceAllString(s, " ") }

func finishText(title, body string) string {
	body = trailingRE.ReplaceAllString(body, "")
	body = blankRunsRE.ReplaceAllString(body, "\n\n")
	body = strings.TrimSpace(body) + "\n"
	if t := strings.TrimSpace(collapseSpace(title)); t != "" {
		body = "Title: " + t + "\n\n" + body
	}
	return body
}
