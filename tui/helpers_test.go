package tui

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
)

// fakeBackend is a client.Backend that records calls and answers from
// its fields: maria's whole set of capabilities unless caps is set. Its
// streams block until ctx ends unless a stream func is set.
type fakeBackend struct {
	mu sync.Mutex

	name string               // client.Maria when ""
	caps *client.Capabilities // maria's when nil

	tasks   []events.Task
	task    events.Task
	taskErr error

	sendRes client.SendResult
	sendErr error
	// onSend, when set, answers sends instead of sendRes and sendErr
	// (called with the fake's lock held).
	onSend    func(client.Message) (client.SendResult, error)
	sends     []string
	sendWebs  []bool
	sendCalls int

	cancelPending []events.QueuedMessage
	cancelErr     error
	cancels       int

	createRes events.Task
	createErr error
	creates   []client.CreateRequest

	// follow plays a session's updates (Follow).
	follow func(ctx context.Context, id string, on func(client.Update)) error
	// watchTasks plays the session list and its connection's states
	// (WatchSessionsState, as maria's daemon stream).
	watchTasks func(ctx context.Context, onTasks func([]events.Task), onState func(connState)) error
}

var (
	_ client.Backend             = (*fakeBackend)(nil)
	_ client.SessionStateWatcher = (*fakeBackend)(nil)
	_ outbox.Receiver            = (*fakeBackend)(nil)
)

func (f *fakeBackend) Name() string {
	if f.name == "" {
		return client.Maria
	}
	return f.name
}

func (f *fakeBackend) URL() string { return "http://127.0.0.1:8090/v1" }

func (f *fakeBackend) Capabilities() client.Capabilities {
	if f.caps != nil {
		return *f.caps
	}
	return client.Capabilities{Create: true, Send: true, Cancel: true, ServerQueue: true, WebSearch: true, Home: true, StreamStaysOpen: true}
}

func (f *fakeBackend) Sessions(ctx context.Context) ([]events.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]events.Task(nil), f.tasks...), nil
}

func (f *fakeBackend) Session(ctx context.Context, id string) (events.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.task
	if t.ID == "" {
		t.ID = id
	}
	return t, f.taskErr
}

func (f *fakeBackend) Create(ctx context.Context, req client.CreateRequest) (events.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates = append(f.creates, req)
	return f.createRes, f.createErr
}

// Send records the message. sendErr, unless the test marked it for the
// outbox, says the message certainly did not arrive (client.Retryable).
func (f *fakeBackend) Send(ctx context.Context, taskID string, m client.Message) (client.SendResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sendCalls++
	f.sends = append(f.sends, m.Text)
	f.sendWebs = append(f.sendWebs, m.WebSearch)
	if f.onSend != nil {
		return f.onSend(m)
	}
	if f.sendErr != nil && outbox.OutcomeOf(f.sendErr) == outbox.OutcomeUnknown {
		return f.sendRes, client.Retryable(f.sendErr)
	}
	return f.sendRes, f.sendErr
}

// Received says no message arrived (no replay to ask).
func (f *fakeBackend) Received(context.Context, string, string, time.Time) (int, error) {
	return 0, nil
}

func (f *fakeBackend) Cancel(ctx context.Context, taskID string) ([]events.QueuedMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels++
	return f.cancelPending, f.cancelErr
}

func (f *fakeBackend) Follow(ctx context.Context, id string, on func(client.Update)) error {
	if f.follow != nil {
		return f.follow(ctx, id, on)
	}
	<-ctx.Done()
	return ctx.Err()
}

func (f *fakeBackend) WatchSessionsState(ctx context.Context, onTasks func([]events.Task), onState func(connState)) error {
	if f.watchTasks != nil {
		return f.watchTasks(ctx, onTasks, onState)
	}
	<-ctx.Done()
	return ctx.Err()
}

// eventUpdate is one event as a backend's update.
func eventUpdate(ev events.Event) client.Update {
	return client.Update{Events: []events.Event{ev}}
}

// stateUpdate is a connection state as a backend's update.
func stateUpdate(s connState) client.Update { return client.Update{State: &s} }

