package render

import (
	"strconv"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/tools"
)

// searchBody draws search_files: the message, then each hit as a
// "path:line" header over its numbered context, the matching line
// emphasised.
func searchBody(r *Renderer, t *events.ToolItem, w int) ([]seg, []string) {
	sr := t.Output().SearchResult()
	if sr == nil {
		// HEAD text is already "path:line\n<n>: context" rows; colour
		// them line by line.
		text := t.Output().Text
		var tags []string
		if n, ok := tools.FoundMatches(cutBytes(text, 4096)); ok {
			tags = append(tags, r.p.tag.on(matches(n)))
		}
		return []seg{textSeg(text, r.searchTextChunk)}, tags
	}
	var segs []seg
	if sr.Message != "" {
		segs = append(segs, linesSeg(r.p.dim.on(sanitize.Line(sr.Message))))
	}
	for _, h := range sr.Hits {
		hdr := r.p.path.on(sanitize.Line(h.Path))
		if h.Line > 0 {
			hdr += r.p.lineNo.on(":" + strconv.Itoa(h.Line))
		}
		segs = append(segs, linesSeg(hdr))
		line := h.Line
		segs = append(segs, textSeg(h.Context, func(_ []int, ls []string, w int) []string {
			return r.contextLines(ls, line, w)
		}))
	}
	total := sr.Total
	if total == 0 {
		total = len(sr.Hits)
	}
	return segs, []string{r.p.tag.on(matches(total))}
}

// contextLines styles "<n>: text" rows, emphasising row n == match.
func (r *Renderer) contextLines(ls []string, match, w int) []string {
	for i, l := range ls {
		l = fit(l, w)
		if n, pre, ok := tools.ContextRow(l); ok {
			body := r.p.output
			if n != match && match > 0 {
				body = r.p.dim
			}
			ls[i] = r.p.lineNo.on(l[:pre]) + body.on(l[pre:])
			continue
		}
		ls[i] = r.p.output.on(l)
	}
	return ls
}

func (r *Renderer) searchTextChunk(idx []int, ls []string, w int) []string {
	for i, l := range ls {
		switch {
		case idx[i] == 0:
			ls[i] = r.p.dim.on(fit(l, w))
		case isContextRow(l):
			ls[i] = r.contextLines([]string{l}, 0, w)[0]
		case tools.IsSearchHit(l):
			ls[i] = r.p.path.on(fit(l, w))
		default:
			ls[i] = r.p.output.on(fit(l, w))
		}
	}
	return ls
}

func matches(n int) string {
	if n == 1 {
		return "1 match"
	}
	return strconv.Itoa(n) + " matches"
}

func isContextRow(l string) bool {
	_, _, ok := tools.ContextRow(l)
	return ok
}
