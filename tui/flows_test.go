package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

func attached(t *testing.T, w, h int) *harness {
	t.Helper()
	hs := newHarness(t, w, h, Config{TaskID: "task-1"})
	hs.b.mu.Lock()
	hs.b.task = events.Task{ID: "task-1", Name: "fix the parser", Cwd: "/home/alice/src/parser", Status: events.StatusIdle, Model: "anthropic/claude-sonnet-4.5"}
	hs.b.mu.Unlock()
	return hs
}

func TestAttachAndReplay(t *testing.T) {
	hs := newHarness(t, 80, 24, Config{TaskID: "task-1"})
	if hs.m.mode != modeTask {
		t.Fatal("a TaskID in the config must open the task view")
	}
	if len(hs.ctl.watches) != 1 || hs.ctl.watches[0].taskID != "task-1" || hs.ctl.watches[0].gen != hs.m.gen {
		t.Fatalf("attach must start the task stream: %+v", hs.ctl.watches)
	}
	live := connState{Phase: sse.PhaseLive, Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live, Events: chunksOf([]events.Event{
		user("u1", "why does the parser fail?"),
		assistant("a1", "Because the tokenizer drops the last byte."),
	})})
	hs.contains("why does the parser fail?")
	hs.contains("tokenizer drops the last byte")
	hs.contains("● live")
	// (Replays are dropped before they reach the model: the stream's
	// decoder does it, see TestBatcherCoalescesToOnePerFrame.)
	// A batch from an earlier attach is ignored.
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen - 1, Events: chunksOf([]events.Event{user("x", "stale")})})
	hs.lacks("stale")
	checkFrame(t, hs.m)
}

func TestFollowKeepsBottom(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(session(200)...)
	hs.events(assistant("last", "THE LAST WORD"))
	hs.contains("THE LAST WORD")
	if !hs.m.tr.follow {
		t.Fatal("follow mode must stay on while events arrive")
	}
	hs.events(assistant("last2", "EVEN LATER"))
	hs.contains("EVEN LATER")
}

func TestScrollUpStopsFollowAndCountsNew(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(session(100)...)
	hs.key("tab") // to the transcript
	hs.key("pgup")
	if hs.m.tr.follow {
		t.Fatal("scrolling up must stop following")
	}
	before := hs.view()
	hs.events(assistant("n1", "NEW ONE"), assistant("n2", "NEW TWO"), assistant("n3", "NEW THREE"))
	hs.contains("↓ 3 new")
	hs.lacks("NEW THREE")
	// The view did not move: the first row is unchanged.
	if a, b := strings.SplitN(before, "\n", 2)[0], strings.SplitN(hs.view(), "\n", 2)[0]; a != b {
		t.Fatalf("view moved while not following:\n%q\n%q", a, b)
	}
	hs.key("G")
	if !hs.m.tr.follow {
		t.Fatal("G must resume following")
	}
	hs.contains("NEW THREE")
	hs.lacks("new ·")

	// Scrolling back down to the end resumes following as well.
	hs.key("k")
	hs.key("k")
	if hs.m.tr.follow {
		t.Fatal("k must stop following")
	}
	hs.key("j")
	hs.key("j")
	if !hs.m.tr.follow {
		t.Fatal("scrolling down to the bottom must resume following")
	}
	// g goes to the very top.
	hs.key("g")
	hs.contains("question 0")
}

func TestMouseWheelScrolls(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(session(100)...)
	hs.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if hs.m.tr.follow {
		t.Fatal("wheel up must stop following")
	}
	for i := 0; i < 5; i++ {
		hs.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	if !hs.m.tr.follow {
		t.Fatal("wheel down to the end must resume following")
	}
}

func TestExpandCollapse(t *testing.T) {
	hs := attached(t, 100, 40)
	var out strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&out, "output line %02d\n", i)
	}
	hs.events(
		user("u1", "run it"),
		preTool("p1", "c1", "execute_command", `{"command":"make"}`),
		postTool("q1", "c1", "execute_command", out.String(), false),
		assistant("a1", "done"),
	)
	hs.key("esc") // composer → transcript
	if hs.m.focus != focusTranscript {
		t.Fatal("esc in the composer must focus the transcript")
	}
	hs.lacks("output line 15")
	hs.key("[") // select the bottom item (assistant)
	hs.key("[") // the tool
	if got := hs.m.tl.Items()[hs.m.tr.sel].Kind; got != events.ItemTool {
		t.Fatalf("selected %v, want the tool", got)
	}
	hs.key("enter")
	hs.contains("output line 15")
	hs.contains("output line 01")
	hs.key("space")
	hs.lacks("output line 15")
}

