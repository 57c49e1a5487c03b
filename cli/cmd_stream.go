package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/memlimit"
	"github.com/perch-tui/perch/internal/ordered"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/transcript"
)

// settle is how long a stream must stay quiet before its replay counts as
// complete when nothing else says it is (maria sends no end-of-replay
// marker). Quiet means no frame, no byte and no event half received: a
// large event may take longer than this to arrive. A server (or proxy) that
// closes the stream after each replay gives another sign: a clean close,
// then a replay that brings nothing new.
const settle = 600 * time.Millisecond

// settleQuick is the quiet window when the evidence is strong: the daemon
// says the task is idle or stopped (asked while the stream starts), and the
// last frame received ends a run. maria writes a replay from memory in one
// loop, so a replay that reached the run's end and then fell silent, with
// no byte arriving and no event half received or still on its way to the
// timeline, is complete; a later run would begin after the daemon said
// idle and would be live, not replay. settleConfirm is a second look after
// the window, so that bytes the kernel already holds (the process may have
// been descheduled for the whole window) are read before export ends.
const (
	settleQuick   = 40 * time.Millisecond
	settleConfirm = 10 * time.Millisecond
)

// streamMsg carries frames and connection states in their order; a
// frame comes decoded (events.Decode is pure, so the decode pool's workers
// decode several frames at once while the follower applies earlier ones).
type streamMsg struct {
	frame *events.Frame
	ev    events.Event
	state *client.ConnState
}

// Bounds of what watch holds read but not yet applied.
const (
	watchDepth = 64
	watchBytes = 1 << 20
)

// watch runs the task stream in a goroutine; messages arrive in order from
// the pool's Results (closed once the stream ended and everything was
// taken), and the stream's final error on errc. Cancel ctx to stop.
// prog (may be nil) follows the bytes coming in.
func watch(ctx context.Context, cl *client.Client, taskID string, prog *client.Progress) (*ordered.Pool[streamMsg, streamMsg], <-chan error) {
	pool := ordered.New(ordered.Workers(), watchDepth, watchBytes, func(m streamMsg) streamMsg {
		if m.frame != nil {
			m.ev = events.Decode(*m.frame)
		}
		return m
	})
	errc := make(chan error, 1)
	go func() {
		err := cl.StreamTaskProgress(ctx, taskID,
			func(f events.Frame) { pool.Put(streamMsg{frame: &f}, len(f.Data), ctx.Done()) },
			func(s client.ConnState) { pool.Put(streamMsg{state: &s}, 0, ctx.Done()) },
			prog)
		pool.Close()
		errc <- err
	}()
	return pool, errc
}

// follower applies a task stream to a timeline and reports connection
// changes on stderr.
type follower struct {
	env      Env
	tl       *events.Timeline
	dec      *events.MariaDecoder // nil until the first frame
	lastLive bool
	quiet    bool // no connection chatter (export)
	// onNew sees each frame the timeline has not seen before (a reconnect
	// replays the whole log). A queue snapshot, which has no id, is new
	// when it comes after something new on its connection (see held).
	onNew func(events.Frame) error
	err   error // the first onNew error

	// runEnd: the last frame of this connection ends a run
	// (PostConversation, Cancelled, Failed), new or replayed.
	runEnd bool

	seenAny bool           // some event was new, on any connection
	connNew bool           // this connection brought something new
	held    []events.Frame // snapshots of this connection waiting for a verdict
	// cleanClose: the last connection ended with a clean close. replayed:
	// it did so after a whole replay that followed a clean close and
	// brought nothing new, so the log was all there. polling: the server
	// closes cleanly after each replay (so that is no news).
	cleanClose, replayed, polling bool
}

