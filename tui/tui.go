// Package tui is perch's terminal UI: one Bubble Tea root model with plain
// components (render functions taking a width), fed by stream goroutines that
// decode and coalesce daemon events off the Update path.
//
// Rules kept throughout the package:
//   - no IO in Update or View: every network call is a tea.Cmd, streams live
//     in goroutines next to the program;
//   - per-frame work is bounded by the viewport, never by session length;
//   - at most one stream batch per frame, and perch's own timers tick only
//     while something visible animates.
package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/spill"
)

// The UI shows one client.Backend: a live system (maria, Suna, pynchy)
// or a file (client.Capabilities.Recording). Its sessions come already
// decoded and in order: the UI never reads a system's wire, and knows of
// each system only its name and what its Capabilities say.

// uiCaps is what the UI offers on its backend: no composer without Send,
// no cancel key without Cancel, no new task without Create, no web search
// toggle without WebSearch.
type uiCaps struct {
	Send, Cancel, Create, WebSearch bool
	// Note is shown where the composer would be when Send is false.
	Note string
	// Replay: the sessions come from a file (Capabilities.Recording), so
	// the UI says replay where a live system's connection would be.
	Replay bool
	// Backend names the live system behind the UI ("suna", "pynchy"),
	// shown in the status bars; "" shows none (the home system,
	// Capabilities.Home, and files).
	Backend string
}

// capsOf derives what the UI offers from b's capabilities; its name and
// URL are only shown.
func capsOf(b client.Backend) uiCaps {
	c := b.Capabilities()
	out := uiCaps{Send: c.Send, Cancel: c.Cancel, Create: c.Create, WebSearch: c.WebSearch, Replay: c.Recording}
	switch {
	case c.Recording:
		out.Note = "replay of " + filepath.Base(b.URL()) + " (" + b.Name() + ") — read-only"
	case !c.Home:
		out.Backend = b.Name()
	}
	if !c.Send && out.Note == "" {
		out.Note = b.Name() + " at " + b.URL() + " takes no follow-ups from perch — read-only"
	}
	return out
}

// Config is how perch was started.
type Config struct {
	// Unsent receives the exit report (os.Stderr when nil): how many
	// messages perch keeps for which task and where, and any text typed
	// but never submitted.
	Unsent io.Writer
	// Outbox keeps the messages the user sends or holds; the backend
	// delivers them. Nil keeps them in memory (tests, read-only
	// backends): the exit report then prints the ones left, since nothing
	// else will.
	Outbox *Outbox

	// TaskID attaches to a task at start; "" opens the task list.
	TaskID string
	// Theme is auto (detect the terminal background), dark or light.
	// NO_COLOR in the environment wins over all of them.
	Theme string
	// Cwd is the default working directory for new tasks.
	Cwd string
	// Getenv reads the environment (os.Getenv when nil); tests inject it.
	Getenv func(string) string
	// Now is the clock (time.Now when nil); golden tests freeze it.
	Now func() time.Time
	// Clipboard is the system clipboard copies go to beside OSC 52 (the
	// native one when nil); tests inject a fake.
	Clipboard Clipboard
	// Home shortens paths under it to "~" ($HOME when empty).
	Home string
	// Model is the model asked for when creating tasks ("" = the daemon's
	// default).
	Model string

	// Keys are the user's key overrides from perch's config file: an
	// action's name (KeyActions) → the keys that trigger it instead of
	// its defaults, each checked with CheckKey. The help and the hint
	// rows show the keys in force.
	Keys map[string][]string

	// Tasks is the task list as the caller just read it (perch's probe of
	// a --url reads maria's whole list): the first frame shows it, and
	// the UI does not ask for it again at start. Nil: the UI asks.
	Tasks []events.Task

	// Board, when not nil, replaces the task list with the board of
	// every session of many sources (board.go); the backend given to Run
	// may then be nil: each session opens through its own source's.
	Board *Board

	// MarkSeen records that the user saw session up to at, in the seen
	// marks every perch of the state directory shares (the board's): a
	// reply read here is read on the board. Nil records nothing (the
	// board keeps its own marks).
	MarkSeen func(session string, at time.Time) error

	// Banner is a note shown above the composer of every session (perch
	// demo: how to reach its messages from another terminal); "" shows
	// none. It is perch's own text.
	Banner string

	// Spill opens the file where an attached session's long texts are
	// kept off the heap (spill.Open); nil keeps them in memory (tests,
	// short sessions).
	Spill func(session string) *spill.File

	// Search finds the messages of every indexed session that match a
	// query, newest first (ErrNoIndex when nothing is indexed); it runs in
	// a command. Nil: the UI offers no search across sessions.
	Search func(ctx context.Context, query string) ([]SearchHit, error)
	// OpenIndexed opens a session that neither the list nor the board
	// holds, read-only, from its file or the index's copy of it; it runs
	// in a command. Nil: only the sessions on screen open.
	OpenIndexed func(ctx context.Context, session string) (IndexedSession, error)
	// OnSessions gets every list of the server's sessions the UI
	// receives (not on the board, which has its own), from the list's
	// goroutine, never from Update: it must return quickly.
	OnSessions func([]events.Task)

	// tasks is the task list run asked for before the terminal was set
	// up (warm.go); nil asks the backend when the list is first loaded.
	tasks *tasksPrefetch
}

