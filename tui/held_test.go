package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

// heldTexts is the attached task's held messages, in queue order.
func heldTexts(hs *harness) []string {
	var out []string
	for _, m := range hs.m.held.pending() {
		out = append(out, m.Text)
	}
	return out
}

// live reports the task stream connected.
func (h *harness) live() {
	h.t.Helper()
	h.send(streamBatchMsg{Src: srcTask, Gen: h.m.gen, State: &connState{Phase: sse.PhaseLive, Since: fixedNow}})
}

// noFlash lets the flash message expire (the hints row shows keys again).
func (h *harness) noFlash() {
	h.t.Helper()
	h.send(flashExpiredMsg{seq: h.m.flash.seq})
}

// settle lets the idle settle: the delivery rule's timer fires, the
// settle time later (the harness runs no timers by itself, and its clock
// stands still).
func (h *harness) settle() {
	h.t.Helper()
	h.send(heldSettledMsg{gen: h.m.gen, seq: h.m.held.timerSeq, at: h.m.paceNow().Add(outbox.DefaultSettle)})
}

func (h *harness) sent() []string {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	return append([]string(nil), h.b.sends...)
}

// attachedWith is attached with an outbox of the test's.
func attachedWith(t *testing.T, w, h int, ob *Outbox) *harness {
	t.Helper()
	return attachedOn(t, w, h, ob, &fakeBackend{})
}

// attachedOn is attachedWith on the test's backend.
func attachedOn(t *testing.T, w, h int, ob *Outbox, b *fakeBackend) *harness {
	t.Helper()
	hs := newHarnessOn(t, w, h, Config{TaskID: "task-1", Outbox: ob}, b)
	hs.b.mu.Lock()
	hs.b.task = events.Task{ID: "task-1", Name: "fix the parser", Cwd: "/home/alice/src/parser", Status: events.StatusIdle, Model: "anthropic/claude-sonnet-4.5"}
	hs.b.mu.Unlock()
	return hs
}

// Four messages held while the agent works, one edited, one moved, one
// deleted in the panel; once the task is idle they go in the new order,
// one turn each, the next only after the previous turn ended, each once.
func TestHeldEditReorderDeleteThenDeliveredOneAtATime(t *testing.T) {
	hs := attached(t, 100, 30)
	hs.live()
	hs.events(user("u0", "go"), runStart("r1", fixedNow))
	for _, s := range []string{"first", "second", "third", "fourth"} {
		hs.typ(s)
		hs.key("ctrl+g")
	}
	if got := hs.sent(); len(got) != 0 {
		t.Fatalf("held messages were sent: %q", got)
	}
	if hs.m.comp.value() != "" {
		t.Fatalf("composer not cleared: %q", hs.m.comp.value())
	}
	hs.contains("✎ 4 held")
	hs.contains("4. [")
	hs.contains("ctrl+g hold")

	// The panel takes the keys; the first message is selected.
	hs.key("shift+tab")
	if hs.m.focus != focusHeld {
		t.Fatal("shift+tab must focus the held panel")
	}
	hs.contains("› 1. [")
	hs.noFlash()
	hs.contains("e edit")

	// Edit the second in the composer; what was typed there waits aside.
	hs.key("esc")
	hs.typ("half a thought")
	hs.key("shift+tab")
	hs.key("j")
	hs.key("e")
	if hs.m.focus != focusComposer || hs.m.comp.value() != "second" {
		t.Fatalf("edit: focus %v composer %q", hs.m.focus, hs.m.comp.value())
	}
	hs.contains("editing held message")
	hs.typ(", edited")
	hs.key("enter")
	if hs.m.comp.value() != "half a thought" {
		t.Fatalf("the composer text did not come back after the edit: %q", hs.m.comp.value())
	}
	if got := strings.Join(heldTexts(hs), "|"); got != "first|second, edited|third|fourth" {
		t.Fatalf("after the edit: %q", got)
	}

	// Move the edited one to the front, delete the third.
	hs.key("shift+tab")
	if hs.m.held.sel != 1 {
		t.Fatalf("selection = %d", hs.m.held.sel)
	}
	hs.key("K")
	hs.key("j")
	hs.key("j")
	hs.key("d")
	if got := strings.Join(heldTexts(hs), "|"); got != "second, edited|first|fourth" {
		t.Fatalf("after move and delete: %q", got)
	}
	hs.contains("deleted")
	if len(hs.sent()) != 0 {
		t.Fatal("editing sent something")
	}

	// The run ends: after the idle settles, the first goes, alone.
	hs.events(runEnd("r1-end"))
	if len(hs.sent()) != 0 {
		t.Fatal("sent before the idle settled")
	}
	hs.settle()
	want := []string{"second, edited"}
	if got := hs.sent(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sent %q, want %q", got, want)
	}
	// Still idle on screen (its turn has not started): nothing more goes.
	hs.settle()
	hs.live()
	hs.send(idleMsg{})
	if got := hs.sent(); len(got) != 1 {
		t.Fatalf("the next went before the previous turn: %q", got)
	}
	// Its turn runs and ends; then the next, and so on.
	for i, text := range []string{"first", "fourth"} {
		id := fmt.Sprint(i)
		hs.events(user("u-"+id, want[len(want)-1]), runStart("r-"+id, fixedNow))
		hs.settle()
		if got := hs.sent(); len(got) != len(want) {
			t.Fatalf("sent while busy: %q", got)
		}
		hs.events(runEnd("r-end-" + id))
		hs.settle()
		want = append(want, text)
		if got := hs.sent(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("sent %q, want %q", got, want)
		}
	}
	hs.events(user("u-last", "fourth"), runStart("r-last", fixedNow), runEnd("r-last-end"))
	hs.settle()
	if got := hs.sent(); len(got) != 3 {
		t.Fatalf("sent %q", got)
	}
	if len(hs.m.held.pending()) != 0 || hs.m.focus == focusHeld {
		t.Fatalf("left: %q, focus %v", heldTexts(hs), hs.m.focus)
	}
	hs.lacks("held")
	checkFrame(t, hs.m)
}

