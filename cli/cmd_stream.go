package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/transcript"
)

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
	// past: the history is being replayed (tail before the backend's
	// first Synced). A tool still running there is printed once it
	// finished, or once the history is in, and nothing after it before:
	// a past tool is one line, not [running] then [ok].
	past, holding bool
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
		if p.holding = p.past && it.Kind == events.ItemTool && it.Tool.Status == events.ToolRunning; p.holding {
			break
		}
		if it.Kind == events.ItemTool && it.Tool.Status == events.ToolRunning {
			p.running[it] = true
		}
		p.item(it)
	}
	if st := tl.Status(); st != p.status || !p.started {
		ended := p.started && p.status == events.RunGenerating
		p.started = true
		p.status = st
		switch {
		case p.jsonl:
			p.json(transcript.StateRecord(tl))
		case ended:
			// Scripts and people reading tail see where a run stops.
			fmt.Fprintf(p.w, "── run ended (%s) ──\n\n", st)
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
		fmt.Fprintf(w, "▌ You\n%s\n\n", indent(sanitize.Text(it.Body()), "  "))
	case events.ItemAssistant:
		text := strings.TrimSpace(sanitize.Text(it.Body()))
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
		// The mark and the word are the outcome every view shows
		// (events.ToolOutcome): a command that exited non-zero failed.
		cr := t.Command()
		o := events.ToolOutcome(t.Status, cr)
		fmt.Fprintf(w, "%s %s", outcomeMark(o), sanitize.Line(t.Name))
		if k := t.KeyArg(); k != "" {
			fmt.Fprintf(w, " %s", clip(sanitize.Line(k), 100))
		}
		fmt.Fprintf(w, "  [%s", o)
		if cr != nil && cr.ExitCode != nil {
			fmt.Fprintf(w, ", exit %d", *cr.ExitCode)
		}
		fmt.Fprintln(w, "]")
		if r := t.Output(); r != nil {
			out := r.Text
			if r.IsError && r.ErrorText != "" {
				out = r.ErrorText
			}
			fmt.Fprintln(w, indent(headTail(sanitize.Text(headTailRaw(out, 6, 3)), 6, 3), "  │ "))
		}
		fmt.Fprintln(w)
	case events.ItemNotice:
		fmt.Fprintf(w, "%s %s\n\n", styles.NoticeIcon(it.Level), sanitize.Line(it.Text))
	}
}

// outcomeMark is the mark tail and replay print before a tool: the one
// every view shows for the outcome (the word after it says it too).
func outcomeMark(o events.Outcome) string { return styles.OutcomeIcon(o) }

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

// writeExport writes a transcript; json and jsonl are always whole, md
// cuts long tool outputs unless md.Full and shows reasoning unless
// md.NoThinking.
func writeExport(w io.Writer, tl *events.Timeline, format, title string, md transcript.MarkdownOptions) error {
	switch format {
	case "json":
		return transcript.WriteJSON(w, tl)
	case "jsonl":
		return transcript.WriteJSONL(w, tl)
	}
	return transcript.WriteMarkdownWith(w, tl, title, md)
}

// noThinkingFlag registers -no-thinking, the md exports' way to leave the
// model's reasoning out.
func noThinkingFlag(fs *flagSet) *bool {
	return fs.Bool("no-thinking", false, "md: leave out the model's reasoning (shown by default, quoted before each reply)")
}

// runRecord is perch record: maria's raw task stream, each frame once
// (what a reconnect replays is not written again), in the SSE form perch
// replay reads back.
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
	b, err := c.openStream(ctx, env)
	if err != nil {
		return err
	}
	if _, ok := b.(client.OptionFollower); !ok {
		return recordRefusal(b, pos[0])
	}
	task, err := b.Session(ctx, pos[0])
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
	r := &recorder{write: func(f events.Frame) error {
		if err := writeFrame(bw, f); err != nil {
			return fmt.Errorf("record %s: %w", *out, err)
		}
		return bw.Flush()
	}}
	_, err = followLive(ctx, env, b, task, liveOpts{untilIdle: *untilIdle, follow: true, frames: true, onUpdate: r.step})
	stopped := errors.Is(err, context.Canceled) && ctx.Err() != nil
	if stopped {
		// Ctrl-C is how a recording without --until-idle ends: what was
		// recorded is kept, and Main reports the interrupt (exit 130).
		err = nil
	}
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("record %s: %w", *out, ferr)
	}
	if err == nil {
		fmt.Fprintf(env.Stderr, "perch: recorded %d events\n", r.n)
	}
	if _, sig := interruption(ctx); stopped && sig && err == nil {
		return ctx.Err()
	}
	return err
}

// recorder writes each frame of a task stream that brought something new.
// maria's decoder drops what a reconnect's replay repeats, so a frame whose
// event comes out of it is new; but a queue snapshot, a state replayed with
// the log, always comes out: it is written when it follows something new
// on its connection, and held until then.
type recorder struct {
	write   func(events.Frame) error
	n       int
	seenAny bool           // some event was new, on any connection
	connNew bool           // this connection brought something new
	held    []events.Frame // snapshots of this connection waiting for a verdict
}

func (r *recorder) step(s liveStep) error {
	if replacedStep(s.u) {
		// Another task has the id now: its frames would make one file of
		// two tasks.
		return fmt.Errorf("the task was replaced by a new one under the same id (the daemon restarted); the recording stops at the old task's %d frames", r.n)
	}
	if st := s.u.State; st != nil {
		switch st.Phase {
		case sse.PhaseLive:
			// Each connection replays the log from the start.
			r.connNew, r.held = !r.seenAny, nil
		case sse.PhaseReconnecting:
			r.held = nil
		}
		return nil
	}
	if s.frame == nil {
		return nil // Synced
	}
	var ev *events.Event
	if len(s.u.Events) > 0 {
		ev = &s.u.Events[0]
	}
	switch {
	case ev != nil && ev.Kind == events.KindQueueSnapshot:
		if r.connNew {
			return r.record(*s.frame)
		}
		r.held = append(r.held, *s.frame)
	case ev != nil && (ev.ID != "" || s.changed):
		r.seenAny, r.connNew = true, true
		for _, h := range r.held {
			if err := r.record(h); err != nil {
				return err
			}
		}
		r.held = nil
		return r.record(*s.frame)
	default:
		r.held = nil // the replay of what was seen before
	}
	return nil
}

func (r *recorder) record(f events.Frame) error {
	r.n++
	return r.write(f)
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
