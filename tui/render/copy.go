package render

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/tools"
)

// CopyText is what copying an item puts on the clipboard: a message's text
// (a reply's markdown source, its reasoning left out), a tool's output as
// the tool produced it: no header, no line-number gutter, no " L01 | "
// prefixes of maria's read_file rows, a command's output without the
// "Command … exited" framing. firstLine is the number the view gives the
// text's first line (a file read from line 40 starts at 40, anything else
// at 1), so that a range of lines means what the screen shows. The text
// is bounded like PlainText and sanitized, its tabs kept (keepTabs).
func CopyText(it *events.Item) (s string, firstLine int) {
	if it == nil {
		return "", 1
	}
	if it.Kind != events.ItemTool || it.Tool == nil {
		return keepTabs(headTail(strings.TrimSpace(it.Body()), maxPlain)), 1
	}
	t := it.Tool
	res := t.Output()
	if res == nil {
		return "", 1
	}
	if !res.IsError {
		// The details parsed from the text (a command's output, a read's
		// rows), as the view draws them.
		res = events.WithDetails(res, tools.FormatOf(toolName(t)), t.Call)
	}
	out, first := res.Text, 1
	switch {
	case res.IsError && res.ErrorText != "":
		out = res.ErrorText
	case res.IsError:
		// The text is the error as the tool gave it.
	case res.Command != nil:
		out = trimTrailingNewlines(res.Command.Stdout)
		if e := trimTrailingNewlines(res.Command.Stderr); e != "" {
			if out != "" {
				out += "\n"
			}
			out += e
		}
	case res.File != nil:
		fc := *res.File
		fc.Content, _, first = shownLines(res.File)
		out = fc.Plain()
	}
	return keepTabs(headTail(trimTrailingNewlines(out), maxPlain)), first
}

// CodeBlock is one code block of a message.
type CodeBlock struct {
	Lang string
	Code string
}

// CodeBlocks lists the code blocks of a message's markdown (fenced or
// indented), in order, as goldmark reads them (the parser glamour draws
// with), sanitized.
func CodeBlocks(md string) []CodeBlock {
	src := []byte(headTail(md, maxPlain))
	doc := goldmark.DefaultParser().Parse(text.NewReader(src))
	var out []CodeBlock
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var lang string
		switch b := n.(type) {
		case *ast.FencedCodeBlock:
			lang = string(b.Language(src))
		case *ast.CodeBlock:
		default:
			return ast.WalkContinue, nil
		}
		var code strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			code.Write(seg.Value(src))
		}
		out = append(out, CodeBlock{Lang: sanitize.Line(lang), Code: keepTabs(trimTrailingNewlines(code.String()))})
		return ast.WalkSkipChildren, nil
	})
	return out
}

// keepTabs is sanitize.Text with the tabs left as they are: a copy is
// pasted into an editor, where code keeps its indentation. Each run
// between tabs is cleaned on its own, so no escape sequence survives
// across one.
func keepTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return sanitize.Text(s)
	}
	parts := strings.Split(s, "\t")
	for i, p := range parts {
		parts[i] = sanitize.Text(p)
	}
	return strings.Join(parts, "\t")
}