// handle applies one stream message; it returns the decoded event (nil for
// states) so callers can react.
func (f *follower) handle(m streamMsg) *events.Event {
	if m.state != nil {
		s := *m.state
		switch s.Phase {
		case client.PhaseLive:
			// Each connection replays the log from the start.
			f.decoder().Reconnected()
			if !f.lastLive && s.Attempt > 0 && !f.quiet && !(f.polling && f.cleanClose) {
				fmt.Fprintln(f.env.Stderr, "perch: reconnected")
			}
			f.lastLive = true
			f.connNew, f.held = !f.seenAny, nil
			f.runEnd = false
		case client.PhaseReconnecting:
			clean := errors.Is(s.Err, client.ErrStreamClosed)
			f.replayed = clean && f.cleanClose && !f.connNew && f.lastLive
			news := !(clean && f.polling) // a polled server's close is none
			if clean && f.cleanClose && !f.polling {
				f.polling, news = true, false
				if !f.quiet {
					fmt.Fprintln(f.env.Stderr, "perch: the daemon closes the stream after each replay; following it by reconnecting")
				}
			}
			if news && (!f.quiet || s.Attempt > 3) {
				fmt.Fprintf(f.env.Stderr, "perch: stream %s\n", sanitize.Line(s.String()))
			}
			f.cleanClose = clean
			if !clean {
				f.polling = false
			}
			f.lastLive = false
			f.held = nil
		}
		return nil
	}
	big := len(m.frame.Data) >= bigFrame
	// maria's decoder drops what a reconnect's replay repeats: an event
	// that comes out of it is new (a queue snapshot, a state, always does).
	switch m.ev.Kind {
	case events.KindPostConversation, events.KindCancelled, events.KindFailed:
		f.runEnd = true
	default:
		f.runEnd = false
	}
	evs := f.decoder().Accept(m.ev)
	changed := false
	for _, ev := range evs {
		changed = f.tl.Apply(ev) || changed
	}
	var ev *events.Event
	if len(evs) > 0 {
		ev = &evs[0]
	}
	switch {
	case ev != nil && ev.Kind == events.KindQueueSnapshot:
		// A state, replayed with the log: new only after something new.
		if f.connNew {
			f.record(*m.frame)
		} else if f.onNew != nil {
			f.held = append(f.held, *m.frame)
		}
	case ev != nil && (ev.ID != "" || changed):
		f.seenAny, f.connNew = true, true
		for _, h := range f.held {
			f.record(h)
		}
		f.held = nil
		f.record(*m.frame)
	default:
		f.held = nil // the replay of what was seen before
	}
	if big {
		m.frame.Data = nil // decoded and recorded: the frame is done with
		runtime.GC()       // see bigFrame
	}
	return ev
}

func (f *follower) decoder() *events.MariaDecoder {
	if f.dec == nil {
		f.dec = events.NewMariaDecoder()
	}
	return f.dec
}

func (f *follower) record(fr events.Frame) {
	if f.onNew != nil && f.err == nil {
		f.err = f.onNew(fr)
	}
}

// bigFrame is the size from which the CLI collects garbage once a frame is
// decoded. The frame of a huge tool output is that much garbage then, and
// the GC's pacing (next collection at twice the live heap) lets garbage pile
// up to the size of everything kept so far: with a few such outputs, an
// export would take twice the memory it needs. Byte buffers hold no
// pointers, so the collection costs next to nothing.
const bigFrame = 8 << 20