func TestJumpUserTurnsAndErrors(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(session(40)...)
	hs.events(preTool("pe", "ce", "read_file", `{"path":"x"}`), postTool("qe", "ce", "read_file", "no such file", true))
	hs.events(session(40)[0:0]...)
	for i := 0; i < 8; i++ {
		hs.events(assistant(fmt.Sprintf("after%d", i), "filler"))
	}
	hs.key("tab")
	hs.key("E") // previous error
	it := hs.m.tl.Items()[hs.m.tr.sel]
	if !isError(it) {
		t.Fatalf("E selected %v, want the failing tool", it.Kind)
	}
	hs.contains("no such file")
	hs.key("{")
	if it := hs.m.tl.Items()[hs.m.tr.sel]; it.Kind != events.ItemUser {
		t.Fatalf("{ selected %v, want a user turn", it.Kind)
	}
	sel := hs.m.tr.sel
	hs.key("{")
	if hs.m.tr.sel >= sel {
		t.Fatal("{ must go to an earlier user turn")
	}
	hs.key("}")
	if hs.m.tr.sel != sel {
		t.Fatal("} must come back")
	}
}

func TestSearchNextPrev(t *testing.T) {
	hs := attached(t, 80, 24)
	var evs []events.Event
	for i := 0; i < 30; i++ {
		text := fmt.Sprintf("message %d", i)
		if i == 5 || i == 20 {
			text += " with the Needle in it"
		}
		evs = append(evs, assistant(fmt.Sprintf("a%d", i), text))
	}
	hs.events(evs...)
	hs.key("tab")
	hs.key("g")
	hs.key("/")
	hs.typ("needle")
	hs.key("enter")
	if hs.m.tr.sel != 5 {
		t.Fatalf("first match selected %d, want 5", hs.m.tr.sel)
	}
	hs.contains("Needle")
	hs.contains("2 matches in 2 items")
	hs.key("n")
	if hs.m.tr.sel != 20 {
		t.Fatalf("n selected %d, want 20", hs.m.tr.sel)
	}
	hs.key("n")
	if hs.m.tr.sel != 5 {
		t.Fatalf("n must wrap to 5, got %d", hs.m.tr.sel)
	}
	hs.key("N")
	if hs.m.tr.sel != 20 {
		t.Fatalf("N selected %d, want 20", hs.m.tr.sel)
	}
	// Matches are highlighted (the match style wraps the word).
	if v := hs.m.View().Content; !strings.Contains(v, hs.m.ch.Match.Render("Needle")) {
		t.Fatalf("the match is not highlighted:\n%q", v)
	}
	// Smart case: an upper-case letter makes the search exact.
	hs.key("/")
	hs.typ("NEEDLE")
	hs.key("enter")
	hs.contains("no match")
	hs.key("esc") // clears the search before leaving
	if hs.m.mode != modeTask || hs.m.search.query != "" {
		t.Fatal("esc must clear the search first")
	}
}