// Paused, nothing goes when idle; "send now" sends one at once, busy or
// not; resuming lets the rest go at the next idle.
func TestHeldPauseResumeAndSendNow(t *testing.T) {
	hs := attached(t, 100, 30)
	hs.live()
	hs.events(runStart("r1", fixedNow))
	for _, s := range []string{"one", "two", "three"} {
		hs.typ(s)
		hs.key("ctrl+g")
	}
	hs.key("shift+tab")
	hs.key("p")
	if !hs.m.held.paused() {
		t.Fatal("p must pause auto-delivery")
	}
	hs.contains("⏸ 3 held · auto-delivery paused")
	hs.noFlash()
	hs.contains("p resume")
	hs.events(runEnd("r1-end"))
	hs.settle()
	if len(hs.sent()) != 0 {
		t.Fatalf("paused, but sent %q", hs.sent())
	}
	// Send the second now.
	hs.key("j")
	hs.key("s")
	if got := hs.sent(); len(got) != 1 || got[0] != "two" {
		t.Fatalf("send now: %q", got)
	}
	if got := strings.Join(heldTexts(hs), "|"); got != "one|three" {
		t.Fatalf("left: %q", got)
	}
	// Its turn; then resume: the first goes at the next idle.
	hs.events(user("u2", "two"), runStart("r2", fixedNow), runEnd("r2-end"))
	hs.settle()
	if len(hs.sent()) != 1 {
		t.Fatal("still paused")
	}
	hs.key("p")
	if hs.m.held.paused() {
		t.Fatal("p must resume")
	}
	hs.settle()
	if got := hs.sent(); len(got) != 2 || got[1] != "one" {
		t.Fatalf("after resume: %q", got)
	}
}

// c takes a held message back into the composer (before what is typed).
func TestHeldMoveToComposer(t *testing.T) {
	hs := attached(t, 100, 30)
	hs.typ("later maybe")
	hs.key("ctrl+g")
	hs.typ("typing")
	hs.key("shift+tab")
	hs.key("c")
	if got := hs.m.comp.value(); got != "later maybe\n\ntyping" {
		t.Fatalf("composer = %q", got)
	}
	if len(hs.m.held.pending()) != 0 || hs.m.focus != focusComposer {
		t.Fatalf("held %q focus %v", heldTexts(hs), hs.m.focus)
	}
	hs.contains("moved to the composer")
}