// onEvent hands the batcher one event as a step.
func (b *batcher) onEvent(ev events.Event) {
	b.onStep([]events.Event{ev})
}

// recordControl records stream wishes instead of starting streams.
type recordControl struct{ watches []watchReq }

func (r *recordControl) WatchTask(gen uint64, id string) {
	r.watches = append(r.watches, watchReq{gen: gen, taskID: id})
}

// fixedNow is the frozen clock of model tests and goldens.
var fixedNow = time.Date(2026, 3, 27, 10, 0, 0, 0, time.UTC)

// harness drives a Model the way the program would, synchronously: every
// command is run and its messages fed back, except timers (driven by hand).
type harness struct {
	t   testing.TB
	m   *Model
	b   *fakeBackend
	ctl *recordControl
	// other collects messages the model does not handle itself (e.g. the
	// clipboard command's message).
	other []tea.Msg
	now   time.Time
}

func newHarness(t testing.TB, w, h int, cfg Config) *harness {
	t.Helper()
	return newHarnessOn(t, w, h, cfg, &fakeBackend{})
}

// newHarnessOn is newHarness on the test's backend.
func newHarnessOn(t testing.TB, w, h int, cfg Config, b *fakeBackend) *harness {
	t.Helper()
	hs := &harness{t: t, b: b, ctl: &recordControl{}, now: fixedNow}
	if cfg.Theme == "" {
		cfg.Theme = "dark"
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	cfg.Now = func() time.Time { return hs.now }
	if cfg.Home == "" {
		cfg.Home = "/home/alice"
	}
	if cfg.Clipboard == nil {
		cfg.Clipboard = &fakeClipboard{} // never the real one
	}
	hs.m = New(context.Background(), hs.b, cfg, hs.ctl)
	hs.m.after = func(time.Duration, tea.Msg) tea.Cmd { return nil }
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.m.Init())
	return hs
}

// send delivers one message and runs the resulting commands.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case tea.QuitMsg:
		h.other = append(h.other, msg)
	default:
		switch fmt.Sprintf("%T", msg) {
		case "tea.setClipboardMsg", "tea.backgroundColorMsg", "tea.requestBackgroundColorMsg":
			h.other = append(h.other, msg)
			return
		}
		if reflect.TypeOf(msg).PkgPath() == "charm.land/bubbletea/v2" {
			h.other = append(h.other, msg)
			return
		}
		h.send(msg)
	}
}

// key presses one key given as bubbletea writes it ("enter", "ctrl+x",
// "shift+enter", "G", "space", …).
func (h *harness) key(s string) {
	h.t.Helper()
	h.send(keyMsg(s))
}

func keyMsg(s string) tea.KeyPressMsg {
	special := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "space": tea.KeySpace,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace, "f1": tea.KeyF1,
	}
	var mod tea.KeyMod
	base := s
	for {
		switch {
		case strings.HasPrefix(base, "ctrl+") && len(base) > 5:
			mod |= tea.ModCtrl
			base = base[5:]
			continue
		case strings.HasPrefix(base, "alt+") && len(base) > 4:
			mod |= tea.ModAlt
			base = base[4:]
			continue
		case strings.HasPrefix(base, "shift+") && len(base) > 6:
			mod |= tea.ModShift
			base = base[6:]
			continue
		}
		break
	}
	if r, ok := special[base]; ok {
		k := tea.KeyPressMsg{Code: r, Mod: mod}
		if r == tea.KeySpace && mod == 0 {
			k.Text = " "
		}
		return k
	}
	r := []rune(base)[0]
	if mod != 0 {
		return tea.KeyPressMsg{Code: r, Mod: mod}
	}
	return tea.KeyPressMsg{Code: r, Text: base}
}

