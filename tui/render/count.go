package render

import "github.com/perch-tui/perch/events"

// Count is how many times it holds query, as Contains reads it (header,
// text, a tool's output whole, stored outputs a window at a time), up to
// limit (0: no limit): what a search says it found is matches, not items.
func (r *Renderer) Count(it *events.Item, query string, limit int) int {
	n, buf := countWith(it, query, r.findBuf, limit)
	r.findBuf = buf
	return n
}

func countWith(it *events.Item, query string, buf []byte, limit int) (int, []byte) {
	if it == nil || query == "" {
		return 0, buf
	}
	n := 0
	full := func() bool { return limit > 0 && n >= limit }
	count := func(s string) {
		for at := 0; !full(); {
			i := smartIndex(s, query, at)
			if i < 0 {
				return
			}
			n++
			at = i + max(len(query), 1)
		}
	}
	if it.Kind != events.ItemTool || it.Tool == nil {
		count(PlainText(it))
		return n, buf
	}
	count(toolHeaderText(it.Tool))
	t := it.Tool
	if !t.OutputStored() {
		for _, s := range outputTexts(t.Output()) {
			count(s)
		}
		return n, buf
	}
	if t.Result.ErrorText != "" {
		count(t.Result.ErrorText)
	}
	// A window at a time; a match is counted in the window it starts in
	// (the overlap only lets one that crosses the cut be seen whole).
	overlap := 4 * len(query)
	for at, size := 0, t.OutputLen(); at < size && !full(); at += storeWindow {
		want := min(storeWindow+overlap, size-at)
		if cap(buf) < want {
			buf = make([]byte, storeWindow+overlap)
		}
		got, err := t.ReadOutput(buf[:want], at)
		if err != nil {
			return n, buf
		}
		w := buf[:got]
		for from := 0; !full(); {
			i := smartIndex(w, query, from)
			if i < 0 || i >= storeWindow {
				break
			}
			n++
			from = i + max(len(query), 1)
		}
	}
	return n, buf
}

// HeaderContains reports whether a tool's header line (its name and key
// argument, shown whole when the tool is collapsed) holds query.
func HeaderContains(t *events.ToolItem, query string) bool {
	return t != nil && query != "" && smartIndex(toolHeaderText(t), query, 0) >= 0
}