func (c *Config) defaults() {
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Clipboard == nil {
		c.Clipboard = systemClipboard{}
	}
	if c.Home == "" {
		c.Home = c.Getenv("HOME")
	}
	if c.Theme == "" {
		c.Theme = "auto"
	}
}

// Run shows the UI until the user quits or ctx ends. Stream goroutines are
// stopped and waited for before it returns.
//
// The colour profile is the one lipgloss detected for stdout when its
// package was initialised, from the same stdout and environment Bubble Tea
// would look at. Bubble Tea is never left to detect
// it again: that costs a second `tmux info` run inside tmux (colorprofile
// asks tmux whether it passes 24-bit colour), some 10 to 60 ms before the
// first frame. opts may still set another profile.
func Run(ctx context.Context, b client.Backend, cfg Config, opts ...tea.ProgramOption) error {
	m, err := run(ctx, b, cfg, append([]tea.ProgramOption{tea.WithColorProfile(lipgloss.Writer.Profile)}, opts...)...)
	if m != nil {
		m.markSeenAtExit()
		w := cfg.Unsent
		if w == nil {
			w = os.Stderr
		}
		m.writeExitReport(w)
	}
	return err
}

// run is Run returning the final model, for end-to-end tests.
func run(ctx context.Context, b client.Backend, cfg Config, opts ...tea.ProgramOption) (*Model, error) {
	if b == nil && cfg.Board == nil {
		return nil, errors.New("tui: nil backend")
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The list's request goes first: a goroutine started later is the one
	// an idle core picks up, and the width tables (warmUp) can wait for
	// the request's round trip.
	var hub *streamHub
	switch {
	case cfg.Board != nil:
		hub = newStreamHub(ctx, nil) // each session's source's backend (WatchTaskOn)
		if b == nil {
			b = noSession{}
		}
	case cfg.Tasks != nil:
		cfg.tasks = knownTasks(cfg.Tasks)
	default:
		cfg.tasks = prefetchTasks(ctx, b)
	}
	warmUp()
	if hub == nil {
		hub = newStreamHub(ctx, b)
		hub.onSessions = cfg.OnSessions
	}
	m := New(ctx, b, cfg, hub)
	hub.outbox = m.ob.watch
	all := append([]tea.ProgramOption{
		tea.WithContext(ctx),
		tea.WithFilter(coalesceInput),
	}, opts...)
	p := tea.NewProgram(m, all...)
	hub.start(p.Send)
	boardDone := make(chan struct{})
	go func() {
		defer close(boardDone)
		if cfg.Board != nil {
			watchBoard(ctx, cfg.Board.Live, p.Send)
		}
	}()
	final, err := p.Run()
	cancel()
	hub.wait()
	<-boardDone
	if closeReplay := m.leaveReplay(); closeReplay != nil {
		closeReplay() // the exit report then counts the outboxes shown before it
	}
	m.spill.close()
	cfg.tasks.wait()
	if errors.Is(err, tea.ErrProgramKilled) && parent.Err() != nil {
		// Killed because our context ended: that is a normal exit.
		err = nil
	}
	fm, _ := final.(*Model)
	return fm, err
}

// coalesceInput drops mouse motion (we never drag) and wheel events that
// follow each other within a frame, so a flood of wheel events from a
// trackpad never queues key presses behind it (crush model/filter.go).
func coalesceInput(m tea.Model, msg tea.Msg) tea.Msg {
	switch msg.(type) {
	case tea.MouseMotionMsg:
		return nil
	case tea.MouseWheelMsg:
		if mm, ok := m.(*Model); ok {
			now := time.Now()
			if now.Sub(mm.lastWheel) < 8*time.Millisecond {
				return nil
			}
			mm.lastWheel = now
		}
	}
	return msg
}
