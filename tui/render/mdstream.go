package render

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
)

// Streamed markdown.
//
// A reply streamed a few words at a time changes its text tens of thousands
// of times; rendering the whole text through glamour on every change is
// quadratic in the reply's length. While a reply is open, its text is split
// at the last block boundary that later text cannot change: the part before
// (the stable prefix) is rendered once per width, in segments as the
// boundary moves on, and only the part after (the open tail) is rendered
// again on each change.
//
// What glamour draws between two top-level blocks depends on the block
// before (one blank line mostly, more after a nested list) and, but for
// the constructs below, not on the block after, so each segment is rendered with a
// probe paragraph after it and keeps its lines up to the probe: the render
// of the whole text is then the segments' lines and the tail's. The few
// constructs for which that does not hold are never split: raw HTML,
// definition lists (glamour's spacing around them depends on both sides)
// and reference-style link definitions (which change links anywhere in
// the text) make the stream render whole; lists and indented text are
// never cut (see boundary).
// The tests render a corpus chunk by chunk and compare the final view with
// the one-shot render, byte for byte.

// maxStreams bounds the streamed texts followed at once: one open reply is
// the normal case; a few widths may be seen while a resize is dragged.
const maxStreams = 8

// mdStream is the incremental render of one growing text at one width.
type mdStream struct {
	it    *events.Item
	width int
	// src is the stable prefix: the text up to a boundary (blank lines
	// included). lines is its render.
	src   string
	lines []string
	// whole is set when the text holds something that cannot be split
	// safely: it is then rendered whole, as before.
	whole bool
	// code is the render of the first lines of a fenced code block still
	// open at src, up to codeEnd in the text (see openCode).
	code            []string
	codeAt, codeEnd int
}

// streamMarkdown renders clean markdown text of it at width w, reusing the
// stable prefix of earlier calls while it is open. A finished item uses
// the state one last time (its render is the one-shot render) and drops it,
// so items loaded whole never create one.
func (r *Renderer) streamMarkdown(it *events.Item, text string, w int) []string {
	s := r.stream(it, w, it.Open)
	if s == nil {
		return r.markdown(text, w)
	}
	if !it.Open {
		r.dropStream(s)
	}
	if !strings.HasPrefix(text, s.src) {
		// The text was replaced (a final form unlike the deltas): start over.
		s.src, s.lines, s.whole = "", nil, false
		s.code, s.codeAt, s.codeEnd = nil, 0, 0
	}
	if s.whole {
		return r.markdown(text, w)
	}
	b, whole, open := boundary(text, len(s.src))
	if whole {
		s.whole = true
		s.src, s.lines = "", nil
		return r.markdown(text, w)
	}
	if b > len(s.src) {
		seg, ok := r.probed(text[len(s.src):b], len(s.src) > 0, true, w)
		if !ok {
			s.whole = true
			s.src, s.lines = "", nil
			return r.markdown(text, w)
		}
		s.lines = append(s.lines, seg...)
		s.src = text[:b]
	}
	if it.Open && open == len(s.src) {
		if lines, ok := r.openCode(s, text, w); ok {
			return lines
		}
	}
	s.code, s.codeAt, s.codeEnd = nil, 0, 0
	if len(s.src) == 0 {
		return r.markdown(text, w)
	}
	tail, ok := r.probed(text[len(s.src):], true, false, w)
	if !ok {
		// The tail changes with the next chunk: render whole this once.
		return r.markdown(text, w)
	}
	out := make([]string, 0, len(s.lines)+len(tail))
	out = append(out, s.lines...)
	out = append(out, tail...)
	// The whole render drops blank lines at its end, whoever drew them.
	for len(out) > 0 && blank(out[len(out)-1]) {
		out = out[:len(out)-1]
	}
	return out
}

