package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/spill"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/sse"

	"github.com/perch-tui/perch/transcript"
)

// This file is export, tail and record for every live backend, maria
// included: the session comes from the backend's Follow as ordered,
// decoded updates, applied to an events.Timeline. What a backend offers
// beyond Follow (client.OptionFollower: maria says when its replay is in
// and the run is over, and hands over its wire frames for record;
// client.SettledFollower: Suna reads a finished run whole) is used where
// it is offered. The words on stderr and tail's heading follow
// Capabilities (Home, StreamStaysOpen), never the system's name.

// streamTarget returns the backend a stream command (export, tail,
// record) follows and the session, resolved from idOrPrefix.
func (c *conn) streamTarget(ctx context.Context, env Env, idOrPrefix string) (client.Backend, events.Task, error) {
	return c.openSession(ctx, env, idOrPrefix, c.openStream)
}

// liveOpts says when followLive stops and what it hands on.
type liveOpts struct {
	// untilIdle: stop at a Synced update that leaves the run over (not
	// generating); else, unless follow, at the first Synced update.
	untilIdle bool
	// follow: keep going until ctx ends (tail, record).
	follow bool
	// quiet: no connection chatter on stderr (export), unless the
	// connection keeps failing.
	quiet bool
	// frames: each step of maria's stream carries its wire frame, even
	// one that brought nothing new (record).
	frames bool
	// settled: what counts is the session once its run is over (export);
	// with untilIdle, a backend may leave out the running run's steps
	// (client.SettledFollower).
	settled bool
	// onUpdate sees each step after its events are applied.
	onUpdate func(liveStep) error
	// spill, when set, keeps the long texts of the timeline (and of the
	// ones a Reset starts) off the heap, quietly (see events.SpillOptions).
	spill events.BodyStore
}

// writeHold is how many bytes of finished texts a timeline that is
// written out as it settles (export, import) keeps in memory before they
// go to its spill file: most are written and let go before that, and the
// spill file's writes and reads are then not paid for them (about a tenth
// of an export's time).
const writeHold = 8 << 20

// newTimeline is a timeline that keeps its long texts in o.spill.
func (o liveOpts) newTimeline() *events.Timeline {
	tl := events.NewTimeline()
	if o.spill != nil {
		tl.SetBodyStore(o.spill, events.SpillOptions{Quiet: true, Hold: writeHold})
	}
	return tl
}

// settledOnly: only the session as it stands once the run is over is
// used (export --until-idle), not the steps that lead there; onUpdate, if
// any, may see fewer steps.
func (o liveOpts) settledOnly() bool { return o.settled && o.untilIdle && !o.follow }

// liveStep is one update as followLive applied it.
type liveStep struct {
	// old is the timeline a Reset replaced (nil when there was none).
	old, tl *events.Timeline
	u       client.Update
	// frame is the wire frame of the update (liveOpts.frames).
	frame *events.Frame
	// changed: applying the update's events changed the timeline.
	changed bool
}

