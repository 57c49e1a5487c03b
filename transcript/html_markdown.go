package transcript

import (
	"bytes"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// markdown renders a reply's Markdown to HTML that loads nothing: raw
// HTML is left out (goldmark's default), an image shows as its
// alternative text, a link keeps only a web or mail address, and fenced
// code is coloured by chroma with the page's classes.
type markdown struct {
	md goldmark.Markdown
}

func newMarkdown() *markdown {
	return &markdown{md: goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeNodes{}, 100))),
	)}
}

func (m *markdown) render(w util.BufWriter, text string) error {
	return m.md.Convert([]byte(text), w)
}

// safeNodes renders the nodes that could load or run something.
type safeNodes struct{}

func (safeNodes) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindImage, renderImage)
	r.Register(ast.KindLink, renderLink)
	r.Register(ast.KindAutoLink, renderAutoLink)
	r.Register(ast.KindFencedCodeBlock, renderFence)
}

// safeURL reports whether a link may point at u: web and mail addresses
// and the page's own anchors only.
func safeURL(u []byte) bool {
	s := strings.ToLower(strings.TrimSpace(string(u)))
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") ||
		strings.HasPrefix(s, "mailto:") || strings.HasPrefix(s, "#")
}

func writeEscaped(w util.BufWriter, s []byte) { w.Write(util.EscapeHTML(s)) }

func renderImage(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	img := n.(*ast.Image)
	w.WriteString(`<span class="img">[image: `)
	var alt bytes.Buffer
	for c := img.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			alt.Write(t.Segment.Value(source))
		}
	}
	writeEscaped(w, alt.Bytes())
	w.WriteString(" — ")
	writeEscaped(w, img.Destination)
	w.WriteString("]</span>")
	return ast.WalkSkipChildren, nil
}

func renderLink(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	l := n.(*ast.Link)
	if !safeURL(l.Destination) {
		return ast.WalkContinue, nil // its text only
	}
	if entering {
		w.WriteString(`<a rel="noopener noreferrer nofollow" href="`)
		writeEscaped(w, util.URLEscape(l.Destination, true))
		w.WriteString(`">`)
	} else {
		w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	l := n.(*ast.AutoLink)
	url, label := l.URL(source), l.Label(source)
	if l.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	if !safeURL(url) {
		writeEscaped(w, label)
		return ast.WalkContinue, nil
	}
	w.WriteString(`<a rel="noopener noreferrer nofollow" href="`)
	writeEscaped(w, util.URLEscape(url, false))
	w.WriteString(`">`)
	writeEscaped(w, label)
	w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// maxHighlight bounds the code chroma colours: a bigger block is shown
// plain (its spans would make the page several times its text).
const maxHighlight = 32 << 10

func renderFence(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	fc := n.(*ast.FencedCodeBlock)
	var code bytes.Buffer
	lines := fc.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		code.Write(seg.Value(source))
	}
	lang := string(fc.Language(source))
	if lexer := lexers.Get(lang); lang != "" && lexer != nil && code.Len() <= maxHighlight {
		it, err := chroma.Coalesce(lexer).Tokenise(nil, code.String())
		if err == nil {
			f := chromahtml.New(chromahtml.WithClasses(true))
			if err := f.Format(w, styles.Get(codeStyle), it); err == nil {
				return ast.WalkSkipChildren, nil
			}
		}
	}
	w.WriteString("<pre><code>")
	writeEscaped(w, code.Bytes())
	w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}