// Esc cancels an edit: the message keeps its text, the composer gets its
// own back. A message delivered meanwhile cannot be saved: the edited text
// stays in the composer.
func TestHeldEditCancelAndConflict(t *testing.T) {
	store := outbox.NewMemStore()
	hs := attachedWith(t, 100, 30, &Outbox{Store: store})
	hs.typ("keep me")
	hs.key("ctrl+g")
	hs.typ("draft")
	hs.key("shift+tab")
	hs.key("enter")
	hs.typ(" changed")
	hs.key("esc")
	if hs.m.comp.value() != "draft" || heldTexts(hs)[0] != "keep me" || hs.m.held.editing != "" {
		t.Fatalf("cancel: composer %q held %q", hs.m.comp.value(), heldTexts(hs))
	}
	hs.key("shift+tab")
	hs.key("e")
	hs.typ(" changed")
	// Another perch delivers it meanwhile.
	id := hs.m.held.pending()[0].ID
	if _, err := store.Update("task-1", func(q *outbox.Queue) error {
		if err := q.MarkSending(id, fixedNow); err != nil {
			return err
		}
		return q.MarkSent(id, "d1", false, false, fixedNow)
	}); err != nil {
		t.Fatal(err)
	}
	hs.key("shift+tab") // not while editing
	if hs.m.focus != focusComposer || hs.m.held.editing != id {
		t.Fatalf("left the edit: focus %v editing %q", hs.m.focus, hs.m.held.editing)
	}
	hs.key("enter")
	if got := hs.m.comp.value(); got != "keep me changed\n\ndraft" {
		t.Fatalf("the edited text must stay in the composer, got %q", got)
	}
	hs.contains("could not save the edit")
}

