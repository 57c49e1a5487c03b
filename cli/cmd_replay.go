package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/perch-tui/perch/backend/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/ingest"
	"github.com/perch-tui/perch/sse"
)

// runReplay opens a transcript file of any known system: in the terminal
// UI (read-only) when stdout is a terminal and no --format is asked for,
// else printed like tail or export.
func runReplay(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "replay")
	format := fs.String("format", "text", "output when printing: text (as tail prints it), md, json or jsonl")
	from := fs.String("from", "", "the file's kind (detected when absent): "+kindNames())
	chat := fs.String("chat", "", "pynchy: the chat (jid) to open when the file holds several")
	session := fs.String("session", "", "attocode: the session id to open (default: the newest)")
	full := fs.Bool("full", false, "md: quote every tool output whole")
	theme := fs.String("theme", "auto", "colour theme of the terminal UI: auto, dark or light")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := oneOf("format", *format, "text", "md", "json", "jsonl"); err != nil {
		return err
	}
	if err := oneOf("theme", *theme, "auto", "dark", "light"); err != nil {
		return err
	}
	formatSet := false
	fs.Visit(func(f *flag.Flag) { formatSet = formatSet || f.Name == "format" })
	path := pos[0]
	opts := ingest.Options{Chat: *chat, Session: *session}
	toUI := env.IsTerminal && !formatSet
	if toUI {
		prepareUI()
	}
	s, k, err := registry.Choose(path, *from)
	if err != nil {
		return importErr(err)
	}
	if toUI {
		b := &fileBackend{sample: s, kind: k, opts: opts, task: fileTask(path, k.Name)}
		// Read the file once before the UI starts, so that a file that
		// cannot be read fails here with a clear line (exit 1 or 2), not
		// inside the UI.
		if err := b.load(ctx); err != nil {
			return importErr(err)
		}
		cfg := uiConfig(env, *theme)
		cfg.TaskID = b.task.ID
		return env.runReadOnly(ctx, b, cfg)
	}
	tl := events.NewTimeline()
	if err := registry.Stream(ctx, s, k, opts, func(ev events.Event) { tl.Apply(ev) }); err != nil {
		return importErr(err)
	}
	out := bufio.NewWriterSize(env.Stdout, 1<<20)
	if *format == "text" {
		newPrinter(out, false).update(tl)
		return out.Flush()
	}
	title := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if err := writeExport(out, tl, *format, title, *full); err != nil {
		return err
	}
	return out.Flush()
}

// importErr turns an importer's error into what the command returns: a
// usage error is perch's (exit 2).
func importErr(err error) error {
	var ue *ingest.UsageError
	if errors.As(err, &ue) {
		return usageError{ue.Msg}
	}
	return err
}

func fileTask(path, kind string) events.Task {
	name := filepath.Base(path)
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return events.Task{ID: "file:" + name, Name: name + " (" + kind + ")", Cwd: filepath.Dir(abs), Status: events.StatusIdle}
}

// fileBackend shows one transcript file as a read-only task: the task list
// holds it alone, its stream is the file's events, and nothing can be sent,
// cancelled or created.
type fileBackend struct {
	sample *ingest.Sample
	kind   ingest.Importer
	opts   ingest.Options
	task   events.Task
	evs    []events.Event
}

func (b *fileBackend) load(ctx context.Context) error {
	var evs []events.Event
	err := registry.Stream(ctx, b.sample, b.kind, b.opts, func(ev events.Event) { evs = append(evs, ev) })
	b.evs = evs
	return err
}

// Note is shown where the composer would be.
func (b *fileBackend) Note() string {
	return fmt.Sprintf("replay of %s — read-only", b.task.Name)
}

func (b *fileBackend) Tasks(context.Context) ([]events.Task, error) {
	return []events.Task{b.task}, nil
}

func (b *fileBackend) Task(_ context.Context, id string) (events.Task, error) {
	if id != b.task.ID {
		return events.Task{}, fmt.Errorf("no task %q in this replay", id)
	}
	return b.task, nil
}

// StreamTaskEvents hands the UI the file's events, then stays "live" until
// the UI lets go: a file does not change.
func (b *fileBackend) StreamTaskEvents(ctx context.Context, id string, onEvent func(events.Event), onState func(sse.ConnState)) error {
	if id != b.task.ID {
		return fmt.Errorf("no task %q in this replay", id)
	}
	onState(sse.ConnState{Phase: sse.PhaseLive, Since: time.Now()})
	for _, ev := range b.evs {
		onEvent(ev)
	}
	<-ctx.Done()
	return nil
}

// StreamDaemon has nothing to say about a file; the task list comes from
// Tasks.
func (b *fileBackend) StreamDaemon(ctx context.Context, _ func(events.Frame), onState func(sse.ConnState)) error {
	onState(sse.ConnState{Phase: sse.PhaseLive, Since: time.Now()})
	<-ctx.Done()
	return nil
}