// probed renders a part of a text as it is drawn inside the whole: with a
// probe paragraph before it unless it starts the text (the part's own
// leading blank lines, such as a code block's, are then kept, and the
// probe and the one blank line after it are dropped), and with a probe
// after it when it ends at a boundary (what glamour draws between the
// part's last block and the probe is what it draws before any next block,
// and is kept). ok is false when glamour did not draw the probes as
// expected: the split is then not trusted.
func (r *Renderer) probed(part string, before, after bool, w int) (lines []string, ok bool) {
	src := part
	if before {
		src = streamProbe + "\n\n" + src
	}
	if after {
		src += streamProbe
	}
	lines = r.markdown(src, w)
	if after {
		n := len(lines)
		if n == 0 || ansi.Strip(lines[n-1]) != streamProbe {
			return nil, false
		}
		lines = lines[:n-1]
	}
	if before && !after && len(lines) == 1 && ansi.Strip(lines[0]) == streamProbe {
		// The part draws nothing (yet): a fence or a heading marker
		// still arriving.
		return nil, true
	}
	if before {
		if len(lines) < 2 || ansi.Strip(lines[0]) != streamProbe || !blank(lines[1]) {
			return nil, false
		}
		lines = lines[2:]
	} else if len(lines) == 0 {
		return nil, false // nothing drawn for a block: do not guess
	}
	return lines, true
}

// codeChunk is how many complete lines of an open code block are rendered
// together, once: highlighting costs ~0.2 ms a line, so the open rest of
// the block stays a few milliseconds a frame.
const codeChunk = 8

// openCode renders the tail of a text that is a fenced code block still
// arriving: its complete lines in chunks of codeChunk, each rendered once
// as a code block of its own, and the rest. Highlighting state does not
// cross chunks (a multi-line string may be coloured differently) and the
// chunks' first lines lack the code block's continuation styling; both
// are only while the block is open: once it is closed, it is rendered
// whole with the rest of the tail, and the final view is the one-shot
// render.
func (r *Renderer) openCode(s *mdStream, text string, w int) ([]string, bool) {
	at := len(s.src)
	nl := strings.IndexByte(text[at:], '\n')
	if nl < 0 {
		return nil, false
	}
	opener := text[at : at+nl+1]
	c, n, ok := opensFence(opener)
	if !ok {
		return nil, false
	}
	closer := "\n" + strings.Repeat(string(c), n)
	if s.codeAt != at || s.codeEnd < at+len(opener) || s.codeEnd > len(text) {
		s.code, s.codeAt, s.codeEnd = nil, at, at+len(opener)
	}
	for {
		end, lines := s.codeEnd, 0
		for end < len(text) && lines < codeChunk {
			i := strings.IndexByte(text[end:], '\n')
			if i < 0 {
				break
			}
			end += i + 1
			lines++
		}
		if lines < codeChunk {
			break
		}
		chunk, ok := r.probed(opener+text[s.codeEnd:end-1]+closer, true, false, w)
		if !ok {
			return nil, false
		}
		s.code = append(s.code, chunk...)
		s.codeEnd = end
	}
	rest, ok := r.probed(opener+text[s.codeEnd:], true, false, w)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(s.lines)+len(s.code)+len(rest))
	out = append(out, s.lines...)
	out = append(out, s.code...)
	return append(out, rest...), true
}

// streamProbe is the paragraph drawn around parts of a text (see probed).
const streamProbe = "x"

// stream finds the state of it at w, creating one when create is set.
func (r *Renderer) stream(it *events.Item, w int, create bool) *mdStream {
	for i, s := range r.streams {
		if s.it == it && s.width == w {
			// Most recent last: the first is evicted.
			copy(r.streams[i:], r.streams[i+1:])
			r.streams[len(r.streams)-1] = s
			return s
		}
	}
	if !create {
		return nil
	}
	if len(r.streams) >= maxStreams {
		r.streams[0] = nil
		r.streams = r.streams[1:]
	}
	s := &mdStream{it: it, width: w}
	r.streams = append(r.streams, s)
	return s
}

func (r *Renderer) dropStream(s *mdStream) {
	r.streams = slices.DeleteFunc(r.streams, func(x *mdStream) bool { return x == s })
}

// forgetStreams drops every state of it.
func (r *Renderer) forgetStreams(it *events.Item) {
	r.streams = slices.DeleteFunc(r.streams, func(x *mdStream) bool { return x.it == it })
}