// A change made by another process (perch queue …) shows when the store
// reports it.
func TestHeldReloadsOnOutsideChange(t *testing.T) {
	store := outbox.NewMemStore()
	hs := attachedWith(t, 100, 30, &Outbox{Store: store})
	hs.lacks("held")
	if _, err := store.Update("task-1", func(q *outbox.Queue) error {
		_, err := q.Add("from the command line", outbox.IntentHold, false, fixedNow)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	hs.send(outboxChangedMsg{gen: hs.m.gen, taskID: "task-1"})
	hs.contains("✎ 1 held")
	hs.contains("from the command line")
	// A signal of an earlier attach is ignored.
	if _, err := store.Update("task-1", func(q *outbox.Queue) error { return q.SetPaused(true) }); err != nil {
		t.Fatal(err)
	}
	hs.send(outboxChangedMsg{gen: hs.m.gen - 1, taskID: "task-1"})
	hs.lacks("paused")
}

// The hub watches the attached task's outbox on disk: a change by another
// process reaches the UI within a second.
func TestHubReportsOutboxChanges(t *testing.T) {
	dir := t.TempDir()
	store := outbox.OpenFileStore(dir, "http://127.0.0.1:8090/v1")
	ob := newOutboxes(&Outbox{Store: store}, &fakeBackend{})
	ctx, cancel := context.WithCancel(context.Background())
	h := newStreamHub(ctx, &fakeBackend{})
	watching := make(chan struct{})
	var once sync.Once
	h.outbox = func(ctx context.Context, task string) <-chan struct{} {
		defer once.Do(func() { close(watching) }) // the file is watched once this returns
		return ob.watch(ctx, task)
	}
	got := make(chan outboxChangedMsg, 8)
	h.start(func(msg tea.Msg) {
		if m, ok := msg.(outboxChangedMsg); ok {
			got <- m
		}
	})
	h.WatchTask(3, "task-1")
	select {
	case <-watching:
	case <-time.After(5 * time.Second):
		t.Fatal("the hub never watched the task's outbox")
	}
	other := outbox.OpenFileStore(dir, "http://127.0.0.1:8090/v1")
	start := time.Now()
	if _, err := other.Update("task-1", func(q *outbox.Queue) error {
		_, err := q.Add("edited elsewhere", outbox.IntentHold, false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m.gen != 3 || m.taskID != "task-1" {
			t.Fatalf("got %+v", m)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("the change took %v to show", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change reported")
	}
	cancel()
	h.wait()
}

// A held message the daemon refuses (404) stays, marked, until the user
// acts; a send-intent one kept while the daemon was down says so.
func TestHeldShowsReasons(t *testing.T) {
	hs := attached(t, 100, 30)
	hs.b.sendErr = client.Permanent(errors.New("POST http://d/v1/task/task-1/message: 404 Not Found: task not found"))
	hs.typ("to a deleted task")
	hs.key("enter")
	hs.contains("✗ refused")
	hs.contains("task not found")
	hs.contains("refused, kept: edit, send or delete it")
	if p := hs.m.held.pending(); len(p) != 1 || p[0].State != outbox.Failed {
		t.Fatalf("held: %+v", p)
	}
	// Failed messages never go by themselves.
	hs.b.sendErr = nil
	hs.live()
	hs.settle()
	if len(hs.sent()) != 1 {
		t.Fatalf("a refused message was sent again: %q", hs.sent())
	}
}

// At exit perch says how many messages it keeps and where, and prints
// only what is in no outbox (the composer), never the kept messages.
func TestExitReport(t *testing.T) {
	state := t.TempDir()
	root := outbox.DefaultRoot(func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}, "/nonexistent")
	store := outbox.OpenFileStore(root, "http://127.0.0.1:8090/v1")
	hs := attachedWith(t, 80, 24, &Outbox{Store: store})
	hs.b.sendErr = errors.New("connection refused")
	hs.typ("sent while down")
	hs.key("enter")
	hs.typ("held for later")
	hs.key("ctrl+g")
	hs.typ("still typing \x1b[2Jhere")
	hs.m.drafts["other-task-id"] = "a draft elsewhere"
	var out bytes.Buffer
	hs.m.writeExitReport(&out)
	got := out.String()
	want := "perch keeps 2 messages for task task in " + store.Path("task-1") + " (perch queue task to see them)"
	if !strings.Contains(got, want) {
		t.Errorf("missing %q in:\n%s", want, got)
	}
	if !strings.HasPrefix(store.Path("task-1"), state) {
		t.Errorf("outbox outside XDG_STATE_HOME: %s", store.Path("task-1"))
	}
	for _, s := range []string{"2 texts", "still typing", "a draft elsewhere"} {
		if !strings.Contains(got, s) {
			t.Errorf("missing %q in:\n%s", s, got)
		}
	}
	for _, s := range []string{"sent while down", "held for later", "\x1b"} {
		if strings.Contains(got, s) {
			t.Errorf("%q printed:\n%s", s, got)
		}
	}
	// In memory, the kept messages are printed: nothing else keeps them.
	mem := attached(t, 80, 24)
	mem.typ("only in memory")
	mem.key("ctrl+g")
	out.Reset()
	mem.m.writeExitReport(&out)
	if s := out.String(); !strings.Contains(s, "only in memory") || !strings.Contains(s, "1 held message for task task was kept in memory only") {
		t.Errorf("memory report:\n%s", s)
	}
	// Nothing typed: nothing printed.
	out.Reset()
	attached(t, 80, 24).m.writeExitReport(&out)
	if out.Len() != 0 {
		t.Errorf("printed %q with nothing kept", out.String())
	}
}

// A message that could not be written down is not posted, and comes back
// to the composer.
func TestSubmitNotWrittenDownComesBack(t *testing.T) {
	hs := attachedWith(t, 80, 24, &Outbox{Store: failingStore{outbox.NewMemStore()}})
	hs.typ("precious")
	hs.key("enter")
	if len(hs.sent()) != 0 {
		t.Fatalf("posted without writing it down: %q", hs.sent())
	}
	if hs.m.comp.value() != "precious" {
		t.Fatalf("composer = %q", hs.m.comp.value())
	}
	hs.contains("could not write the message down")
}

type failingStore struct{ *outbox.MemStore }

func (failingStore) Update(string, func(*outbox.Queue) error) (*outbox.Queue, error) {
	return nil, errors.New("disk full")
}

func TestGoldenHeldPanel(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs := goldenTaskWith(t, sz[0], sz[1], goldenHeldOutbox())
			hs.noFlash()
			hs.key("shift+tab")
			hs.key("j")
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
		})
	}
}

func TestGoldenHeldPanelPausedUnfocused(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			ob := goldenHeldOutbox()
			if _, err := ob.Store.Update("task-1", func(q *outbox.Queue) error { return q.SetPaused(true) }); err != nil {
				t.Fatal(err)
			}
			hs := goldenTaskWith(t, sz[0], sz[1], ob)
			hs.noFlash()
			hs.typ("and keep the public API unchanged")
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
		})
	}
}

