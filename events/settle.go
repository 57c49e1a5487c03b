package events

// A day-long session does not fit in memory as items, so an exporter
// writes the items nothing can change any more and lets the timeline
// forget them: Settled says how many of the first items are final,
// Release forgets them.

// markBoundary notes a run's end. Nothing later finishes what came
// before it but a call still running or a turn still streaming (see
// final). A user message is no such point: Claude Code reports a turn
// again after the user interrupted it, and pynchy a call's result.
func (t *Timeline) markBoundary() { t.boundary = len(t.items) }

// final says whether nothing the timeline applies can change it any
// more, once a boundary followed it: a call with its outcome, a turn
// whose final form came, any other item but the notice that counts
// foreign frames (its text counts on).
func (t *Timeline) final(it *Item) bool {
	switch {
	case it == t.foreignNote:
		return false
	case it.Kind == ItemTool:
		return it.Tool.Status != ToolRunning && (it.Tool.Result == nil || !it.Tool.Result.streaming)
	case it.Kind == ItemAssistant:
		return !it.Open
	}
	return true
}

// Settled is how many of the first items are final: they came before
// the latest run end, and each is finished. Only a
// Pruned mark (which exports do not write) still changes one of them.
func (t *Timeline) Settled() int {
	end := t.boundary
	if t.lag > 0 {
		end = max(end, len(t.items)-t.lag)
	}
	for t.settled < end {
		if it := t.items[t.settled]; !t.final(it) && !t.abandoned(it) {
			break
		}
		t.settled++
	}
	return t.settled
}

// abandoned ends a call still running SettleAfter's n items after it, as
// the end of a file would (EndOfInput): in a file a call's result comes
// within a few items or not at all (a log of API responses holds no
// results).
func (t *Timeline) abandoned(it *Item) bool {
	if t.lag == 0 || t.settled >= len(t.items)-t.lag || it.Kind != ItemTool ||
		it.Tool.Status != ToolRunning || it.Tool.Result != nil {
		return false
	}
	it.Tool.Status = ToolUnknown
	it.Version++
	return true
}

// SettleAfter makes a final item count as settled once n items came
// after it, run end or not: a transcript file of API requests or of a
// Suna thread has no run ends, and what changes an item (a call's result,
// a turn reported again) comes within a few items. A call still running
// n items later ends as unknown, as it would at the end of the file. 0,
// the default, waits for a run's end.
func (t *Timeline) SettleAfter(n int) { t.lag = n }

// FileSettleLag is SettleAfter's n for a session read from a file: far
// more than the few items after which a file still changes one.
const FileSettleLag = 1000

// Release forgets the first n items (at most Settled): they leave Items
// and every index, so that their memory goes; Items()[0] is then what was
// item n. Their texts in the BodyStore stay readable through items a
// caller still holds. An event about a released call or turn (a very
// late result) is then shown as a new item.
func (t *Timeline) Release(n int) {
	n = min(n, t.Settled())
	if n <= 0 {
		return
	}
	for _, it := range t.items[:n] {
		if it != nil {
			t.forget(it)
		}
	}
	t.released += n
	t.posts.dropBelow(t.released)
	t.unhold()
	kept := t.running[:0]
	for _, it := range t.running {
		if int(it.pos) >= t.released {
			kept = append(kept, it)
		}
	}
	clear(t.running[len(kept):])
	t.running = kept
	clear(t.items[:n])
	t.items = t.items[n:]
	if t.frozen != nil {
		t.frozen = t.frozen[min(n, len(t.frozen)):]
	}
	t.frozenTo = max(t.frozenTo-n, 0)
	t.boundary -= n
	t.settled -= n
	t.version++
}

// Released is how many items Release forgot: Items()[i] is item
// Released()+i of the whole session.
func (t *Timeline) Released() int { return t.released }