func TestSendIdle(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(user("u0", "earlier"), assistant("a0", "ok"))
	hs.b.sendRes = client.SendResult{ID: "m1", Queued: false}
	hs.typ("hello agent")
	// Before the POST returns the message is already on screen.
	_, cmd := hs.m.Update(keyMsg("enter"))
	hs.contains("sending hello agent")
	if hs.m.comp.value() != "" {
		t.Fatal("the composer must clear on send")
	}
	hs.run(cmd)
	if len(hs.b.sends) != 1 || hs.b.sends[0] != "hello agent" || hs.b.sendWebs[0] {
		t.Fatalf("sends = %q webs=%v", hs.b.sends, hs.b.sendWebs)
	}
	hs.lacks("sending hello")
	hs.events(user("u1", "hello agent"))
	hs.contains("hello agent")

	// ↑ on an empty composer recalls it; web search toggles per message.
	hs.key("up")
	if hs.m.comp.value() != "hello agent" {
		t.Fatalf("history recall = %q", hs.m.comp.value())
	}
	hs.key("up")
	if hs.m.comp.value() != "earlier" {
		t.Fatalf("history recall 2 = %q", hs.m.comp.value())
	}
	hs.key("down")
	hs.key("down")
	if hs.m.comp.value() != "" {
		t.Fatalf("down past the newest must restore the draft, got %q", hs.m.comp.value())
	}
	hs.key("ctrl+s")
	hs.contains("web on")
	hs.typ("search this")
	hs.key("enter")
	if !hs.b.sendWebs[1] {
		t.Fatal("web search flag not sent")
	}
}

func TestMultilineComposer(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.typ("line one")
	hs.key("shift+enter")
	hs.typ("line two")
	hs.key("ctrl+j")
	hs.typ("three")
	if got := hs.m.comp.value(); got != "line one\nline two\nthree" {
		t.Fatalf("composer = %q", got)
	}
	hs.contains("line two")
	hs.key("enter")
	if hs.b.sends[0] != "line one\nline two\nthree" {
		t.Fatalf("sent %q", hs.b.sends[0])
	}
}

func TestSendBusyQueuesAndShowsAtOnce(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(user("u0", "go"), runStart("r1", fixedNow.Add(-75*time.Second)))
	if !hs.m.busy() {
		t.Fatal("PreConversation must make the run busy")
	}
	hs.contains("generating 1m15s")
	hs.contains("queue a message")
	hs.b.sendRes = client.SendResult{ID: "m2", Queued: true}
	hs.typ("and also the lexer")
	_, cmd := hs.m.Update(keyMsg("enter"))
	hs.contains("sending and also the lexer")
	hs.run(cmd)
	hs.contains("1 queued")
	hs.contains("1. and also the lexer")
	hs.contains("queued — the agent reads it after this turn")
}

func TestFailedSendKeptAndRetried(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.b.sendErr = errors.New("connection refused")
	hs.typ("precious words")
	hs.key("enter")
	// Kept in perch's outbox, with the reason, and said so.
	hs.contains("↻ precious words")
	hs.contains("not delivered: connection refused")
	hs.contains("kept, sent when the daemon answers again")
	if p := hs.m.held.pending(); len(p) != 1 || p[0].Intent != outbox.IntentSend || p[0].Err == "" {
		t.Fatalf("held: %+v", p)
	}
	// Retry succeeds.
	hs.b.sendErr = nil
	hs.b.sendRes = client.SendResult{ID: "m9"}
	hs.key("ctrl+r")
	if hs.b.sendCalls != 2 || hs.b.sends[1] != "precious words" {
		t.Fatalf("retry sent %q", hs.b.sends)
	}
	hs.lacks("precious words")

	// Down again: the next message waits until the stream is live again,
	// then goes by itself, once.
	hs.b.sendErr = errors.New("connection refused")
	hs.typ("second try")
	hs.key("enter")
	hs.contains("second try")
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &connState{Phase: sse.PhaseReconnecting, RetryIn: time.Second, Since: fixedNow}})
	hs.b.sendErr = nil
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &connState{Phase: sse.PhaseLive, Since: fixedNow}})
	if got := hs.b.sends; len(got) != 4 || got[3] != "second try" {
		t.Fatalf("after the reconnect the daemon got %q", got)
	}
	hs.lacks("second try")
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &connState{Phase: sse.PhaseLive, Since: fixedNow}})
	if len(hs.b.sends) != 4 {
		t.Fatalf("sent again: %q", hs.b.sends)
	}
}

