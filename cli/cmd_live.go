package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/backend/all"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
)

// This file is export, tail and record for any live backend: the session
// comes from backend.Backend.Follow as ordered, decoded updates, applied
// to an events.Timeline. maria still takes its own path (collect, which
// reads the raw frames and decides the end of its replay); viaBackend is
// the one switch that moves it here once that path's end-of-replay rule
// lives in maria's Follow alone.

// viaBackend says whether a stream command follows b through
// backend.Backend (every backend but maria, for now).
func viaBackend(b backend.Backend) bool { return b.Name() != backend.Maria }

// streamBackend returns the live backend a stream command (export, tail,
// record) follows through backend.Backend, or nil for maria's own path.
// Without a URL and without a backend other than maria nothing is asked:
// maria's daemon is found as it always was. Otherwise the backend is
// opened as tasks and send open it (probing the URL when --backend is
// not given); a URL that no probe recognises is left to maria's path.
func (c *conn) streamBackend(ctx context.Context, env Env) (backend.Backend, error) {
	name, _, err := c.settings(env)
	if err != nil {
		return nil, err
	}
	if name == backend.Maria {
		return nil, nil
	}
	if name == "" && c.url == "" && getenv(env, "PERCH_URL") == "" {
		return nil, nil
	}
	b, err := c.open(ctx, env)
	var none *all.NoBackendError
	if name == "" && errors.As(err, &none) {
		// No system answered the probes: maria's path, as before there
		// were other backends (a proxy or server that serves a task's
		// stream but not maria's daemon stream still works, and errors
		// are maria's own).
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !viaBackend(b) {
		return nil, nil
	}
	return b, nil
}

// liveOpts says when followLive stops.
type liveOpts struct {
	// untilIdle: stop at a Synced update that leaves the run over (not
	// generating); else, unless follow, at the first Synced update.
	untilIdle bool
	// follow: keep going until ctx ends (tail).
	follow bool
	// quiet: no connection chatter on stderr (export), unless the
	// connection keeps failing.
	quiet bool
	// onUpdate sees the timeline after each update's events are applied;
	// old is the timeline a Reset replaced (nil when there was none).
	onUpdate func(old, tl *events.Timeline, u backend.Update) error
}

// followLive follows a session through b into a timeline: a Reset starts
// the timeline over (the task is kept), Events are applied in order. It
// returns when the rule of o says so, when ctx ends (ctx.Err()) or when
// the backend gives up (its error, which names the server).
func followLive(ctx context.Context, env Env, b backend.Backend, task events.Task, o liveOpts) (*events.Timeline, error) {
	tl := events.NewTimeline()
	tl.SetTask(task)
	// announced: a lost connection was reported, so its return is too. A
	// clean close is not reported: Suna ends each run's stream that way.
	announced := false
	// handle applies one update; it reports whether the command is done.
	handle := func(u backend.Update) (bool, error) {
		var old *events.Timeline
		if u.Reset {
			old, tl = tl, events.NewTimeline()
			tl.SetTask(task)
		}
		for _, ev := range u.Events {
			tl.Apply(ev)
		}
		if u.State != nil {
			s := *u.State
			switch s.Phase {
			case client.PhaseLive:
				if announced {
					fmt.Fprintln(env.Stderr, "perch: reconnected")
				}
				announced = false
			case client.PhaseReconnecting, client.PhaseFailed:
				clean := errors.Is(s.Err, client.ErrStreamClosed) && s.Attempt <= 1
				if (!o.quiet && !clean) || s.Attempt > 3 {
					fmt.Fprintf(env.Stderr, "perch: stream %s\n", sanitize.Line(s.String()))
					announced = true
				}
			}
		}
		if o.onUpdate != nil {
			if err := o.onUpdate(old, tl, u); err != nil {
				return true, err
			}
		}
		if !u.Synced || (o.follow && !o.untilIdle) {
			return false, nil
		}
		if !o.untilIdle {
			if tl.Status() == events.RunGenerating {
				fmt.Fprintln(env.Stderr, "perch: the session is still generating; this is the transcript so far (use --until-idle to wait for the run to end)")
			}
			return true, nil
		}
		// The backend sends Synced once it read the whole session again
		// after a run's end (Suna's history, pynchy's reload).
		return tl.Status() != events.RunGenerating, nil
	}
	// Updates are handled on Follow's goroutine, as they come: a hand-off
	// to another goroutine per update costs more than applying it (Suna
	// sends one update per frame, tens of thousands in a long run), and a
	// slow stdout then slows the reading of the stream, as it would curl's.
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		fin  bool  // handle said done: ignore what Follow still sends
		herr error // handle's error
	)
	ferr := b.Follow(sctx, task.ID, func(u backend.Update) {
		if fin {
			return
		}
		if f, err := handle(u); f || err != nil {
			fin, herr = true, err
			stop()
		}
	})
	switch {
	case fin:
		return tl, herr
	case ctx.Err() != nil:
		return tl, ctx.Err()
	case ferr == nil:
		ferr = fmt.Errorf("following session %s at %s ended", shortID(task.ID), b.URL())
	}
	return tl, ferr
}

