package tui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tui/chrome"
)

// viewMode is the screen being shown.
type viewMode uint8

const (
	modeList viewMode = iota // the task list
	modeTask                 // attached to one task
)

// focusArea is where keys go in the task view.
type focusArea uint8

const (
	focusComposer focusArea = iota
	focusTranscript
	focusHeld // the held panel above the composer
)

// overlay is a modal layer that takes keys before the view underneath.
type overlay uint8

const (
	ovNone overlay = iota
	ovHelp
	ovConfirmCancel
	ovSearch  // typing a transcript search
	ovFilter  // typing a task-list filter
	ovNewTask // the new-task form
	ovFind    // the search across every indexed session (findall.go)
)

// Model is perch's single Bubble Tea model. Components are plain structs
// with methods; routing lives in per-domain files (keys.go, tasklist.go,
// session.go, composer.go, queue.go, search.go …).
type Model struct {
	ctx context.Context
	b   client.Backend
	cfg Config
	ctl streamControl

	theme      themeKind
	themeFixed bool // set by flag or NO_COLOR: ignore background replies
	ch         chrome.Chrome
	rend       itemRenderer
	// catchingUp: the task stream is ahead of the UI (setCatchingUp).
	catchingUp bool

	w, h    int
	now     time.Time
	mode    viewMode
	overlay overlay
	helpOff int // first row of the `?` screen shown (help.go)
	// editorFile is the draft's file the external editor has (editor.go).
	editorFile string

	after     func(time.Duration, tea.Msg) tea.Cmd // timers; see realAfter
	warm      warmState                            // neighbour pages laid out ahead (warmpage.go)
	spin      spinState
	flash     flash
	lastWheel time.Time // input coalescing, see coalesceInput
	quitting  bool

	// The task list (kept live by client.WatchSessions).
	list taskList
	// board replaces the task list with more than one source (board.go).
	board      *boardState
	daemonConn connState
	daemonSeen bool // a state was reported at least once

	// The attached task.
	gen   uint64 // attach generation: stale async results are dropped
	task  events.Task
	tl    reducer
	spill *spillFile // the attached session's spill file (cfg.Spill)
	// hotItems is how many of the last items stay in memory when the
	// timeline freezes the settled ones before them (hotItemsDefault;
	// tests freeze everything).
	hotItems  int
	conn      connState
	connSeen  bool
	streamErr error
	tr        transcript
	focus     focusArea
	comp      composer
	caps      uiCaps // what the backend can do; the UI offers nothing else
	keys      keyMap
	drafts    map[string]string // unsent composer text per task id
	ob        *outboxes         // held messages and delivery (all IO in commands)
	held      held              // the attached task's outbox, as shown
	queueOpen bool
	todosOpen bool
	expanded  map[*events.Item]bool
	// hideThinking leaves the reasoning out of every turn (R).
	hideThinking bool
	copied       copyState // the last code block copied (copy.go)
	search       searchState
	// searchGen numbers committed searches: a pass that ends after a newer
	// search began (or the timeline restarted) is dropped.
	searchGen uint64
	canceling bool // a Cancel call is in flight
	newTask   newTaskForm
	// find is the search across sessions; replay the session it opened
	// from the index (nil when none); landing the hit to select once that
	// session's transcript is in (findall.go).
	find    findState
	replay  *replayed
	landing landing

	// Per-frame scratch and caches; see frame.go.
	src                                       *itemSource
	rows                                      []string
	owners                                    []int
	memoRule, memoComp, memoStatus, memoHints memo
	// transcript geometry of the last frame, for mouse hits
	trY, trH int
}

// New builds the model. ctx bounds every network call the UI makes; ctl
// receives stream wishes (nil in tests that do not care).
func New(ctx context.Context, b client.Backend, cfg Config, ctl streamControl) *Model {
	cfg.defaults()
	if ctl == nil {
		ctl = nopControl{}
	}
	m := &Model{
		ctx:      ctx,
		b:        b,
		cfg:      cfg,
		ctl:      ctl,
		now:      cfg.Now(),
		keys:     newKeyMap().with(cfg.Keys),
		after:    realAfter,
		drafts:   make(map[string]string),
		expanded: make(map[*events.Item]bool),
		tr:       newTranscript(),
		tl:       newReducer(),
	}
	m.spill = &spillFile{open: cfg.Spill}
	m.hotItems = hotItemsDefault
	m.caps = capsOf(b)
	m.ob = newOutboxes(cfg.Outbox, b)
	m.keys.limitTo(m.caps)
	m.theme, m.themeFixed = themeFromConfig(cfg.Theme, cfg.Getenv, true)
	m.comp = newComposer(m.theme, m.keys.Newline)
	m.newTask = newNewTaskForm(m.theme, m.keys.Newline)
	m.src = &itemSource{m: m}
	m.applyTheme()
	if cfg.TaskID != "" {
		m.mode = modeTask
	}
	if cfg.Board != nil {
		m.board = newBoardState(cfg.Board)
	}
	return m
}

type nopControl struct{}

func (nopControl) WatchTask(uint64, string) {}

// applyTheme rebuilds everything that depends on the palette; caches keyed
// on the old palette go with it.
func (m *Model) applyTheme() {
	m.ch = newChrome(m.theme)
	m.rend = newItemRenderer(m.theme, m.ch)
	m.rend.CatchingUp(m.catchingUp)
	m.memoRule, m.memoComp, m.memoStatus, m.memoHints = memo{}, memo{}, memo{}, memo{}
	m.comp.setTheme(m.theme)
	m.newTask.setTheme(m.theme)
}