// typ types text into whatever has focus.
func (h *harness) typ(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// events delivers a task-stream batch of the current attach.
func (h *harness) events(evs ...events.Event) {
	h.t.Helper()
	h.send(streamBatchMsg{Src: srcTask, Gen: h.m.gen, Events: chunksOf(evs)})
}

// taskList delivers the watched task list.
func (h *harness) taskList(ts ...events.Task) {
	h.t.Helper()
	if ts == nil {
		ts = []events.Task{}
	}
	h.send(streamBatchMsg{Src: srcDaemon, Tasks: ts})
}

// view is the screen as plain text.
func (h *harness) view() string {
	h.t.Helper()
	v := h.m.View()
	return ansi.Strip(v.Content)
}

// checkFrame asserts the frame's shape: exactly h rows, none wider than w.
func checkFrame(t testing.TB, m *Model) {
	t.Helper()
	content := m.View().Content
	if m.w <= 0 || m.h <= 0 {
		return
	}
	rows := strings.Split(content, "\n")
	if len(rows) != m.h {
		t.Fatalf("frame has %d rows, want %d", len(rows), m.h)
	}
	for i, r := range rows {
		if w := ansi.StringWidth(r); w > m.w {
			t.Fatalf("row %d is %d cells wide (> %d): %q", i, w, m.w, ansi.Strip(r))
		}
	}
}

func (h *harness) contains(sub string) {
	h.t.Helper()
	if v := h.view(); !strings.Contains(v, sub) {
		h.t.Fatalf("view lacks %q:\n%s", sub, v)
	}
}

func (h *harness) lacks(sub string) {
	h.t.Helper()
	if v := h.view(); strings.Contains(v, sub) {
		h.t.Fatalf("view has %q:\n%s", sub, v)
	}
}

// ---- event builders ----

func user(id, text string) events.Event {
	return events.Event{Kind: events.KindUserMessage, ID: id, Text: text, Created: fixedNow}
}

func assistant(id, text string) events.Event {
	return events.Event{Kind: events.KindAssistantMessage, ID: id, Text: text, Created: fixedNow}
}

func runStart(id string, at time.Time) events.Event {
	return events.Event{Kind: events.KindPreConversation, ID: id, Created: at}
}

func runEnd(id string) events.Event {
	return events.Event{Kind: events.KindPostConversation, ID: id, Created: fixedNow}
}

func preTool(id, callID, name, args string) events.Event {
	c := events.ToolCall{ID: callID, Name: name, ArgsRaw: args}
	if args != "" {
		c.Args = []byte(args)
	}
	return events.Event{Kind: events.KindPreToolCall, ID: id, Created: fixedNow,
		Tool: &events.ToolEvent{Call: c, Name: name}}
}

func postTool(id, callID, name, out string, isErr bool) events.Event {
	r := &events.ToolResult{Text: out, IsError: isErr}
	if isErr {
		r.ErrorText = out
	}
	return events.Event{Kind: events.KindPostToolCall, ID: id, Created: fixedNow,
		Tool: &events.ToolEvent{Call: events.ToolCall{ID: callID, Name: name}, Name: name, Result: r}}
}

func queueSnap(q ...events.QueuedMessage) events.Event {
	return events.Event{Kind: events.KindQueueSnapshot, Queue: q}
}

// session builds n events: user turns, assistant replies and tool calls in
// a realistic mix (every 4th event a user message, tools with multi-line
// output).
func session(n int) []events.Event {
	evs := make([]events.Event, 0, n)
	for i := 0; len(evs) < n; i++ {
		id := fmt.Sprintf("e%d", i)
		switch i % 4 {
		case 0:
			evs = append(evs, user(id, fmt.Sprintf("question %d: please look at the parser and tell me why it fails on input %d", i, i)))
		case 1:
			evs = append(evs, assistant(id, fmt.Sprintf("Reply %d. The parser **fails** because the tokenizer drops the last byte.\n\n- first point\n- second point with `code`\n\nLet me check.", i)))
		case 2:
			evs = append(evs, preTool(id, "c"+id, "execute_command", `{"command":"go test ./..."}`))
		case 3:
			out := strings.Repeat(fmt.Sprintf("ok  \tpkg/%d\t0.01s\n", i), 12)
			evs = append(evs, postTool(id, fmt.Sprintf("ce%d", i-1), "execute_command", out, false))
		}
	}
	return evs
}
