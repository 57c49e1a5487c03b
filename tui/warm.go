package tui

import (
	"context"
	"sync/atomic"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// warmUp does, on another goroutine, the one-time work the first frame
// would otherwise wait for, while perch probes the server (Prepare) or
// Bubble Tea sets up the terminal and the task list is fetched. The
// renderer measures cells with go-runewidth, whose first lookup above
// U+02FF builds its 2 MB width tables (about 8 ms of processor time on
// a quiet core, mostly page faults; 10 to 40 ms of wall time on a busy
// one); every frame has such runes (─, ▌, ●).
// The build is guarded by a sync.Once, so a frame that comes first simply
// waits for it as it would have anyway.
func warmUp() {
	go ansi.StringWidthWc("─")
}

// Prepare starts, on another goroutine, the one-time work the first frame
// needs (see warmUp), for a caller that knows the UI will be shown and
// still has to wait for something first (perch probing a server). Run
// starts it anyway; a second start finds it done or under way.
func Prepare() { warmUp() }

// tasksPrefetch is the task list asked for as soon as the UI starts, so
// that the request runs while Bubble Tea sets up the terminal (raw mode,
// screen buffers, input reader) instead of after it, or the list the
// caller already read (knownTasks): the first list the UI loads is this
// one. Later loads (refreshes) ask the backend again.
type tasksPrefetch struct {
	done  chan struct{}
	tasks []events.Task
	err   error
	taken atomic.Bool
}

// prefetchTasks starts b.Sessions on its own goroutine, bounded like any
// call of the UI; ctx ending stops it.
func prefetchTasks(ctx context.Context, b client.Backend) *tasksPrefetch {
	p := &tasksPrefetch{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		p.tasks, p.err = b.Sessions(ctx)
	}()
	return p
}

// knownTasks is a prefetch that is already complete: the list the caller
// read before the UI started (Config.Tasks).
func knownTasks(ts []events.Task) *tasksPrefetch {
	p := &tasksPrefetch{done: make(chan struct{}), tasks: ts}
	close(p.done)
	return p
}

// ready is take without the wait: ok only when the list is in and was not
// taken yet.
func (p *tasksPrefetch) ready() (tasks []events.Task, err error, ok bool) {
	if p == nil {
		return nil, nil, false
	}
	select {
	case <-p.done:
	default:
		return nil, nil, false
	}
	if !p.taken.CompareAndSwap(false, true) {
		return nil, nil, false
	}
	return p.tasks, p.err, true
}

// take returns the prefetched list, waiting for it, the first time it is
// called; afterwards (and on a nil prefetch) ok is false and the caller
// asks the backend itself.
func (p *tasksPrefetch) take(ctx context.Context) (tasks []events.Task, err error, ok bool) {
	if p == nil || !p.taken.CompareAndSwap(false, true) {
		return nil, nil, false
	}
	select {
	case <-p.done:
		return p.tasks, p.err, true
	case <-ctx.Done():
		return nil, ctx.Err(), true
	}
}

// wait returns once the prefetch's goroutine has ended.
func (p *tasksPrefetch) wait() {
	if p != nil {
		<-p.done
	}
}