// boundary scans text from from (0 or an earlier boundary, where no block
// is open) and returns the last position after it where a new top-level
// block starts that nothing later can join to the blocks before, or from
// when there is none. whole reports a construct that makes any split
// unsafe.
//
// A boundary is the start of a line that follows a blank line, outside any
// fenced code block, whose first characters show it cannot continue what
// came before: not indented (list items, indented code and lazy lines all
// need indentation), not a list marker (a list goes on across blank
// lines), not ':' (a definition) and not '<' (HTML).
// The last line may be partial: it is only a boundary when its start
// already decides.
//
// open is the start of the line that opened a fenced code block still open
// at the end of the text (at column 0, outside any container), or -1.
func boundary(text string, from int) (b int, whole bool, open int) {
	b, open = from, -1
	var (
		fence      byte // '`' or '~' while in a fenced block, else 0
		fenceLen   int
		fenceInd   int  // column of the fence's first character
		fenceLoose bool // opened inside a list item or indented: see below
		prevBlank  bool
	)
	for p := from; p < len(text); {
		end := strings.IndexByte(text[p:], '\n')
		complete := end >= 0
		if !complete {
			end = len(text)
		} else {
			end += p
		}
		line := text[p:end]
		next := end + 1
		ind := indentOf(line)
		isBlank := ind == len(line)

		if fence != 0 {
			if !isBlank && fenceLoose && ind < fenceInd {
				// A fence in a list item ends with the item; one at this
				// indentation at top level does not. Which one this is
				// is not worth guessing: render whole.
				return from, true, -1
			}
			if complete && ind <= fenceInd+3 && closesFence(line[ind:], fence, fenceLen) {
				fence = 0
			}
			prevBlank = false
			p = next
			continue
		}
		if isBlank {
			prevBlank = true
			p = next
			continue
		}
		if prevBlank && p > from && startsBlock(line, complete) {
			b = p
		}
		prevBlank = false

		rest := line[ind:]
		if ind <= 3 && strings.HasPrefix(rest, "<") {
			return from, true, -1
		}
		if ind <= 3 && strings.HasPrefix(rest, ":") {
			// A definition: what glamour draws around definition lists
			// depends on the blocks on both sides. Rare in replies.
			return from, true, -1
		}
		body, marker := stripContainers(rest)
		if strings.HasPrefix(body, "[") && strings.Contains(body, "]:") {
			return from, true, -1 // a link reference definition, or the start of one
		}
		if !complete {
			break
		}
		if c, n, ok := opensFence(body); ok {
			if strings.HasPrefix(strings.TrimLeft(rest, " "), ">") {
				return from, true, -1 // a fence in a block quote: not followed
			}
			fence, fenceLen = c, n
			fenceInd = len(line) - len(body)
			fenceLoose = marker || ind > 0
			open = p
		}
		p = next
	}
	if fence == 0 || fenceLoose {
		open = -1
	}
	return b, false, open
}

// indentOf counts leading spaces (sanitize has expanded tabs).
func indentOf(s string) int {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// startsBlock reports whether line, after a blank line, surely starts a
// new top-level block: see boundary.
func startsBlock(line string, complete bool) bool {
	switch c := line[0]; {
	case c == ' ' || c == ':' || c == '<':
		return false
	case c == '-' || c == '*' || c == '+':
		if len(line) == 1 {
			return false // a bare marker, or one still arriving
		}
		return line[1] != ' '
	case c >= '0' && c <= '9':
		i := 0
		for i < len(line) && i < 10 && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i == len(line) {
			return complete // a number alone is a paragraph; more may come
		}
		if line[i] != '.' && line[i] != ')' {
			return true
		}
		return i+1 < len(line) && line[i+1] != ' '
	}
	return true
}

// stripContainers removes block quote markers and list markers (with the
// spaces around them) from the start of a line, reporting whether a list
// marker was among them.
func stripContainers(s string) (body string, marker bool) {
	for {
		s = strings.TrimLeft(s, " ")
		switch {
		case strings.HasPrefix(s, ">"):
			s = s[1:]
		case len(s) >= 2 && strings.ContainsRune("-*+", rune(s[0])) && s[1] == ' ':
			s, marker = s[2:], true
		default:
			i := 0
			for i < len(s) && i < 10 && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
				s, marker = s[i+2:], true
				continue
			}
			return s, marker
		}
	}
}

// opensFence reports whether s starts a fenced code block: three or more
// backticks (with no backtick in the info string) or tildes.
func opensFence(s string) (c byte, n int, ok bool) {
	if len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return 0, 0, false
	}
	c = s[0]
	for n < len(s) && s[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.IndexByte(s[n:], '`') >= 0) {
		return 0, 0, false
	}
	return c, n, true
}

// closesFence reports whether s (indentation removed) closes a fence of n
// c characters: at least as many, then only spaces.
func closesFence(s string, c byte, n int) bool {
	i := 0
	for i < len(s) && s[i] == c {
		i++
	}
	return i >= n && strings.TrimRight(s[i:], " ") == ""
}