func runTail(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "tail")
	var c conn
	c.register(fs)
	jsonl := fs.Bool("jsonl", false, "print normalized JSON lines (a tool line repeats, same id, when it finishes)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if b, err := c.streamBackend(ctx, env); err != nil || b != nil {
		if err != nil {
			return err
		}
		return tailLive(ctx, env, b, pos[0], *jsonl)
	}
	cl, task, err := c.task(ctx, env, pos[0])
	if err != nil {
		return err
	}
	tl := events.NewTimeline()
	tl.SetTask(task)
	out := bufio.NewWriter(env.Stdout)
	p := newPrinter(out, *jsonl)
	if !*jsonl {
		fmt.Fprintf(out, "Following task %s  %s  (%s)  — Ctrl-C to stop\n\n", shortID(task.ID), sanitize.Line(task.Name), task.Status)
	}
	f := &follower{env: env, tl: tl}
	wctx, stop := context.WithCancel(ctx)
	pool, errc := watch(wctx, cl, task.ID, nil)
	// A write error returns with the stream still running: stop it, so
	// that the pool's workers end.
	defer func() { stop(); pool.Wait() }()
	ch := pool.Results()
	for {
		select {
		case t, ok := <-ch:
			if !ok {
				ch = nil // the stream ended: its error follows on errc
				continue
			}
			if ev := f.handle(t.Wait()); ev != nil {
				p.update(tl)
			}
			if pool.Pending() == 0 {
				if err := out.Flush(); err != nil {
					return fmt.Errorf("write: %w", err)
				}
			}
		case err := <-errc:
			out.Flush()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// printer prints a timeline's items as they appear, and tool items again
// when they finish.
type printer struct {
	w       io.Writer
	jsonl   bool
	next    int                   // first item not printed yet
	running map[*events.Item]bool // tool items printed while running
	status  events.RunStatus
	started bool
	// holdOpen: an item still being streamed (Open) is printed once its
	// final form is in, and nothing after it before (backends that stream
	// text in deltas).
	holdOpen bool
}

func newPrinter(w io.Writer, jsonl bool) *printer {
	return &printer{w: w, jsonl: jsonl, running: map[*events.Item]bool{}}
}

func (p *printer) update(tl *events.Timeline) {
	items := tl.Items()
	for it := range p.running {
		if it.Tool.Status != events.ToolRunning {
			delete(p.running, it)
			p.item(it)
		}
	}
	for ; p.next < len(items); p.next++ {
		it := items[p.next]
		if p.holdOpen && it.Open {
			break
		}
		if it.Kind == events.ItemTool && it.Tool.Status == events.ToolRunning {
			p.running[it] = true
		}
		p.item(it)
	}
	if st := tl.Status(); st != p.status || !p.started {
		p.started = true
		p.status = st
		if p.jsonl {
			p.json(transcript.StateRecord(tl))
		}
	}
}

func (p *printer) json(r transcript.Record) {
	b, _ := json.Marshal(r)
	p.w.Write(append(b, '\n'))
}

func (p *printer) item(it *events.Item) {
	if p.jsonl {
		p.json(transcript.ItemRecord(it))
		return
	}
	writeItemText(p.w, it)
}

// writeItemText is the readable, sanitized text form of one item.
func writeItemText(w io.Writer, it *events.Item) {
	switch it.Kind {
	case events.ItemUser:
		fmt.Fprintf(w, "▌ You\n%s\n\n", indent(sanitize.Text(it.Text), "  "))
	case events.ItemAssistant:
		text := strings.TrimSpace(sanitize.Text(it.Text))
		if text == "" {
			// A turn of tool calls only: its tool lines follow.
			text = callsText(it.ToolCalls)
		}
		fmt.Fprintf(w, "◆ Assistant")
		if u := it.Usage; u != nil {
			fmt.Fprintf(w, "  (%d in, %d cached, %d out)", u.InputTokens, u.CachedTokens, u.OutputTokens)
		}
		fmt.Fprintf(w, "\n%s\n\n", indent(text, "  "))
	case events.ItemTool:
		t := it.Tool
		icon := map[events.ToolStatus]string{events.ToolRunning: "…", events.ToolOK: "✓", events.ToolError: "✗",
			events.ToolCancelled: "⊘", events.ToolUnknown: "?"}[t.Status]
		fmt.Fprintf(w, "%s %s", icon, sanitize.Line(t.Name))
		if k := t.KeyArg(); k != "" {
			fmt.Fprintf(w, " %s", clip(sanitize.Line(k), 100))
		}
		fmt.Fprintf(w, "  [%s", t.Status)
		if r := t.Result; r != nil && r.Command != nil && r.Command.ExitCode != nil {
			fmt.Fprintf(w, ", exit %d", *r.Command.ExitCode)
		}
		fmt.Fprintln(w, "]")
		if r := t.Result; r != nil {
			out := r.Text
			if r.IsError && r.ErrorText != "" {
				out = r.ErrorText
			}
			fmt.Fprintln(w, indent(headTail(sanitize.Text(headTailRaw(out, 6, 3)), 6, 3), "  │ "))
		}
		fmt.Fprintln(w)
	case events.ItemNotice:
		fmt.Fprintf(w, "! %s\n\n", sanitize.Line(it.Text))
	}
}

// callsText stands for the text of a reply that has none.
func callsText(calls []events.ToolCall) string {
	if len(calls) == 0 {
		return "(empty reply)"
	}
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = clip(sanitize.Line(c.Name), 100)
	}
	return "(calls " + strings.Join(names, ", ") + ")"
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + clip(l, 400)
	}
	return strings.Join(lines, "\n")
}

// headTailRaw cuts a large output down to about its first head and last
// tail lines (each at most 64 KB) before it is sanitized and split, with a
// marker that headTail keeps: the middle of a 30 MB output is never read.
func headTailRaw(s string, head, tail int) string {
	const small = 1 << 20
	if len(s) <= small {
		return s
	}
	s = strings.TrimRight(s, "\n")
	start := 0
	for i := 0; i < head && start < len(s); i++ {
		j := strings.IndexByte(s[start:], '\n')
		if j < 0 {
			return s // one huge line (or few): indent clips each line
		}
		start += j + 1
	}
	end := len(s)
	for i := 0; i < tail && end > start; i++ {
		j := strings.LastIndexByte(s[start:end], '\n')
		if j < 0 {
			return s
		}
		end = start + j
	}
	if end <= start {
		return s
	}
	hidden := strings.Count(s[start:end], "\n") + 1
	if hidden < 2 {
		return s // headTail shows it all
	}
	clipLine := func(l string) string {
		if len(l) > 64<<10 {
			return strings.ToValidUTF8(l[:64<<10], "")
		}
		return l
	}
	var b strings.Builder
	for _, l := range strings.Split(s[:start-1], "\n") {
		b.WriteString(clipLine(l) + "\n")
	}
	fmt.Fprintf(&b, "… %d lines hidden …", hidden)
	for _, l := range strings.Split(s[end+1:], "\n") {
		b.WriteString("\n" + clipLine(l))
	}
	return b.String()
}