// goldenHeldOutbox has three messages: two held (one with web search) and
// one sent while the daemon was down (it still is: see goldenTaskWith).
func goldenHeldOutbox() *Outbox {
	store := outbox.NewMemStore()
	store.SetJournal("task-1", []byte(`{"op":"add","id":"k3x9qa","text":"run the unit tests before the release","intent":"hold"}
{"op":"add","id":"ab2cde","text":"then update the CHANGELOG\nwith the fix","intent":"hold","web_search":true}
{"op":"add","id":"q7aa2b","text":"and tell me when it is done","intent":"send"}
{"op":"sending","id":"q7aa2b"}
{"op":"failed","id":"q7aa2b","outcome":"retry","error":"POST http://127.0.0.1:8090/v1/task/task-1/message: connection refused"}
`))
	return &Outbox{Store: store}
}

// Held on an idle task, a message waits for the task to finish its next
// piece of work; held messages found when attaching to an idle task go.
func TestHeldWaitsForTheNextIdle(t *testing.T) {
	store := outbox.NewMemStore()
	hs := attachedWith(t, 100, 30, &Outbox{Store: store})
	hs.live()
	hs.events(user("u0", "hi"), assistant("a0", "hello"))
	hs.settle()
	hs.typ("after the next turn")
	hs.key("ctrl+g")
	if len(hs.sent()) != 0 {
		t.Fatalf("held on an idle task, sent at once: %q", hs.sent())
	}
	hs.typ("go")
	hs.key("enter")
	if got := hs.sent(); len(got) != 1 || got[0] != "go" {
		t.Fatalf("sent %q", got)
	}
	hs.events(user("u1", "go"), runStart("r1", fixedNow))
	hs.events(runEnd("r1-end"))
	hs.settle()
	if got := hs.sent(); len(got) != 2 || got[1] != "after the next turn" {
		t.Fatalf("sent %q", got)
	}

	// Attaching again to the idle task: what is held goes.
	if _, err := store.Update("task-1", func(q *outbox.Queue) error {
		_, err := q.Add("from before", outbox.IntentHold, false, fixedNow)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	hs.key("tab")
	hs.key("esc") // to the task list
	hs.run(hs.m.attach(events.Task{ID: "task-1"}))
	hs.live()
	hs.events(user("u0", "hi"), assistant("a0", "hello"))
	hs.settle()
	if got := hs.sent(); len(got) != 3 || got[2] != "from before" {
		t.Fatalf("on attach: %q", got)
	}
}

// sunaSends is a session on a server without a queue, as the outbox
// sees it: a follow-up to an idle session starts a run, and while a run
// is on the server answers busy.
type sunaSends struct {
	mu      sync.Mutex
	running bool
	got     []string
}

// backend is a Suna backend whose sends s answers.
func (s *sunaSends) backend() *fakeBackend {
	return &fakeBackend{name: client.Suna, caps: &client.Capabilities{Send: true, Cancel: true}, onSend: s.send}
}

func (s *sunaSends) send(m client.Message) (client.SendResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return client.SendResult{}, fmt.Errorf("a run is running: %w", client.ErrBusy)
	}
	s.running = true
	s.got = append(s.got, m.Text)
	return client.SendResult{ID: fmt.Sprint("run-", len(s.got))}, nil
}

func (s *sunaSends) set(running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = running
}

func (s *sunaSends) sent() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.got, "|")
}