func TestQueuePanelLive(t *testing.T) {
	hs := attached(t, 80, 30)
	hs.events(runStart("r1", fixedNow), queueSnap(
		events.QueuedMessage{ID: "q1", Text: "first queued\nwith a second line"},
		events.QueuedMessage{ID: "q2", Text: "second queued"},
	))
	hs.contains("2 queued")
	hs.contains("1. first queued with a second line")
	hs.contains("2. second queued")
	hs.key("ctrl+q")
	hs.contains("   with a second line")
	hs.events(events.Event{Kind: events.KindMessageUnqueued, ID: "uq1", MessageID: "q1"})
	hs.contains("1 queued")
	hs.lacks("first queued")
}

func TestCancelWithConfirmationRecoversQueue(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(runStart("r1", fixedNow), queueSnap(
		events.QueuedMessage{ID: "q1", Text: "do A"},
		events.QueuedMessage{ID: "q2", Text: "do B"},
	))
	hs.typ("half typed")
	hs.key("ctrl+x")
	hs.contains("cancel the run?")
	hs.key("n")
	if hs.b.cancels != 0 {
		t.Fatal("n must not cancel")
	}
	hs.lacks("cancel the run?")
	hs.b.cancelPending = []events.QueuedMessage{{ID: "q1", Text: "do A"}, {ID: "q2", Text: "do B"}}
	hs.key("ctrl+x")
	hs.key("y")
	if hs.b.cancels != 1 {
		t.Fatal("y must cancel")
	}
	// The composer keeps what was typed; the queue comes back as held
	// messages at the front, in order, each its own, auto-delivery paused.
	if got := hs.m.comp.value(); got != "half typed" {
		t.Fatalf("composer = %q", got)
	}
	if got := heldTexts(hs); strings.Join(got, "|") != "do A|do B" || !hs.m.held.paused() {
		t.Fatalf("held = %q paused %v", got, hs.m.held.paused())
	}
	if hs.m.busy() || len(hs.m.tl.Queue()) != 0 {
		t.Fatal("NoteCancelled must end the run and clear the queue")
	}
	hs.contains("2 queued messages held, auto-delivery paused")
	hs.contains("⏸ 2 held")
	hs.contains("1. [")
	hs.contains("do A")

	// ctrl+c on a busy run with an empty composer asks too.
	hs.m.comp.reset()
	hs.events(runStart("r2", fixedNow))
	hs.key("ctrl+c")
	hs.contains("cancel the run?")
	hs.key("esc")

	// Nothing running: the daemon says so.
	hs.b.cancelPending = nil
	hs.b.cancelErr = fmt.Errorf("POST …/cancel: %w", client.ErrNotRunning)
	hs.key("ctrl+x")
	hs.key("y")
	hs.contains("nothing to cancel")
}

func TestCtrlCClearsThenQuits(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.typ("draft text")
	hs.key("ctrl+c")
	if hs.m.comp.value() != "" || hs.m.quitting {
		t.Fatal("first ctrl+c clears the composer")
	}
	hs.key("up")
	if hs.m.comp.value() != "draft text" {
		t.Fatal("a cleared draft must come back with ↑")
	}
	hs.m.comp.reset()
	hs.key("ctrl+c")
	if !hs.m.quitting {
		t.Fatal("ctrl+c on an idle, empty composer quits")
	}
}

func TestReconnectBanner(t *testing.T) {
	hs := attached(t, 100, 24)
	st := connState{Phase: sse.PhaseReconnecting, Attempt: 2, RetryIn: 3 * time.Second, Err: errors.New("unexpected EOF"), Since: fixedNow}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &st})
	hs.contains("disconnected · retrying in 3s")
	hs.contains("unexpected EOF")
	if !hs.m.needsTick() {
		t.Fatal("the countdown must tick")
	}
	hs.now = fixedNow.Add(2 * time.Second)
	hs.send(tickMsg{seq: hs.m.spin.seq})
	hs.contains("retrying in 1s")
	live := connState{Phase: sse.PhaseLive, Since: hs.now}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live})
	hs.contains("● live")
}