// headTail keeps the first and last lines of long output.
func headTail(s string, head, tail int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= head+tail+1 {
		return strings.Join(lines, "\n")
	}
	hidden := len(lines) - head - tail
	out := append(append([]string{}, lines[:head]...), fmt.Sprintf("… %d lines hidden …", hidden))
	return strings.Join(append(out, lines[len(lines)-tail:]...), "\n")
}

func runExport(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "export")
	var c conn
	c.register(fs)
	format := fs.String("format", "md", "output format: md, json or jsonl (json and jsonl hold every text whole)")
	full := fs.Bool("full", false, "md: quote every tool output whole (by default long ones are cut, with a marker)")
	untilIdle := fs.Bool("until-idle", false, "wait for the current run to end before exporting")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := oneOf("format", *format, "md", "json", "jsonl"); err != nil {
		return err
	}
	if b, err := c.streamBackend(ctx, env); err != nil || b != nil {
		if err != nil {
			return err
		}
		return exportLive(ctx, env, b, pos[0], *format, *full, *untilIdle)
	}
	cl, task, err := c.task(ctx, env, pos[0])
	if err != nil {
		return err
	}
	tl, err := collect(ctx, env, cl, task, collectOpts{untilIdle: *untilIdle, quiet: true, bounded: env.OwnsProcess})
	if err != nil {
		return err
	}
	return writeExport(env.Stdout, tl, *format, task.Name, *full)
}

// writeExport writes a transcript; json and jsonl are always whole, md cuts
// long tool outputs unless full.
func writeExport(w io.Writer, tl *events.Timeline, format, title string, full bool) error {
	switch format {
	case "json":
		return transcript.WriteJSON(w, tl)
	case "jsonl":
		return transcript.WriteJSONL(w, tl)
	}
	if full {
		return transcript.WriteMarkdownFull(w, tl, title)
	}
	return transcript.WriteMarkdown(w, tl, title)
}

// collectOpts says when collect stops.
type collectOpts struct {
	// untilIdle waits for the run to end, not only for the replay.
	untilIdle bool
	// follow keeps going until interrupted unless untilIdle (record).
	follow bool
	quiet  bool
	onNew  func(events.Frame) error
	// settle and quick replace the quiet windows (tests); zero: settle
	// and settleQuick.
	settle, quick time.Duration
	// bounded keeps the process's memory near what the stream brought
	// (see memlimit): export holds the whole timeline. It sets a
	// process-wide limit: only for a command that owns the process.
	bounded bool
}

