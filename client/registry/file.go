package registry

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// OpenFile opens the transcript file at path (from names its kind; ""
// detects it) as a backend with one session, for the views that show live
// sessions (perch replay in the terminal UI). Errors a user can fix with a
// flag are *ingest.UsageError.
//
// The file is read here once, whole, keeping nothing, so that one that
// cannot be read fails before any view opens: an importer may refuse a
// file only at its end (a pynchy recording of several chats without
// --chat, after the first chat's events). Each Follow then reads it again
// as it hands the events over. Path "-" (standard input) is read into a
// temporary copy that Follow reads; Close removes it.
//
// The backend can do nothing but show the session: its Capabilities are
// Recording alone (no Send, Cancel or Create, which answer
// client.ErrUnsupported). Its Name is the file's kind, its URL the path.
func (r *Registry) OpenFile(ctx context.Context, path, from string, opts ingest.Options) (*FileBackend, error) {
	s, k, err := r.Choose(path, from, opts)
	if err != nil {
		return nil, err
	}
	if err := Stream(ctx, s, k, opts, func(events.Event) {}); err != nil {
		s.Close()
		return nil, err
	}
	return &FileBackend{sample: s, importer: k, opts: opts, task: fileTask(s.Name, k.Name)}, nil
}

// OpenFile is Default().OpenFile.
func OpenFile(ctx context.Context, path, from string, opts ingest.Options) (*FileBackend, error) {
	return Default().OpenFile(ctx, path, from, opts)
}

// fileTask is the one session of a file: named after the file and its
// kind, in the file's directory, idle.
func fileTask(path, kind string) events.Task {
	name := filepath.Base(path)
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return events.Task{ID: "file:" + name, Name: name + " (" + kind + ")", Cwd: filepath.Dir(abs), Status: events.StatusIdle}
}

// FileBackend is a transcript file as a client.Backend (and a
// client.SessionWatcher, whose list never changes). It holds the file's
// sample and importer, not its events: Follow reads the file.
type FileBackend struct {
	sample   *ingest.Sample
	importer ingest.Importer
	opts     ingest.Options
	task     events.Task
}

var (
	_ client.Backend        = (*FileBackend)(nil)
	_ client.SessionWatcher = (*FileBackend)(nil)
)

// Close removes the temporary copy of standard input (nothing for a
// file); no Follow may run or start afterwards.
func (f *FileBackend) Close() error { return f.sample.Close() }

func (f *FileBackend) Name() string { return f.importer.Name }
func (f *FileBackend) URL() string  { return f.sample.Name }

func (f *FileBackend) Capabilities() client.Capabilities {
	return client.Capabilities{Recording: true}
}

func (f *FileBackend) Sessions(context.Context) ([]events.Task, error) {
	return []events.Task{f.task}, nil
}

func (f *FileBackend) Session(_ context.Context, idOrPrefix string) (events.Task, error) {
	if m := client.Match([]events.Task{f.task}, idOrPrefix); len(m) == 1 {
		return m[0], nil
	}
	return events.Task{}, &client.NoTaskError{Query: idOrPrefix}
}

// A Follow hands the file's events over in chunks of at most chunkEvents
// events or about chunkBytes of text, whichever comes first, as the
// importer decodes them. The consumer may block in on (the TUI does while
// its batch is full): the importer then waits, so the events in memory are
// bounded by what the consumer holds, not by the file.
const (
	chunkEvents = 512
	chunkBytes  = 1 << 20
)

// Follow reads the file from its start and hands its events over in
// chunks; the last says that everything is in (Synced).
// Then it waits for ctx: a file does not change. Every Follow starts the
// session over, as a first follow does: it needs no Reset.
func (f *FileBackend) Follow(ctx context.Context, sessionID string, on func(client.Update)) error {
	if sessionID != f.task.ID {
		return &client.NoTaskError{Query: sessionID}
	}
	var buf []events.Event
	size := 0
	err := Stream(ctx, f.sample, f.importer, f.opts, func(ev events.Event) {
		if ctx.Err() != nil {
			return // an importer that does not check ctx runs to its end unheard
		}
		if len(buf) == chunkEvents || size >= chunkBytes {
			on(client.Update{Events: buf})
			buf, size = nil, 0
		}
		if buf == nil {
			buf = make([]events.Event, 0, chunkEvents)
		}
		buf = append(buf, ev)
		size += ev.TextBytes()
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		// The file changed since OpenFile read it; what was read is shown.
		if len(buf) > 0 {
			on(client.Update{Events: buf})
		}
		return fmt.Errorf("read %s again: %w", f.sample.Name, err)
	}
	on(client.Update{Events: buf, Synced: true})
	<-ctx.Done()
	return ctx.Err()
}

// WatchSessions hands over the one session, then waits for ctx.
func (f *FileBackend) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	on([]events.Task{f.task})
	<-ctx.Done()
	return ctx.Err()
}

func (f *FileBackend) readOnly() error {
	return fmt.Errorf("%s is a replay of a file, read-only: %w", f.sample.Name, client.ErrUnsupported)
}

func (f *FileBackend) Send(context.Context, string, client.Message) (client.SendResult, error) {
	return client.SendResult{}, f.readOnly()
}

func (f *FileBackend) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, f.readOnly()
}

func (f *FileBackend) Create(context.Context, client.CreateRequest) (events.Task, error) {
	return events.Task{}, f.readOnly()
}