// followLive follows a session through b into a timeline: a Reset starts
// the timeline over (the task is kept), Events are applied in order. It
// returns when the rule of o says so, when ctx ends (ctx.Err()) or when
// the backend gives up (its error, which names the server).
func followLive(ctx context.Context, env Env, b client.Backend, task events.Task, o liveOpts) (*events.Timeline, error) {
	tl := o.newTimeline()
	tl.SetTask(task)
	noun := "session"
	var chat chatter = &liveChatter{env: env, quiet: o.quiet}
	caps := b.Capabilities()
	if caps.Home {
		noun = "task"
	}
	if caps.StreamStaysOpen {
		chat = &openStreamChatter{env: env, quiet: o.quiet}
	}
	// handle applies one update; it reports whether the command is done.
	handle := func(u client.Update, frame *events.Frame) (bool, error) {
		var old *events.Timeline
		if u.Reset {
			old, tl = tl, o.newTimeline()
			tl.SetTask(task)
		}
		changed := false
		for _, ev := range u.Events {
			changed = tl.Apply(ev) || changed
		}
		if u.State != nil {
			chat.state(*u.State)
		}
		if o.onUpdate != nil {
			if err := o.onUpdate(liveStep{old: old, tl: tl, u: u, frame: frame, changed: changed}); err != nil {
				return true, err
			}
		}
		if !u.Synced || (o.follow && !o.untilIdle) {
			return false, nil
		}
		if !o.untilIdle {
			if tl.Status() == events.RunGenerating {
				fmt.Fprintf(env.Stderr, "perch: the %s is still generating; this is the transcript so far (use --until-idle to wait for the run to end)\n", noun)
			}
			return true, nil
		}
		// The backend sends Synced once it read the whole session again
		// after a run's end (Suna's history, pynchy's reload), or maria's
		// daemon said the task is not generating.
		return tl.Status() != events.RunGenerating, nil
	}
	// The stream's goroutine reads and decodes; this one's consumer
	// applies and writes, as the TUI's program does: the two halves run
	// side by side on two cores. The queue between them is bounded, so a
	// slow stdout holds the reading back (the only signal against the
	// data's direction), as it would curl's.
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		fin  bool  // handle said done: ignore what Follow still sends
		herr error // handle's error
	)
	on := func(u client.Update, frame *events.Frame) {
		if fin {
			return
		}
		if f, err := handle(u, frame); f || err != nil {
			fin, herr = true, err
			stop()
		}
	}
	of, withOptions := b.(client.OptionFollower)
	sf, settled := b.(client.SettledFollower)
	if o.frames && !withOptions && !(settled && o.settledOnly()) {
		return tl, fmt.Errorf("%s at %s cannot hand over its wire frames: %w", b.Name(), b.URL(), client.ErrUnsupported)
	}
	// A session replaced under its id (a restarted daemon) starts over
	// as the new session, with a notice: never stitched to the old one.
	steps := make(chan client.Step, stepQueue)
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for s := range steps {
			on(s.Update, s.Frame)
		}
	}()
	ferr := client.FollowSame(sctx, b, task, func(fctx context.Context, step func(client.Step)) error {
		switch {
		case settled && o.settledOnly():
			return sf.FollowSettled(fctx, task.ID, func(u client.Update) { step(client.Step{Update: u}) })
		case withOptions:
			fo := client.FollowOptions{UntilIdle: o.untilIdle, Frames: o.frames}
			return of.FollowWith(fctx, task.ID, fo, step)
		default:
			return b.Follow(fctx, task.ID, func(u client.Update) { step(client.Step{Update: u}) })
		}
	}, func(s client.Step) { steps <- s })
	// Follow hands nothing on after it returns (client.Backend).
	close(steps)
	<-consumed
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

// stepQueue is how many steps the stream's goroutine can be ahead of the
// one that applies them: enough to ride out a long write, small beside
// a session.
const stepQueue = 256

// chatter reports a stream's connection changes on stderr.
type chatter interface{ state(sse.ConnState) }

// liveChatter is what perch says of a stream the server may end after
// each run: a lost connection and
// its return. A clean close is not reported: Suna ends each run's stream
// that way.
type liveChatter struct {
	env   Env
	quiet bool
	// announced: a lost connection was reported, so its return is too.
	announced bool
}

func (c *liveChatter) state(s sse.ConnState) {
	switch s.Phase {
	case sse.PhaseLive:
		if c.announced {
			fmt.Fprintln(c.env.Stderr, "perch: reconnected")
		}
		c.announced = false
	case sse.PhaseReconnecting, sse.PhaseFailed:
		clean := errors.Is(s.Err, sse.ErrStreamClosed) && s.Attempt <= 1
		if (!c.quiet && !clean) || s.Attempt > 3 {
			fmt.Fprintf(c.env.Stderr, "perch: stream %s\n", sanitize.Line(s.String()))
			c.announced = true
		}
	}
}

