package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/transcript"
)

// aheadFile writes an export's JSON lines into a regular file while the
// replay is still coming in, so that little is left to write once it is
// in. maria sends no end-of-replay marker: export waits for strong
// evidence of the end (a quiet window, see backend/maria's EvidenceEnd),
// and its own processor is idle for that window. The lines are written
// whenever the stream has nothing more on its way (an update with
// backend.BacklogNone, the last one of a replay among them), during that
// window.
//
// Anything the timeline still changes is taken back: for each item
// written, its position in the file and its Version (which grows with
// every change) are kept, and the next catch-up truncates the file at the
// first item that changed, or was replaced by a reset, and writes on from
// there. So the file ends byte for byte what writing the finished
// timeline would give; only the work is earlier. What went into a pipe
// cannot be taken back, so only a regular file opened without O_APPEND is
// written ahead.
type aheadFile struct {
	f     *os.File
	start int64 // where the export begins in the file
	tl    *events.Timeline
	j     *transcript.JSONLWriter
	items []aheadItem
	base  int64 // offset from start of j's byte 0
	err   error // the first failure; nothing more is written ahead
}

// aheadItem is one item written ahead: what it was and where it ends.
type aheadItem struct {
	it      *events.Item
	version uint64
	end     int64 // offset from start
}

// newAheadFile returns an aheadFile for w, or nil when w is not a regular
// file that can be truncated and written at its position.
func newAheadFile(w io.Writer) *aheadFile {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if appending, err := appendOnly(f); err != nil || appending {
		return nil
	}
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	return &aheadFile{f: f, start: start}
}

// step sees each update of the stream: when nothing more is on its way,
// the file catches up with the timeline.
func (a *aheadFile) step(s liveStep) {
	if a.err == nil && s.u.Backlog == backend.BacklogNone {
		a.catchUp(s.tl, false)
	}
}

// catchUp takes back what changed since it was written and writes what is
// new, buffered (finish flushes). Unless all, it stops before a tool that
// is still running: its result is likely on its way.
func (a *aheadFile) catchUp(tl *events.Timeline, all bool) {
	items := tl.Items()
	keep := 0
	if tl == a.tl {
		for keep < len(a.items) && keep < len(items) &&
			a.items[keep].it == items[keep] && a.items[keep].version == items[keep].Version {
			keep++
		}
	}
	if a.j == nil || keep < len(a.items) {
		var end int64
		if keep > 0 {
			end = a.items[keep-1].end
		}
		if a.err = a.rewind(end); a.err != nil {
			return
		}
		a.items = a.items[:keep]
	}
	a.tl = tl
	for _, it := range items[keep:] {
		if !all && it.Kind == events.ItemTool && it.Tool.Status == events.ToolRunning {
			return
		}
		if a.err = a.j.Item(it); a.err != nil {
			return
		}
		a.items = append(a.items, aheadItem{it: it, version: it.Version, end: a.base + a.j.Written()})
	}
}

// rewind moves the file back to end (an offset from start), dropping what
// follows.
func (a *aheadFile) rewind(end int64) error {
	if a.j == nil {
		a.j = transcript.NewJSONLWriter(a.f)
	} else if err := a.j.Flush(); err != nil {
		return err
	}
	at := a.start + end
	if err := a.f.Truncate(at); err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
	if _, err := a.f.Seek(at, io.SeekStart); err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
	a.base = end - a.j.Written() // the writer goes on counting
	return nil
}

// finish writes the rest of the finished timeline and its closing record.
// On an earlier failure it starts over at the export's beginning, so the
// error is the one the whole write meets.
func (a *aheadFile) finish(tl *events.Timeline) error {
	if a.err != nil {
		a.items, a.j, a.err = nil, nil, nil
		if err := a.rewind(0); err != nil {
			return err
		}
	}
	if a.catchUp(tl, true); a.err != nil {
		return a.err
	}
	if err := a.j.State(tl); err != nil {
		return err
	}
	return a.j.Flush()
}

// abandon leaves the file as it was before the export: the export failed
// and writes nothing.
func (a *aheadFile) abandon() {
	if a.j == nil {
		return
	}
	a.j = nil
	_ = a.f.Truncate(a.start)
	_, _ = a.f.Seek(a.start, io.SeekStart)
}
