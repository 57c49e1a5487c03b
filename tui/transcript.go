package tui

// The transcript is a lazy list. Its position is an anchor (the item at the
// top of the viewport and how many of its lines are scrolled off), never an
// absolute line number: an absolute offset would need the height of every
// item above it, i.e. rendering the whole session (the trap of a total
// height computed up front). Every operation below touches only the items between
// the old and the new viewport, plus one viewport of lines.

// listSource gives the transcript its items' heights and lines. Both must
// be cheap on repeated calls (the renderer caches per item version and
// width), and rows lays out only the lines asked for: an expanded tool
// output may be hundreds of thousands of lines tall.
type listSource interface {
	count() int
	height(i int) int
	rows(i, from, to int) []string
}

// itemGap is the blank line between two items.
const itemGap = 1

type transcript struct {
	top     int // item at the top of the viewport
	topLine int // lines of items[top] scrolled off above
	follow  bool
	// seen is the item count when following stopped: items beyond it are
	// "new" for the "↓ N new" hint.
	seen int
	sel  int // selected item, -1 for none
}

func newTranscript() transcript { return transcript{follow: true, sel: -1} }

// height is item i's block: its lines plus the gap after it (none after the
// last item, so the bottom of the transcript is flush with the panel below).
func blockHeight(src listSource, i int) int {
	h := src.height(i)
	if i < src.count()-1 {
		h += itemGap
	}
	return h
}

// anchorBottom places the anchor so the last line of the last item sits on
// the last row of a viewport of h rows.
func (t *transcript) anchorBottom(src listSource, h int) {
	t.anchorEndAt(src, src.count()-1, h)
}

// anchorEndAt places the anchor so that item i ends on the last row.
func (t *transcript) anchorEndAt(src listSource, i, h int) {
	acc := 0
	for j := i; j >= 0; j-- {
		bh := blockHeight(src, j)
		if j == i && j < src.count()-1 {
			bh -= itemGap // the gap after i may hang below the viewport
		}
		acc += bh
		if acc >= h {
			t.top, t.topLine = j, acc-h
			return
		}
	}
	t.top, t.topLine = 0, 0
}

// stopFollowing freezes the view where it is (used before any scroll up).
// When everything fits on screen there is nothing to scroll to, and
// following goes on.
func (t *transcript) stopFollowing(src listSource, h int) {
	if t.follow {
		t.anchorBottom(src, h)
		if t.top == 0 && t.topLine == 0 {
			return
		}
		t.follow = false
		t.seen = src.count()
	}
}

// newCount is the number of items that arrived since following stopped.
func (t *transcript) newCount(src listSource) int {
	if t.follow {
		return 0
	}
	return max(src.count()-t.seen, 0)
}

// linesBelow counts lines from the anchor down, stopping once it exceeds
// limit (so the cost is bounded by the viewport).
func (t *transcript) linesBelow(src listSource, limit int) int {
	n := src.count()
	acc := 0
	for i := t.top; i < n && acc <= limit; i++ {
		acc += blockHeight(src, i)
		if i == t.top {
			acc -= t.topLine
		}
	}
	return acc
}

// clamp repairs the anchor after items changed height or count.
func (t *transcript) clamp(src listSource, h int) {
	n := src.count()
	if n == 0 {
		t.top, t.topLine, t.sel = 0, 0, -1
		return
	}
	if t.sel >= n {
		t.sel = n - 1
	}
	if t.follow {
		t.anchorBottom(src, h)
		return
	}
	if t.top >= n {
		t.top, t.topLine = n-1, 0
	}
	if bh := blockHeight(src, t.top); t.topLine >= bh {
		t.topLine = max(bh-1, 0)
	}
	// Never leave blank rows at the bottom while there is content above.
	if t.linesBelow(src, h) < h {
		t.anchorBottom(src, h)
	}
}

// scroll moves the view by delta lines (negative = up). Reaching the bottom
// resumes following, so "scroll down to catch up" just works.
func (t *transcript) scroll(src listSource, delta, h int) {
	n := src.count()
	if n == 0 || delta == 0 {
		return
	}
	if delta < 0 {
		t.stopFollowing(src, h)
		t.topLine += delta
		for t.topLine < 0 && t.top > 0 {
			t.top--
			t.topLine += blockHeight(src, t.top)
		}
		if t.topLine < 0 {
			t.topLine = 0
		}
		return
	}
	if t.follow {
		return
	}
	t.topLine += delta
	for t.top < n-1 {
		bh := blockHeight(src, t.top)
		if t.topLine < bh {
			break
		}
		t.topLine -= bh
		t.top++
	}
	if t.linesBelow(src, h) <= h {
		t.follow = true
		t.anchorBottom(src, h)
	}
}

// toTop jumps to the first line.
func (t *transcript) toTop(src listSource, h int) {
	t.stopFollowing(src, h)
	t.top, t.topLine = 0, 0
}

// toBottom jumps to the end and resumes following.
func (t *transcript) toBottom(src listSource, h int) {
	t.follow = true
	t.anchorBottom(src, h)
}

// reveal scrolls the least needed to show item i (its start when it is
// taller than the viewport). Unless i is the last item (which resumes
// following), the last row is kept free: it carries the "↓ N new" hint.
func (t *transcript) reveal(src listSource, i, h int) {
	n := src.count()
	if i < 0 || i >= n {
		return
	}
	if i == n-1 && src.height(i) <= h {
		t.follow = true
		t.anchorBottom(src, h)
		return
	}
	if t.follow {
		t.anchorBottom(src, h)
	}
	hv := h
	if h > 1 {
		hv = h - 1
	}
	if i < t.top || (i == t.top && t.topLine > 0) {
		t.stopFollowing(src, h)
		t.top, t.topLine = i, 0
		return
	}
	// Walk down from the anchor at most one viewport to see whether i ends
	// inside it.
	acc := -t.topLine
	for j := t.top; j < n && acc < hv; j++ {
		ih := src.height(j)
		if j == i {
			if acc+ih <= hv && !t.follow {
				return // fully visible
			}
			break
		}
		acc += blockHeight(src, j)
	}
	t.stopFollowing(src, h)
	if src.height(i) >= hv {
		t.top, t.topLine = i, 0
		return
	}
	t.anchorEndAt(src, i, hv)
}

// visible collects the viewport's rows: at most h lines, with the item
// index of each row (-1 for gaps). It lays out only the rows it shows.
func (t *transcript) visible(src listSource, h int, rows []string, owners []int) ([]string, []int) {
	rows, owners = rows[:0], owners[:0]
	n := src.count()
	skip := t.topLine
	for i := t.top; i < n && len(rows) < h; i++ {
		ih := src.height(i)
		if skip < ih {
			for _, l := range src.rows(i, skip, skip+h-len(rows)) {
				rows = append(rows, l)
				owners = append(owners, i)
			}
			skip = 0
		} else {
			skip -= ih
		}
		if i < n-1 && len(rows) < h {
			if skip > 0 {
				skip--
			} else {
				rows = append(rows, "")
				owners = append(owners, -1)
			}
		}
	}
	return rows, owners
}

// firstVisible is the top-most item with a row in the viewport, -1 for
// none.
func firstVisible(owners []int) int {
	for _, o := range owners {
		if o >= 0 {
			return o
		}
	}
	return -1
}

// lastVisible is the bottom-most item with a row in the viewport.
func lastVisible(owners []int) int {
	for i := len(owners) - 1; i >= 0; i-- {
		if owners[i] >= 0 {
			return owners[i]
		}
	}
	return -1
}