// openStreamChatter is what perch says of a stream the server never ends
// by itself (Capabilities.StreamStaysOpen: maria's task stream); a server
// (or proxy) that closes it cleanly after each replay is said once and
// then followed by reconnecting, quietly.
type openStreamChatter struct {
	env                          Env
	quiet                        bool
	lastLive, cleanClose, polled bool
}

func (c *openStreamChatter) state(s sse.ConnState) {
	switch s.Phase {
	case sse.PhaseLive:
		if !c.lastLive && s.Attempt > 0 && !c.quiet && !(c.polled && c.cleanClose) {
			fmt.Fprintln(c.env.Stderr, "perch: reconnected")
		}
		c.lastLive = true
	case sse.PhaseReconnecting:
		clean := errors.Is(s.Err, sse.ErrStreamClosed)
		news := !(clean && c.polled) // a polled server's close is none
		if clean && c.cleanClose && !c.polled {
			c.polled, news = true, false
			if !c.quiet {
				fmt.Fprintln(c.env.Stderr, "perch: the daemon closes the stream after each replay; following it by reconnecting")
			}
		}
		if news && (!c.quiet || s.Attempt > 3) {
			fmt.Fprintf(c.env.Stderr, "perch: stream %s\n", sanitize.Line(s.String()))
		}
		c.cleanClose = clean
		if !clean {
			c.polled = false
		}
		c.lastLive = false
	}
}

// runExport is perch export.
func runExport(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "export")
	var c conn
	c.register(fs)
	format := fs.String("format", "md", "output format: md, json, jsonl (json and jsonl hold every text whole) or html (one page to share, secrets taken out)")
	full := fs.Bool("full", false, "md: quote every tool output whole (by default long ones are cut, with a marker)")
	noThinking := noThinkingFlag(fs)
	untilIdle := fs.Bool("until-idle", false, "wait for the current run to end before exporting")
	of := registerOutFlags(fs)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := oneOf("format", *format, exportFormats()...); err != nil {
		return err
	}
	if err := of.check(); err != nil {
		return err
	}
	b, task, err := c.streamTarget(ctx, env, pos[0])
	if err != nil {
		return err
	}
	md := transcript.MarkdownOptions{Full: *full, NoThinking: *noThinking}
	out, err := of.openExport(env, *format, task.Name, transcript.HTMLOptions{System: b.Name(), Cwd: task.Cwd}, md)
	if err != nil {
		return err
	}
	return out.close(export(ctx, env, b, task, out.w, *untilIdle))
}

// export follows the session and writes it to w as it settles.
func export(ctx context.Context, env Env, b client.Backend, task events.Task, w transcript.Writer, untilIdle bool) error {
	// A long session's texts wait in a spill file, not the heap, until
	// they are written; the file goes when the export ends.
	sp := spill.Open(task.ID)
	defer sp.Close()
	lo := exportLiveOpts(untilIdle)
	lo.spill = sp
	ex := &exportStream{w: w}
	lo.onUpdate = func(s liveStep) error { return ex.settled(s.tl) }
	tl, err := followLive(ctx, env, b, task, lo)
	saySpillErr(env, tl)
	if _, stopped := interruption(ctx); err != nil && stopped && tl != nil {
		// Ctrl-C: print what was read so far, marked incomplete.
		if werr := ex.endShort(tl, events.LevelWarning, "perch export was interrupted"); werr != nil {
			return werr
		}
		return errors.New("interrupted: the export holds what was read so far, marked incomplete")
	}
	if err != nil {
		if ex.written > 0 && tl != nil {
			// Items are out already: close the transcript.
			if werr := ex.endShort(tl, events.LevelError, "perch export stopped before the end of the session"); werr != nil {
				return werr
			}
		}
		return err
	}
	return ex.end(tl)
}