// Init loads the task list, asks the terminal for its background (unless the
// theme is fixed) and attaches when started on a task. A list that is
// already in (Config.Tasks, or a prefetch that answered while Bubble Tea set
// up the terminal) is taken at once, so that the first frame at the
// terminal's size shows it; Init runs just before the first View.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if m.board != nil {
		cmds = append(cmds, boardCmd)
	} else if ts, err, ok := m.cfg.tasks.ready(); ok {
		m.handleTasksLoaded(tasksLoadedMsg{tasks: ts, err: err})
		cmds = append(cmds, m.heldCountsCmd())
	} else {
		cmds = append(cmds, m.loadTasksCmd())
	}
	if !m.themeFixed {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.cfg.TaskID != "" {
		cmds = append(cmds, m.attach(events.Task{ID: m.cfg.TaskID}))
	}
	return tea.Batch(cmds...)
}

// Update routes a message to its domain handler. Each handler returns the
// commands it needs; animation ticks are (re)armed at the end, only when
// something visible animates.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.now = m.cfg.Now()
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.BackgroundColorMsg:
		if !m.themeFixed {
			t, _ := themeFromConfig("auto", m.cfg.Getenv, msg.IsDark())
			if t != m.theme {
				m.theme = t
				m.applyTheme()
			}
		}
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	case boardUpdatedMsg:
		cmd = m.refreshBoard()
	case tea.FocusMsg:
		cmd = m.handleFocus(true)
	case tea.BlurMsg:
		cmd = m.handleFocus(false)
	case tea.PasteMsg:
		cmd = m.handlePaste(msg)
	case tea.MouseWheelMsg:
		m.handleWheel(msg)
	case tea.MouseClickMsg:
		m.handleClick(msg)
	case streamBatchMsg:
		cmd = m.handleStream(msg)
	case tasksLoadedMsg:
		m.handleTasksLoaded(msg)
		cmd = tea.Batch(m.heldCountsCmd(), m.loadStraysCmd())
	case straysMsg:
		cmd = m.handleStrays(msg)
	case strayDoneMsg:
		cmd = m.handleStrayDone(msg)
	case heldCountsMsg:
		m.list.held, m.list.gone = msg.held, msg.gone
	case taskLoadedMsg:
		m.handleTaskLoaded(msg)
	case searchDoneMsg:
		m.handleSearchDone(msg)
	case findDoneMsg:
		m.handleFindDone(msg)
	case indexedOpenMsg:
		cmd = m.handleIndexedOpen(msg)
	case outboxMsg:
		cmd = m.handleOutbox(msg)
	case outboxChangedMsg:
		if msg.gen == m.gen && m.mode == modeTask && msg.taskID == m.held.taskID {
			cmd = m.loadHeldCmd(msg.taskID)
		}
	case heldSettledMsg:
		cmd = m.handleHeldSettled(msg)
	case createDoneMsg:
		cmd = m.handleCreateDone(msg)
	case cancelDoneMsg:
		cmd = m.handleCancelDone(msg)
	case editorReadyMsg:
		cmd = m.handleEditorReady(msg)
	case editorDoneMsg:
		cmd = m.handleEditorDone(msg)
	case tickMsg:
		m.handleTick(msg)
	case warmMsg:
		cmd = m.handleWarm(msg)
	case copyDoneMsg:
		m.copyDone(msg)
	case flashExpiredMsg:
		if msg.seq == m.flash.seq {
			m.flash = flash{seq: m.flash.seq}
		}
	default:
		// Cursor blink and other component messages go to the focused input.
		cmd = m.forwardToInput(msg)
	}
	if m.quitting {
		return m, tea.Quit
	}
	return m, tea.Batch(cmd, m.deliveryTriggers(), m.armTick(), m.warmCmd())
}

// resize only records the size: items re-render lazily at the new width when
// (and if) they become visible.
func (m *Model) resize(w, h int) {
	m.w, m.h = max(w, 0), max(h, 0)
	m.comp.setSize(m.w, m.composerMaxHeight())
	m.newTask.setWidth(m.w)
}

// View draws the current screen. It is called after every Update, so it
// only assembles cached pieces: the transcript renders just its visible
// items, each cached by the renderer.
func (m *Model) View() tea.View {
	var v tea.View
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = m.boardTitle(m.title())
	v.ReportFocus = m.board != nil
	if m.w <= 0 || m.h <= 0 {
		return v
	}
	var lines []string
	switch {
	case m.mode == modeList && m.overlay == ovHelp:
		lines = m.listHelpView()
	case m.mode == modeList && m.overlay == ovFind:
		lines, v.Cursor = m.findView()
	case m.mode == modeList && m.board != nil:
		lines, v.Cursor = m.boardView()
	case m.mode == modeList:
		lines, v.Cursor = m.listView()
	default:
		lines, v.Cursor = m.taskView()
	}
	v.Content = strings.Join(lines, "\n")
	return v
}

func (m *Model) title() string {
	if m.mode == modeTask {
		return "perch · " + oneLine(orString(m.task.Name, shortID(m.task.ID)))
	}
	return "perch"
}

// shortID is the first block of a UUID, enough to tell tasks apart.
func shortID(id string) string { return chrome.ShortID(id) }

// callTimeout bounds one request/response call (not streams).
const callTimeout = 30 * time.Second

func (m *Model) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(m.ctx, callTimeout)
}