func TestTodosPanel(t *testing.T) {
	hs := attached(t, 80, 30)
	hs.events(events.Event{Kind: events.KindTodoUpdated, ID: "t1", Todos: []events.Todo{
		{ID: "1", Content: "write the lexer", Status: "completed"},
		{ID: "2", Content: "fix the parser", Status: "in_progress"},
	}})
	hs.key("ctrl+t")
	hs.contains("write the lexer")
	hs.contains("1/2")
	hs.key("ctrl+t")
	hs.lacks("write the lexer")
}

func TestCopySelected(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(assistant("a1", "copy me please"))
	hs.key("tab")
	hs.key("y")
	hs.contains("copied 1 line")
	found := false
	for _, m := range hs.other {
		if fmt.Sprintf("%T", m) == "tea.setClipboardMsg" && fmt.Sprint(m) == "copy me please" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no OSC 52 clipboard message: %#v", hs.other)
	}
}

func TestHelpAndBack(t *testing.T) {
	hs := attached(t, 100, 40)
	hs.key("tab")
	hs.key("?")
	hs.contains("next user turn")
	hs.contains("web search")
	hs.key("x") // any key closes
	hs.lacks("next user turn")
	hs.key("esc")
	if hs.m.mode != modeList {
		t.Fatal("esc in the transcript goes back to the task list")
	}
	if w := hs.ctl.watches[len(hs.ctl.watches)-1]; w.taskID != "" {
		t.Fatalf("leaving must end the task stream, got %+v", w)
	}
}

func TestDraftKeptPerTask(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.typ("unfinished thought")
	hs.key("esc") // to transcript
	hs.key("esc") // to the list
	hs.taskList(events.Task{ID: "task-1", Name: "fix the parser"})
	hs.key("enter")
	if hs.m.comp.value() != "unfinished thought" {
		t.Fatalf("draft lost: %q", hs.m.comp.value())
	}
}

func TestTaskListLiveFilterAttach(t *testing.T) {
	hs := newHarness(t, 80, 24, Config{})
	if hs.m.mode != modeList {
		t.Fatal("no task id: the list")
	}
	hs.contains("no tasks yet")
	tasks := []events.Task{
		{ID: "a-1", Name: "alpha: refactor the daemon client", Cwd: "/home/alice/alpha", Status: events.StatusGenerating, Model: "m1", Created: fixedNow.Add(-time.Hour)},
		{ID: "b-2", Name: "beta 🚀 宽字符 with a very long name that will certainly not fit on one line of eighty cells", Cwd: "/home/alice/beta", Status: events.StatusIdle, Created: fixedNow.Add(-2 * time.Hour),
			QueuedMessages: []events.QueuedMessage{{ID: "q"}}},
		{ID: "c-3", Name: "gamma", Cwd: "/srv/gamma", Status: events.StatusStopped, Created: fixedNow.Add(-72 * time.Hour)},
	}
	hs.taskList(tasks...)
	hs.contains("alpha: refactor")
	hs.contains("~/alpha")
	hs.contains("⧗1")
	hs.contains("3d")
	checkFrame(t, hs.m)
	// Live update: gamma starts.
	tasks[2].Status = events.StatusGenerating
	hs.taskList(tasks...)
	if tk, _ := hs.m.list.byID("c-3"); tk.Status != events.StatusGenerating || tk.Name != "gamma" {
		t.Fatalf("the new list lost fields: %+v", tk)
	}
	// A new task appears.
	hs.taskList(append([]events.Task{{ID: "d-4", Name: "delta", Status: events.StatusIdle, Created: fixedNow}}, tasks...)...)
	hs.contains("delta")
	// Filter, then attach.
	hs.key("/")
	hs.typ("beta")
	hs.lacks("alpha")
	hs.contains("beta")
	hs.key("enter")
	if hs.m.mode != modeTask || hs.m.task.ID != "b-2" {
		t.Fatalf("enter on a single match must attach, mode=%v task=%q", hs.m.mode, hs.m.task.ID)
	}
	if w := hs.ctl.watches[len(hs.ctl.watches)-1]; w.taskID != "b-2" {
		t.Fatalf("watch = %+v", w)
	}
	hs.key("esc")
	hs.key("esc")
	if hs.m.mode != modeList {
		t.Fatal("back to the list")
	}
	// Navigation with j/k and enter.
	hs.key("esc") // clear the filter
	hs.key("g")
	hs.key("j")
	hs.key("enter")
	if hs.m.task.ID != "a-1" {
		t.Fatalf("j then enter attached %q, want a-1 (second newest)", hs.m.task.ID)
	}
}

