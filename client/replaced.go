package client

import (
	"context"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// A session id can outlive its session: a daemon that restarts with a
// fresh state (maria's, and its fake) gives the same ids again, to new
// tasks. A follow that reconnects then reads another session under the
// same id, and a decoder that drops what it delivered before (by event
// id) would stitch the new session's texts onto the old history. So
// whoever follows a session checks, at each new connection, that the id
// still names the session it started with, and starts over on the new
// one when it does not (FollowSame).

// NoticeReplaced is the kind of the notice FollowSame puts at the start
// of a session that replaced the one followed under the same id. Decoders
// never set it (they set the events package's kinds).
const NoticeReplaced = "perch.session.replaced"

// Replaced says whether now is another session than was, which had the
// same id: both have a creation time and they differ. A backend that
// reports none (pynchy's chats) never replaces a session this way.
func Replaced(was, now events.Task) bool {
	return !was.Created.IsZero() && !now.Created.IsZero() && !was.Created.Equal(now.Created)
}

// FollowSame runs follow (one of b's ways of following the session
// task.ID, bound to the context it is given) and passes its steps to on,
// until it ends. Each time the stream connects again it asks b for the
// session (one request, on the stream's goroutine, so that nothing of the
// new connection is delivered before the answer): when the id names
// another session now (Replaced), the follow is ended and started over
// for the new session, whose steps begin with a Reset and a notice of
// kind NoticeReplaced that says so. The first connection is not checked
// (the caller just found task); when task has no creation time, the
// session is asked for it beside the first replay.
//
// An error asking for the session is not a replacement: the stream goes
// on, as it would have.
func FollowSame(ctx context.Context, b Backend, task events.Task, follow func(ctx context.Context, on func(Step)) error, on func(Step)) error {
	for {
		fctx, cancel := context.WithCancel(ctx)
		var next *events.Task
		var learnt chan events.Task // the first connection's session, asked on the side
		conns := 0
		err := follow(fctx, func(s Step) {
			if next != nil || fctx.Err() != nil {
				return // replaced: what this stream still sends is not task's
			}
			if st := s.State; st != nil && st.Phase == sse.PhaseLive {
				conns++
				switch {
				case conns == 1 && !task.Created.IsZero():
					// The session asked for just before: nothing to check.
				case conns == 1:
					// Not known yet: asked without holding up the
					// first replay, for the next connection to compare.
					learnt = make(chan events.Task, 1)
					go func(id string, ch chan<- events.Task) {
						if t, err := b.Session(fctx, id); err == nil && t.ID == id {
							ch <- t
						}
					}(task.ID, learnt)
				default:
					select {
					case t := <-learnt: // nil when nothing was asked
						task.Created = t.Created
					default:
					}
					if now, err := b.Session(fctx, task.ID); err == nil && now.ID == task.ID && Replaced(task, now) {
						next = &now
						cancel()
						return
					}
				}
			}
			on(s)
		})
		cancel()
		if next == nil || ctx.Err() != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		was := task
		task = task.Merge(*next)
		on(Step{Update: Update{Reset: true, Events: []events.Event{replacedNotice(was, task)}}})
	}
}

// replacedNotice tells that the session on screen is another one than
// was, under the same id.
func replacedNotice(was, now events.Task) events.Event {
	return events.Event{
		Kind:       events.KindNotice,
		Level:      events.LevelWarning,
		NoticeKind: NoticeReplaced,
		Created:    time.Now(),
		Text: "Session " + shortID(now.ID) + " was replaced: the server gave its id to a new session (created " +
			now.Created.Local().Format("2006-01-02 15:04:05") + "; the one shown before was created " +
			was.Created.Local().Format("2006-01-02 15:04:05") + "). What follows is the new session.",
	}
}

// shortID is the first 8 characters of an id, as perch shows ids.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