// exportLive is perch export through a live backend.
func exportLive(ctx context.Context, env Env, b backend.Backend, idOrPrefix, format string, full, untilIdle bool) error {
	task, err := b.Session(ctx, idOrPrefix)
	if err != nil {
		return err
	}
	tl, err := followLive(ctx, env, b, task, liveOpts{untilIdle: untilIdle, quiet: true})
	if err != nil {
		return err
	}
	return writeExport(env.Stdout, tl, format, task.Name, full)
}

// tailLive is perch tail through a live backend: the same rendering as
// maria's tail. After a Reset (the backend read the session again) the
// items already printed are taken as printed by their position, so a
// reset prints only what is new, and a tool printed while running is
// printed again once the new timeline has it finished.
func tailLive(ctx context.Context, env Env, b backend.Backend, idOrPrefix string, jsonl bool) error {
	task, err := b.Session(ctx, idOrPrefix)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(env.Stdout)
	p := newPrinter(out, jsonl)
	p.holdOpen = true
	if !jsonl {
		fmt.Fprintf(out, "Following %s session %s  %s  (%s)  — Ctrl-C to stop\n\n", b.Name(), shortID(task.ID), sanitize.Line(task.Name), task.Status)
	}
	_, err = followLive(ctx, env, b, task, liveOpts{follow: true, onUpdate: func(old, tl *events.Timeline, u backend.Update) error {
		if old != nil {
			p.restart(old, tl)
		}
		p.update(tl)
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}})
	out.Flush()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// restart carries the printer over to a timeline that replaced old: the
// first p.next items count as printed, and the tools printed while
// running are watched at their positions in the new one.
func (p *printer) restart(old, tl *events.Timeline) {
	items := tl.Items()
	running := map[*events.Item]bool{}
	for i, it := range old.Items() {
		if p.running[it] && i < len(items) && items[i].Kind == events.ItemTool {
			running[items[i]] = true
		}
	}
	p.running = running
	p.next = min(p.next, len(items))
}

// recordRefusal is why perch record does not follow b: it saves maria's
// raw event stream, which perch replay reads back. Other backends have no
// one stream that holds a session (Suna streams each run apart from the
// thread's history, pynchy one stream for every chat), so perch says what
// to use instead rather than writing a file that replays nothing.
func recordRefusal(b backend.Backend, id string) error {
	return fmt.Errorf("perch record saves a maria task's raw event stream; %s at %s has no such stream. "+
		"Use perch export %s --backend %s --url URL --format jsonl (--until-idle to wait for the run) for the transcript",
		b.Name(), b.URL(), id, b.Name())
}