// Suna: a follow-up typed on the idle task after a held message's run
// goes at once; it stuck as "sent, not delivered yet · delivered when the
// daemon answers".
func TestHeldSunaFollowUpAfterAHeldRun(t *testing.T) {
	sb := &sunaSends{}
	hs := attachedOn(t, 100, 30, &Outbox{Store: outbox.NewMemStore()}, sb.backend())
	hs.live()
	hs.events(user("u0", "hi"), assistant("a0", "hello"))
	hs.settle()
	hs.typ("A")
	hs.key("enter")
	hs.events(user("uA", "A"), runStart("rA", fixedNow))
	hs.typ("B") // while A runs: held by perch, starts after A
	hs.key("enter")
	if got := sb.sent(); got != "A" {
		t.Fatalf("sent %q while A runs", got)
	}
	hs.contains("starts when the running run ends") // Suna: B starts a run of its own
	sb.set(false)
	hs.events(runEnd("rA-end"))
	hs.settle()
	if got := sb.sent(); got != "A|B" {
		t.Fatalf("after A's run: %q", got)
	}
	hs.events(user("uB", "B"), runStart("rB", fixedNow))
	sb.set(false)
	hs.events(runEnd("rB-end"))
	hs.settle()
	hs.typ("C")
	hs.key("enter")
	if got := sb.sent(); got != "A|B|C" {
		t.Fatalf("C on the idle thread: sent %q", got)
	}
	hs.lacks("delivered when the daemon answers")
}

// perch queue --resume from another shell while the attached task is
// idle: the held message goes (the UI said "resumed" and kept it).
func TestHeldResumedElsewhereWhileIdle(t *testing.T) {
	store := outbox.NewMemStore()
	if _, err := store.Update("task-1", func(q *outbox.Queue) error {
		if err := q.SetPaused(true); err != nil {
			return err
		}
		_, err := q.Add("X", outbox.IntentHold, false, fixedNow)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	hs := attachedWith(t, 100, 30, &Outbox{Store: store})
	hs.live()
	hs.events(user("u0", "hi"), assistant("a0", "hello"))
	hs.settle()
	hs.settle()
	hs.contains("auto-delivery paused")
	if len(hs.sent()) != 0 {
		t.Fatalf("paused, yet sent %q", hs.sent())
	}
	if _, err := store.Update("task-1", func(q *outbox.Queue) error { return q.SetPaused(false) }); err != nil {
		t.Fatal(err)
	}
	hs.send(outboxChangedMsg{gen: hs.m.gen, taskID: "task-1"})
	if got := hs.sent(); len(got) != 1 || got[0] != "X" {
		t.Fatalf("resumed elsewhere on an idle task: sent %q", got)
	}
}

// The held panel says what its messages wait for, as the delivery rule
// sees it (outbox.Pace's Note): a message held on an idle task waits for
// the task's next run, an edit holds delivery back, a pause, and a message
// sent while the daemon is away waits for it; never words of another
// state.
func TestHeldWordsMatchTheState(t *testing.T) {
	hs := attachedWith(t, 100, 30, &Outbox{Store: outbox.NewMemStore()})
	hs.live()
	hs.events(user("u0", "hi"), assistant("a0", "hello"))
	hs.settle() // the idle is spent on nothing due
	hs.typ("X")
	hs.key("ctrl+g")
	hs.contains("✎ 1 held · sent after the task's next run")
	hs.lacks("daemon answers")
	hs.lacks("run ends")

	hs.key("shift+tab")
	hs.key("e")
	hs.contains("waiting while a held message is being edited")
	hs.key("esc")
	hs.contains("✎ 1 held · sent after the task's next run")

	// The daemon goes away: a message sent now waits for it.
	hs.b.mu.Lock()
	hs.b.sendErr = errors.New("connection refused")
	hs.b.mu.Unlock()
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &connState{Phase: sse.PhaseReconnecting, RetryIn: time.Second, Since: fixedNow}})
	hs.typ("Y")
	hs.key("enter")
	hs.contains("1 held, 1 sent, not delivered yet · delivered when the daemon answers")

	hs.key("shift+tab")
	hs.key("p")
	hs.contains("⏸ 1 held, 1 sent, not delivered yet · auto-delivery paused")
}