// exportLiveOpts are export's rule: the session once synced (or idle, with
// untilIdle), only its settled state counts, no chatter.
func exportLiveOpts(untilIdle bool) liveOpts {
	return liveOpts{untilIdle: untilIdle, settled: true, quiet: true}
}

// runTail is perch tail: the items as they come, with the same rendering
// for every backend. After a Reset (the backend read the session again)
// the items already printed are taken as printed by their position, so a
// reset prints only what is new, and a tool printed while running is
// printed again once the new timeline has it finished.
func runTail(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "tail")
	var c conn
	c.register(fs)
	jsonl := fs.Bool("jsonl", false, "print normalized JSON lines (a tool line repeats, same id, when it finishes)")
	untilIdle := fs.Bool("until-idle", false, "stop once the replay is in and the run has ended (else follow until interrupted)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	b, task, err := c.streamTarget(ctx, env, pos[0])
	if err != nil {
		return err
	}
	home := b.Capabilities().Home
	out := bufio.NewWriter(env.Stdout)
	p := newPrinter(out, *jsonl)
	p.holdOpen, p.past = true, true
	if !*jsonl {
		if home {
			fmt.Fprintf(out, "Following task %s  %s  (%s)  — %s\n\n", shortID(task.ID), sanitize.Line(task.Name), task.Status, stopHint(*untilIdle))
		} else {
			fmt.Fprintf(out, "Following %s session %s  %s  (%s)  — %s\n\n", b.Name(), shortID(task.ID), sanitize.Line(task.Name), task.Status, stopHint(*untilIdle))
		}
	}
	_, err = followLive(ctx, env, b, task, liveOpts{follow: true, untilIdle: *untilIdle, onUpdate: func(s liveStep) error {
		switch {
		case s.old != nil && replacedStep(s.u):
			p.next, p.running = 0, map[*events.Item]bool{} // another session: all of it is new
			p.past = true
		case s.old != nil:
			p.restart(s.old, s.tl)
		}
		held := p.holding && s.u.Synced
		if s.u.Synced {
			p.past = false // the history is in: what runs now is live
		}
		// The home system's updates that carry no event (states,
		// Synced) print nothing: the first state line follows the first
		// event, as it always did for maria's tasks.
		if !home || len(s.u.Events) > 0 || held {
			p.update(s.tl)
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}})
	out.Flush()
	if _, stopped := interruption(ctx); stopped {
		return ctx.Err() // Ctrl-C: Main says so and exits 130
	}
	if ctx.Err() != nil {
		return nil // the caller ended it
	}
	return err
}

// stopHint is the end of tail's heading: how the command ends.
func stopHint(untilIdle bool) string {
	if untilIdle {
		return "until the run ends"
	}
	return "Ctrl-C to stop"
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

// replacedStep says whether u starts another session under the same id
// (client.FollowSame's Reset and notice), not the same one read again.
func replacedStep(u client.Update) bool {
	return u.Reset && len(u.Events) > 0 && u.Events[0].NoticeKind == client.NoticeReplaced
}

// recordRefusal is why perch record does not follow b: it saves maria's
// raw event stream, which perch replay reads back. Other backends have no
// one stream that holds a session (Suna streams each run apart from the
// thread's history, pynchy one stream for every chat), so perch says what
// to use instead rather than writing a file that replays nothing.
// It says so with an error that matches client.ErrUnsupported.
func recordRefusal(b client.Backend, id string) error {
	return unsupportedError(fmt.Sprintf("perch record saves a maria task's raw event stream; %s at %s has no such stream. "+
		"Use perch export %s --backend %s --url URL --format jsonl (--until-idle to wait for the run) for the transcript",
		b.Name(), b.URL(), id, b.Name()))
}

// unsupportedError is a sentence for people that says what a backend
// cannot do; errors.Is(err, client.ErrUnsupported) holds.
type unsupportedError string

func (e unsupportedError) Error() string        { return string(e) }
func (e unsupportedError) Is(target error) bool { return target == client.ErrUnsupported }
