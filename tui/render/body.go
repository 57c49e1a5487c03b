package render

import (
	"fmt"
	"strings"
)

// seg is one part of a tool body. Large outputs stay one raw string and are
// split into lines only where they are shown, so a 20 MB output costs one
// strings.Count plus the work for the visible head and tail.
type seg struct {
	n int
	// raw is untrusted text (used when gen is nil); its lines are cleaned
	// and passed to chunk.
	raw string
	// chunk renders clean rows to width w: idx[i] is the line index in
	// this seg of row i, or -1 for a row that continues the line above (an
	// expanded body wraps long lines). nil paints them as plain output.
	chunk func(idx []int, lines []string, w int) []string
	// deco is the number of cells chunk adds before each row (a line
	// number gutter); wrapped text is that much narrower.
	deco int
	// pre rewrites a raw line before it is cleaned (e.g. to drop a row
	// prefix before tabs are expanded relative to it).
	pre func(raw string) string
	// gen produces line i, already safe and styled, for generated content
	// (listings, labels).
	gen func(i int) string
}

func textSeg(raw string, chunk func([]int, []string, int) []string) seg {
	raw = trimTrailingNewlines(raw)
	return seg{n: countLines(raw), raw: raw, chunk: chunk}
}

func linesSeg(lines ...string) seg {
	return seg{n: len(lines), gen: func(i int) string { return lines[i] }}
}

// rawLines returns lines [from, to) of s (which has n lines), walking from
// whichever end is closer.
func rawLines(s string, n, from, to int) []string {
	out := make([]string, 0, to-from)
	if from <= n-to {
		pos := 0
		for i := 0; i < to; i++ {
			j := strings.IndexByte(s[pos:], '\n')
			var l string
			if j < 0 {
				l, pos = s[pos:], len(s)
			} else {
				l, pos = s[pos:pos+j], pos+j+1
			}
			if i >= from {
				out = append(out, l)
			}
		}
		return out
	}
	end := len(s)
	tmp := make([]string, 0, n-from)
	for i := n - 1; i >= from; i-- {
		j := strings.LastIndexByte(s[:end], '\n')
		l := s[j+1 : end]
		if i < to {
			tmp = append(tmp, l)
		}
		if j < 0 {
			break
		}
		end = j
	}
	for i := len(tmp) - 1; i >= 0; i-- {
		out = append(out, tmp[i])
	}
	return out
}

// lines renders lines [from, to) of the seg at width w.
func (p paints) segLines(s seg, from, to, w int) []string {
	if from >= to {
		return nil
	}
	if s.gen != nil {
		out := make([]string, 0, to-from)
		for i := from; i < to; i++ {
			out = append(out, fitStyled(s.gen(i), w))
		}
		return out
	}
	ls := rawLines(s.raw, s.n, from, to)
	for i, l := range ls {
		if s.pre != nil {
			l = s.pre(l)
		}
		ls[i] = cleanLine(l)
	}
	if s.chunk != nil {
		idx := make([]int, len(ls))
		for i := range idx {
			idx[i] = from + i
		}
		return s.chunk(idx, ls, w)
	}
	for i, l := range ls {
		ls[i] = p.output.on(fit(l, w))
	}
	return ls
}

// Preview sizes: a collapsed tool shows its first and last lines, like
// codex's 5-line head+tail. An expanded one shows every line (wrap.go).
const (
	collapsedHead = 4
	collapsedTail = 2
)

// body lays segs out at width w: all lines when they fit in head+tail+1,
// else the first head and last tail lines around a "hidden" marker.
func (p paints) body(segs []seg, w, head, tail int) []string {
	total := 0
	for _, s := range segs {
		total += s.n
	}
	if total <= head+tail+1 {
		return p.rangeLines(segs, 0, total, w)
	}
	out := p.rangeLines(segs, 0, head, w)
	out = append(out, p.hidden.on(fit(fmt.Sprintf("… %d lines hidden …", total-head-tail), w)))
	return append(out, p.rangeLines(segs, total-tail, total, w)...)
}

// rangeLines renders global lines [from, to) across segs.
func (p paints) rangeLines(segs []seg, from, to, w int) []string {
	var out []string
	off := 0
	for _, s := range segs {
		a, b := max(from-off, 0), min(to-off, s.n)
		if a < b {
			out = append(out, p.segLines(s, a, b, w)...)
		}
		off += s.n
		if off >= to {
			break
		}
	}
	return out
}
