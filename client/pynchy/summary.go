package pynchy

import (
	"context"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

var _ client.RunSummarizer = (*Live)(nil)

// summaryRows is how many of a chat's newest rows RunSummary reads: a
// run ends with its result_meta and its reply or host message, so the
// last run's end is in far fewer.
const summaryRows = 50

// RunSummary implements client.RunSummarizer. pynchy's chat list says
// nothing of a run, and its global stream says only that the agent went
// idle; the end of a run is in the chat's history: the result_meta trace
// (usage, cost, is_error) and the reply, or a host message (an error).
// One request for the newest rows (pynchy's /api/messages takes a limit),
// decoded as perch import decodes them.
func (l *Live) RunSummary(ctx context.Context, jid string) (events.RunSummary, error) {
	rows, err := l.lastRows(ctx, jid, summaryRows)
	if err != nil {
		return events.RunSummary{}, err
	}
	d := NewDecoder(jid, "message")
	tl := events.NewTimeline()
	for i, r := range rows {
		for _, ev := range d.DecodeAt(i+1, r) {
			tl.Apply(ev)
		}
	}
	for _, ev := range d.Flush() {
		tl.Apply(ev)
	}
	items := tl.Items()
	s := events.LastRun(items)
	// pynchy says why a run failed in a host message after it
	// ("⚠️ Agent error occurred"): the last warning of the run.
	for i := len(items) - 1; i >= 0 && items[i].Kind != events.ItemUser; i-- {
		it := items[i]
		if it.Kind == events.ItemNotice && it.NoticeKind == events.NoticeHost && it.Level >= events.LevelWarning {
			if s.End != events.RunEndCancelled {
				s.End = events.RunEndFailed
			}
			s.Reason = it.Text
			break
		}
	}
	return s, nil
}
