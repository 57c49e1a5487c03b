package registry

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/ingest"
)

// OpenFile reads the transcript file at path (from names its kind; ""
// detects it) and returns it as a backend with one session, for the views
// that show live sessions (perch replay in the terminal UI). The file is
// read here, once, so that one that cannot be read fails before any view
// opens; errors a user can fix with a flag are *ingest.UsageError.
//
// The backend can do nothing but show the session: its Capabilities are
// Recording alone (no Send, Cancel or Create, which answer
// backend.ErrUnsupported). Its Name is the file's kind, its URL the path.
func (r *Registry) OpenFile(ctx context.Context, path, from string, opts ingest.Options) (backend.Backend, error) {
	s, k, err := r.Choose(path, from, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	f := &fileBackend{path: s.Name, kind: k.Name, task: fileTask(s.Name, k.Name)}
	if err := Stream(ctx, s, k, opts, func(ev events.Event) { f.evs = append(f.evs, ev) }); err != nil {
		return nil, err
	}
	return f, nil
}

// OpenFile is Default().OpenFile.
func OpenFile(ctx context.Context, path, from string, opts ingest.Options) (backend.Backend, error) {
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

// fileBackend is a decoded transcript file as a backend.Backend (and a
// backend.SessionWatcher, whose list never changes).
type fileBackend struct {
	path string
	kind string
	task events.Task
	evs  []events.Event
}

var (
	_ backend.Backend        = (*fileBackend)(nil)
	_ backend.SessionWatcher = (*fileBackend)(nil)
)

func (f *fileBackend) Name() string { return f.kind }
func (f *fileBackend) URL() string  { return f.path }

func (f *fileBackend) Capabilities() backend.Capabilities {
	return backend.Capabilities{Recording: true}
}

func (f *fileBackend) Sessions(context.Context) ([]events.Task, error) {
	return []events.Task{f.task}, nil
}

func (f *fileBackend) Session(_ context.Context, idOrPrefix string) (events.Task, error) {
	if m := backend.Match([]events.Task{f.task}, idOrPrefix); len(m) == 1 {
		return m[0], nil
	}
	return events.Task{}, &backend.NoTaskError{Query: idOrPrefix}
}

// Follow hands over the file's events in one update, which says that
// everything is in (Synced) and nothing more is on its way, then waits
// for ctx: a file does not change.
func (f *fileBackend) Follow(ctx context.Context, sessionID string, on func(backend.Update)) error {
	if sessionID != f.task.ID {
		return &backend.NoTaskError{Query: sessionID}
	}
	on(backend.Update{Events: f.evs, Synced: true, Backlog: backend.BacklogNone})
	<-ctx.Done()
	return ctx.Err()
}

// WatchSessions hands over the one session, then waits for ctx.
func (f *fileBackend) WatchSessions(ctx context.Context, on func([]events.Task)) error {
	on([]events.Task{f.task})
	<-ctx.Done()
	return ctx.Err()
}

func (f *fileBackend) readOnly() error {
	return fmt.Errorf("%s is a replay of a file, read-only: %w", f.path, backend.ErrUnsupported)
}

func (f *fileBackend) Send(context.Context, string, backend.Message) (backend.SendResult, error) {
	return backend.SendResult{}, f.readOnly()
}

func (f *fileBackend) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, f.readOnly()
}

func (f *fileBackend) Create(context.Context, backend.CreateRequest) (events.Task, error) {
	return events.Task{}, f.readOnly()
}