// collect follows the task stream until the replay is in, with untilIdle
// until the run has ended too, or with follow until ctx ends. The replay is
// in when the stream stayed quiet while connected, for settle, or for
// settleQuick when the evidence is strong (see settleQuick), or when,
// after a clean close, a whole replay brought nothing new.
func collect(ctx context.Context, env Env, cl *client.Client, task events.Task, o collectOpts) (*events.Timeline, error) {
	long, quick := cmp.Or(o.settle, settle), cmp.Or(o.quick, settleQuick)
	tl := events.NewTimeline()
	tl.SetTask(task)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	prog := &client.Progress{}
	pool, errc := watch(sctx, cl, task.ID, prog)
	defer func() { stop(); pool.Wait() }()
	ch := pool.Results()
	// The daemon's view of the task, asked while the stream starts: the
	// task resolved before may be a moment older than the connection.
	statusc := make(chan string, 1)
	go func() {
		if t, err := cl.Task(sctx, task.ID); err == nil {
			statusc <- t.Status
		}
	}()
	daemonQuiet := false // the daemon says idle or stopped
	f := &follower{env: env, tl: tl, quiet: o.quiet, onNew: o.onNew}
	waits := !o.follow || o.untilIdle // for the replay to be in
	// Measured on the 10k-event long session (48 MB): peak RSS 74 MB
	// without the bound, 66 MB with it, for the same processor time.
	var mem *memlimit.Bound
	if o.bounded {
		mem = memlimit.Start(prog.Bytes, memlimit.Current())
		defer mem.Relax()
	}
	// done says whether collect is done once the replay is in.
	done := func() bool {
		if !o.untilIdle {
			if tl.Status() == events.RunGenerating {
				fmt.Fprintln(env.Stderr, "perch: the task is still generating; this is the transcript so far (use --until-idle to wait for the run to end)")
			}
			return true
		}
		if tl.Status() != events.RunGenerating {
			// The stream may lag behind a run that just started: the
			// daemon's own view decides. If it can't be asked right now,
			// keep following.
			fresh, err := cl.Task(ctx, task.ID)
			if err == nil && fresh.Status != events.StatusGenerating {
				return true
			}
			// The evidence for a quick end is gone (or unknown): back to
			// the long window, which also paces these questions.
			daemonQuiet = false
		}
		return false
	}
	// window is the quiet time the evidence asks for now.
	window := func() time.Duration {
		if daemonQuiet && f.runEnd && tl.Status() != events.RunGenerating {
			return quick
		}
		return long
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	confirming := false // the quick window passed once; a second look is due
	for {
		select {
		case t, ok := <-ch:
			if !ok {
				ch = nil // the stream ended: its error follows on errc
				continue
			}
			m := t.Wait()
			f.handle(m)
			if f.err != nil {
				return tl, f.err
			}
			if mem != nil {
				mem.Update()
			}
			confirming = false
			// Quiet time only counts while connected: a reconnect backoff
			// is not the end of the replay.
			if m.state != nil && m.state.Phase != client.PhaseLive {
				timer.Stop()
				if waits && m.state.Phase == client.PhaseReconnecting && f.replayed && done() {
					return tl, nil
				}
			} else if f.lastLive && waits {
				timer.Reset(window())
			}
		case st := <-statusc:
			daemonQuiet = st == events.StatusIdle || st == events.StatusStopped
			if f.lastLive && waits && !confirming {
				timer.Reset(window())
			}
		case <-timer.C:
			if w := window(); w < long {
				// Strong evidence: quiet means no byte for w, no event
				// half read or on its way, twice.
				if !prog.Settled(w) || pool.Pending() > 0 {
					confirming = false
					timer.Reset(w)
					continue
				}
				if !confirming {
					confirming = true
					timer.Reset(settleConfirm)
					continue
				}
				confirming = false
				if !done() {
					timer.Reset(window())
					continue
				}
				return tl, nil
			}
			if prog.Busy(long) || !done() {
				timer.Reset(long)
				continue
			}
			return tl, nil
		case err := <-errc:
			if ctx.Err() != nil {
				return tl, ctx.Err()
			}
			if err == nil {
				err = fmt.Errorf("the event stream of task %s ended", shortID(task.ID))
			}
			return tl, err
		}
	}
}

func runRecord(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "record")
	var c conn
	c.register(fs)
	out := fs.String("o", "", "file to write the raw stream to ('-' for stdout)")
	untilIdle := fs.Bool("until-idle", false, "stop once the replay is in and the run has ended")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("record: -o FILE is required")
	}
	if b, err := c.streamBackend(ctx, env); err != nil || b != nil {
		if err != nil {
			return err
		}
		return recordRefusal(b, pos[0])
	}
	cl, task, err := c.task(ctx, env, pos[0])
	if err != nil {
		return err
	}
	var w io.Writer = env.Stdout
	if *out != "-" {
		file, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		defer file.Close()
		w = file
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	n := 0
	_, err = collect(ctx, env, cl, task, collectOpts{untilIdle: *untilIdle, follow: true, onNew: func(f events.Frame) error {
		n++
		if err := writeFrame(bw, f); err != nil {
			return fmt.Errorf("record %s: %w", *out, err)
		}
		return bw.Flush()
	}})
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		err = nil // Ctrl-C is how a recording ends
	}
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("record %s: %w", *out, ferr)
	}
	if err == nil {
		fmt.Fprintf(env.Stderr, "perch: recorded %d events\n", n)
	}
	return err
}

// writeFrame writes a frame in SSE form; data lines are split on newlines
// so any payload survives.
func writeFrame(w io.Writer, f events.Frame) error {
	if _, err := fmt.Fprintf(w, "event: %s\n", f.Name); err != nil {
		return err
	}
	for _, line := range strings.Split(string(f.Data), "\n") {
		if _, err := fmt.Fprintf(w, "data: %s\n", line); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n")
	return err
}
