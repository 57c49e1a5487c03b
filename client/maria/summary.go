package maria

import (
	"context"
	"errors"
	"fmt"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

var _ client.RunSummarizer = (*Backend)(nil)

// RunSummary implements client.RunSummarizer. Neither the daemon's task
// list nor its daemon.task.changed says how a run ended (protocol.md
// §5.3: the status goes idle after PostConversation, Cancelled and Failed
// alike), and the task stream has no cursor: every connection replays
// the task's log from the start. So this reads one replay, up to its
// Synced, keeping only the current run's tally (never the transcript),
// and closes the stream: one request per run end, memory bounded by one
// frame.
func (b *Backend) RunSummary(ctx context.Context, sessionID string) (events.RunSummary, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cur, last events.RunSummary
	ended, synced := false, false
	err := b.Follow(ctx, sessionID, func(u client.Update) {
		for _, ev := range u.Events {
			switch ev.Kind {
			case events.KindPreConversation:
				cur = events.RunSummary{}
			case events.KindAssistantMessage:
				if ev.Text != "" {
					cur.LastReply = ev.Text
				}
				if ev.Usage != nil {
					cur.Usage.Add(ev.Usage)
					cur.HasUsage = true
				}
			case events.KindPostConversation:
				if cur.End == events.RunEndUnknown {
					cur.End = events.RunEndOK // an external cancel sends Cancelled, then PostConversation
				}
			case events.KindCancelled:
				cur.End = events.RunEndCancelled
			case events.KindFailed:
				cur.End, cur.Reason = events.RunEndFailed, ev.Text
			default:
				continue
			}
			if cur.End != events.RunEndUnknown {
				last, ended = cur, true
			}
		}
		if u.Synced {
			synced = true
			cancel()
		}
	})
	if !synced {
		if err == nil || errors.Is(err, context.Canceled) {
			err = ctx.Err()
		}
		return events.RunSummary{}, fmt.Errorf("reading how task %s's run ended: %w", sessionID, err)
	}
	if ended {
		return last, nil
	}
	return cur, nil
}