func TestNewTaskFlow(t *testing.T) {
	hs := newHarness(t, 80, 24, Config{Cwd: "/home/alice/proj"})
	hs.key("n")
	hs.contains("new task")
	hs.contains("/home/alice/proj")
	hs.typ("write a README")
	hs.b.createErr = errors.New("daemon unreachable")
	hs.key("enter")
	hs.contains("daemon unreachable")
	if hs.m.newTask.msg.value() != "write a README" {
		t.Fatal("a failed create must keep the text")
	}
	hs.key("esc")
	hs.key("n")
	if hs.m.newTask.msg.value() != "write a README" {
		t.Fatal("closing the form must keep the text")
	}
	hs.b.createErr = nil
	hs.b.createRes = events.Task{ID: "new-1", Name: "write a README", Cwd: "/home/alice/proj", Status: events.StatusGenerating}
	hs.key("enter")
	req := hs.b.creates[len(hs.b.creates)-1]
	if req.Cwd != "/home/alice/proj" || req.Prompt != "write a README" {
		t.Fatalf("create request %+v", req)
	}
	if hs.m.mode != modeTask || hs.m.task.ID != "new-1" {
		t.Fatal("a created task opens")
	}
}

func TestTinyTerminalsNeverPanic(t *testing.T) {
	for _, sz := range [][2]int{{10, 5}, {1, 1}, {0, 0}, {3, 2}, {20, 3}, {80, 24}, {15, 9}, {40, 12}} {
		hs := attached(t, sz[0], sz[1])
		hs.events(session(30)...)
		hs.events(runStart("r", fixedNow), queueSnap(events.QueuedMessage{ID: "q", Text: "queued"}))
		checkFrame(t, hs.m)
		for _, k := range []string{"tab", "k", "pgup", "[", "enter", "?", "x", "/", "a", "enter", "G", "t", "ctrl+x", "n", "esc"} {
			hs.key(k)
			checkFrame(t, hs.m)
		}
		hs.send(tea.WindowSizeMsg{Width: sz[0] / 2, Height: sz[1] / 2})
		checkFrame(t, hs.m)
		// and the list view
		hs.taskList(events.Task{ID: "x", Name: "a task with a long name"})
		hs.key("n")
		checkFrame(t, hs.m)
		hs.key("esc")
		checkFrame(t, hs.m)
	}
}

func TestThemeFromBackground(t *testing.T) {
	hs := newHarness(t, 80, 24, Config{Theme: "auto"})
	if hs.m.themeFixed {
		t.Fatal("auto must follow the terminal")
	}
	hs.send(tea.BackgroundColorMsg{Color: whiteColor{}})
	if hs.m.theme != themeLight {
		t.Fatal("a light background selects the light theme")
	}
	nc := newHarness(t, 80, 24, Config{Theme: "auto", Getenv: func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}})
	nc.send(tea.BackgroundColorMsg{Color: whiteColor{}})
	if nc.m.theme != themeNoColor {
		t.Fatal("NO_COLOR wins")
	}
}

type whiteColor struct{}

func (whiteColor) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }

func TestSpinnerTicksOnlyWhileAnimating(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.events(user("u", "hi"), assistant("a", "hello"))
	live := connState{Phase: sse.PhaseLive}
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live})
	if hs.m.needsTick() || hs.m.spin.ticking {
		t.Fatal("an idle session must not tick")
	}
	hs.events(runStart("r", fixedNow))
	if !hs.m.spin.ticking {
		t.Fatal("a generating run must tick")
	}
	hs.events(runEnd("r-end"))
	hs.send(tickMsg{seq: hs.m.spin.seq})
	if hs.m.spin.ticking {
		t.Fatal("the tick must stop once nothing animates")
	}
}
