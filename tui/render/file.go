package render

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	cstyles "github.com/alecthomas/chroma/v2/styles"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tools"
)

// readFileBody draws read_file: the range as a header tag, then numbered,
// syntax-highlighted lines. Legacy results carry the whole file with the
// range; HEAD text carries " L01 | line" rows (docs/protocol.md §7.3).
func readFileBody(r *Renderer, t *events.ToolItem, w int) ([]seg, []string) {
	res := t.Output()
	fc := res.File
	if fc == nil {
		fc = tools.ParseRead(res.Text)
	}
	if fc == nil {
		return genericBody(r, t, w)
	}
	return r.fileContentBody(fc, w)
}

// shownLines is the part of a file read the view shows, its number of
// lines and the number of its first line. Legacy results hold the entire
// file next to the requested range: it is cut down when it is clearly the
// whole file.
func shownLines(fc *events.FileContent) (content string, n, start int) {
	content = trimTrailingNewlines(fc.Content)
	n = countLines(content)
	start = max(fc.StartLine, 1)
	if fc.EndLine >= start && n > fc.EndLine-start+1 && n >= fc.EndLine && start > 0 {
		content = trimTrailingNewlines(linesRange(content, start-1, fc.EndLine))
		n = countLines(content)
	}
	return content, n, start
}

func (r *Renderer) fileContentBody(fc *events.FileContent, w int) ([]seg, []string) {
	content, n, start := shownLines(fc)
	var tags []string
	if fc.StartLine > 0 && fc.EndLine > 0 {
		tags = append(tags, r.p.tag.on(fmt.Sprintf("L%d-%d", fc.StartLine, fc.EndLine)))
	}
	tags = append(tags, r.p.tag.on(plural(n, "line")))
	numW := len(strconv.Itoa(start + n - 1))
	path := fc.Path
	// content is trimmed and counted: textSeg would count 30 MB again.
	sg := seg{n: n, raw: content, chunk: func(idx []int, ls []string, w int) []string {
		return r.numbered(path, lineNums(idx, start), ls, numW, w)
	}}
	sg.deco = max(numW, 1) + 1
	if fc.Numbered {
		// HEAD rows: the " L07 | " prefix goes before tabs are expanded.
		sg.pre = tools.StripRow
	}
	return []seg{sg}, tags
}

// lineNums numbers rows from first: idx[i] is a row's line index in the
// text, -1 (no number) for a wrapped line's continuation.
func lineNums(idx []int, first int) []int {
	nums := make([]int, len(idx))
	for i, j := range idx {
		nums[i] = -1
		if j >= 0 {
			nums[i] = first + j
		}
	}
	return nums
}

// linesRange returns lines [from, to) of s as one string.
func linesRange(s string, from, to int) string {
	pos := 0
	for i := 0; i < from && pos <= len(s); i++ {
		j := strings.IndexByte(s[pos:], '\n')
		if j < 0 {
			return ""
		}
		pos += j + 1
	}
	end := pos
	for i := from; i < to; i++ {
		j := strings.IndexByte(s[end:], '\n')
		if j < 0 {
			return s[pos:]
		}
		end += j + 1
	}
	return strings.TrimSuffix(s[pos:end], "\n")
}

// numbered draws clean lines with a line-number gutter (nums[i] < 0 means
// none), highlighted by path's file type when a lexer is known.
func (r *Renderer) numbered(path string, nums []int, ls []string, numW, w int) []string {
	numW = max(numW, 1)
	codeW := max(w-numW-1, 1)
	for i, l := range ls {
		ls[i] = fit(l, codeW)
	}
	hl := r.highlight(path, ls)
	out := make([]string, len(ls))
	for i := range ls {
		num := strings.Repeat(" ", numW)
		if nums[i] >= 0 {
			num = fmt.Sprintf("%*d", numW, nums[i])
			if len(num) > numW {
				num = num[len(num)-numW:]
			}
		}
		out[i] = r.p.lineNo.on(num) + " " + hl[i]
	}
	return out
}

// maxHighlight bounds how much text is syntax-highlighted at once; chroma
// runs regexp2 lexers at a few MB/s, so bigger chunks are shown plain.
const maxHighlight = 64 << 10

// highlight returns ls coloured by the lexer for path, or painted as plain
// output when there is none (or the theme has no colours).
func (r *Renderer) highlight(path string, ls []string) []string {
	out := make([]string, len(ls))
	lexer := r.lexer(path)
	size := 0
	for _, l := range ls {
		size += len(l) + 1
	}
	if lexer == nil || size > maxHighlight || r.st.Chroma == "" {
		for i, l := range ls {
			out[i] = r.p.output.on(l)
		}
		return out
	}
	it, err := lexer.Tokenise(nil, strings.Join(ls, "\n"))
	if err != nil {
		for i, l := range ls {
			out[i] = r.p.output.on(l)
		}
		return out
	}
	var b strings.Builder
	line := 0
	flush := func() {
		if line < len(out) {
			out[line] = b.String()
		}
		b.Reset()
		line++
	}
	for tok := it(); tok != chroma.EOF; tok = it() {
		p := r.tokenStyle(tok.Type)
		for {
			part, rest, nl := strings.Cut(tok.Value, "\n")
			b.WriteString(p.on(part))
			if !nl {
				break
			}
			flush()
			tok.Value = rest
		}
	}
	flush()
	for i := range out {
		if out[i] == "" && ls[i] != "" { // lexer lost text: never hide it
			out[i] = r.p.output.on(ls[i])
		}
	}
	return out
}

// lexer finds and memoizes the lexer for a file name. Matching runs every
// lexer's filename globs, so it is cached by extension (or base name for
// files like Makefile).
func (r *Renderer) lexer(path string) chroma.Lexer {
	base := filepath.Base(path)
	key := strings.ToLower(filepath.Ext(base))
	if key == "" {
		key = base
	}
	if l, ok := r.lexers[key]; ok {
		return l
	}
	l := lexers.Match(base)
	if l != nil {
		l = chroma.Coalesce(l)
	}
	r.lexers[key] = l
	return l
}

// tokenStyle turns a chroma token type into a paint. Only foreground,
// bold, italic and underline are used: backgrounds would paint blocks that
// clash with the transcript.
func (r *Renderer) tokenStyle(tt chroma.TokenType) paint {
	if p, ok := r.tokenPaint[tt]; ok {
		return p
	}
	if r.chromaStyle == nil {
		r.chromaStyle = cstyles.Get(r.st.Chroma)
	}
	e := r.chromaStyle.Get(tt)
	st := r.st.Tool.Output
	if e.Colour.IsSet() {
		st = st.Foreground(lipglossColor(e.Colour.String()))
	}
	if e.Bold == chroma.Yes {
		st = st.Bold(true)
	}
	if e.Italic == chroma.Yes {
		st = st.Italic(true)
	}
	if e.Underline == chroma.Yes {
		st = st.Underline(true)
	}
	p := newPaint(st)
	r.tokenPaint[tt] = p
	return p
}
