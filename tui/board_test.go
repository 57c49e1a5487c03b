package tui

import (
	"fmt"
	"github.com/perch-tui/perch/events"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/notify"
)

// fakeBoard is a board.Model behind the UI's BoardSource: the test
// changes the model and sends boardUpdatedMsg, as the live board's
// Updated channel would.
type fakeBoard struct {
	m    *board.Model
	seen []rowKey
}

func (f *fakeBoard) Snapshot(fl board.Filter) ([]board.SourceState, []board.Row) {
	return f.m.Sources(), f.m.Rows(fl)
}
func (f *fakeBoard) Updated() <-chan struct{} { return nil }
func (f *fakeBoard) MarkSeen(src, id string) error {
	f.seen = append(f.seen, rowKey{src, id})
	f.m.MarkSeen(src, id)
	return nil
}

// threeSources is a board of a maria daemon, a Suna base and a pynchy
// server that went down: needs-you rows (a failed run, a reply not seen,
// an undeliverable message) and quiet ones.
func threeSources() *fakeBoard {
	m := board.NewModel([]board.SourceState{
		{Name: "local", System: "maria", URL: "http://127.0.0.1:8090/v1"},
		{Name: "work", System: "suna", URL: "https://suna.example.com/v1"},
		{Name: "home-chat", System: "pynchy", URL: "http://10.0.0.7:8080"},
	})
	for _, s := range m.Sources() {
		s.Conn = board.Live
		m.SetConn(s)
	}
	at := func(d time.Duration) time.Time { return fixedNow.Add(-d) }
	m.SetSessions("local", []board.Session{
		{ID: "a1b2c3d4-0001", Name: "Fix the parser at EOF", Status: board.Generating, Updated: at(20 * time.Minute), Queued: 2},
		{ID: "b2c3d4e5-0002", Name: "deploy to staging", Status: board.Generating, Updated: at(30 * time.Minute)},
		{ID: "c3d4e5f6-0003", Name: "Write the release notes for v2.3 — including the migration guide", Status: board.Idle, Updated: at(3 * time.Hour)},
	}, at(time.Hour))
	m.SetSessions("work", []board.Session{
		{ID: "thread-7f3a", Name: "release notes", Status: board.Generating, Updated: at(10 * time.Minute), Tokens: 48210, Cost: 0.42, HasCost: true},
		{ID: "thread-91bc", Name: "triage", Status: board.Idle, Updated: at(2 * time.Hour), Tokens: 1200},
	}, at(time.Hour))
	m.SetSessions("home-chat", []board.Session{
		{ID: "tui:main", Name: "main", Status: board.Idle, Updated: at(50 * time.Hour)},
	}, at(time.Hour))
	// Runs end: the deploy fails, the release notes reply, one more run
	// of the parser is going.
	m.SetSessions("local", []board.Session{
		{ID: "a1b2c3d4-0001", Name: "Fix the parser at EOF", Status: board.Generating, Updated: at(time.Minute), Queued: 2},
		{ID: "b2c3d4e5-0002", Name: "deploy to staging", Status: board.Failed, Updated: at(5 * time.Minute),
			LastReply: "provider error: deploy to staging"},
		{ID: "c3d4e5f6-0003", Name: "Write the release notes for v2.3 — including the migration guide", Status: board.Idle, Updated: at(3 * time.Hour)},
	}, at(5*time.Minute))
	m.SetSessions("work", []board.Session{
		{ID: "thread-7f3a", Name: "release notes", Status: board.Idle, Updated: at(2 * time.Minute), Tokens: 51877, Cost: 0.47, HasCost: true,
			LastReply: "Here is a draft of the release notes.\nIt covers the new board."},
		{ID: "thread-91bc", Name: "triage", Status: board.Idle, Updated: at(2 * time.Hour), Tokens: 1200},
	}, at(2*time.Minute))
	m.SetHeld("local", map[string]board.Held{"c3d4e5f6-0003": {Held: 1, Undeliverable: 1, Err: "task is gone"}}, at(time.Minute))
	m.SetConn(board.SourceState{Name: "home-chat", Conn: board.Down, RetryIn: 8 * time.Second, Since: fixedNow.Add(-3 * time.Second),
		Err: "dial tcp 10.0.0.7:8080: connection refused"})
	return &fakeBoard{m: m}
}

// boardHarness is the UI on fb, every source opened on its own fake
// backend.
func boardHarness(t *testing.T, w, h int, fb *fakeBoard) (*harness, map[string]*fakeBackend) {
	t.Helper()
	bes := map[string]*fakeBackend{"local": {}, "work": {name: client.Suna}, "home-chat": {name: client.Pynchy}}
	cfg := Config{Board: &Board{Live: fb, Notify: notify.Options{Kinds: notify.All},
		Open: func(src string) (client.Backend, *Outbox, bool) {
			b, ok := bes[src]
			return b, nil, ok
		}}}
	return newHarness(t, w, h, cfg), bes
}

func TestGoldenBoard(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			hs, _ := boardHarness(t, sz[0], sz[1], threeSources())
			hs.key("j")
			checkFrame(t, hs.m)
			golden.RequireEqual(t, hs.view())
		})
	}
}

func TestBoardNeedsYouFirstAndTitle(t *testing.T) {
	hs, _ := boardHarness(t, 120, 30, threeSources())
	rows := hs.m.board.rows
	var order []string
	for _, r := range rows {
		order = append(order, string(r.Reason)+":"+r.Name)
	}
	want := []string{"undeliverable:", "failed:deploy to staging", "reply:release notes"}
	for i, w := range want {
		if !strings.HasPrefix(order[i], w) {
			t.Fatalf("row %d is %q, want %q first; rows %q", i, order[i], w, order)
		}
	}
	if got := hs.m.View().WindowTitle; got != "perch (3 need you)" {
		t.Fatalf("window title %q", got)
	}
	if !hs.m.View().ReportFocus {
		t.Fatal("the board does not ask for focus reports")
	}
}

func TestBoardFilters(t *testing.T) {
	hs, _ := boardHarness(t, 120, 30, threeSources())
	hs.key("s") // needs you
	if n := len(hs.m.board.rows); n != 3 {
		t.Fatalf("needs-you filter shows %d rows, want 3", n)
	}
	hs.contains("only: needs you")
	hs.key("esc")
	hs.key("S") // the first source
	for _, r := range hs.m.board.rows {
		if r.Source != "local" {
			t.Fatalf("source filter shows %s's %s", r.Source, r.Name)
		}
	}
	hs.key("esc")
	hs.key("/")
	hs.typ("tria")
	if n := len(hs.m.board.rows); n != 1 || hs.m.board.rows[0].Name != "triage" {
		t.Fatalf("name filter shows %v", hs.m.board.rows)
	}
	hs.contains("/tria")
}

func TestBoardOpensThroughTheRowsSourceAndComesBack(t *testing.T) {
	fb := threeSources()
	hs, bes := boardHarness(t, 120, 30, fb)
	hs.key("j")
	hs.key("j") // release notes (work, suna)
	sel, _ := hs.m.board.selected()
	if sel.Name != "release notes" {
		t.Fatalf("selected %q", sel.Name)
	}
	off := hs.m.board.offset
	hs.key("enter")
	if hs.m.mode != modeTask || hs.m.task.ID != "thread-7f3a" {
		t.Fatalf("enter did not open the session: mode %v task %q", hs.m.mode, hs.m.task.ID)
	}
	if hs.m.b != bes["work"] {
		t.Fatal("the session was not opened through its source's backend")
	}
	if w := hs.ctl.watches[len(hs.ctl.watches)-1]; w.taskID != "thread-7f3a" {
		t.Fatalf("stream wish %+v", w)
	}
	if len(fb.seen) == 0 || fb.seen[0] != (rowKey{"work", "thread-7f3a"}) {
		t.Fatalf("opening did not mark the session seen: %v", fb.seen)
	}
	hs.key("esc") // the composer gives up focus
	if hs.m.mode == modeTask {
		hs.key("esc")
	}
	if hs.m.mode != modeList {
		t.Fatalf("esc did not come back to the board")
	}
	sel, _ = hs.m.board.selected()
	if sel.ID != "thread-7f3a" || hs.m.board.offset != off {
		t.Fatalf("back on the board the selection is %q (offset %d, was %d)", sel.Name, hs.m.board.offset, off)
	}
	hs.contains("release notes")
	// Seen: no unread mark, no reason any more.
	if sel.Unread != 0 || sel.Reason != board.None {
		t.Fatalf("the opened session still needs you: %+v", sel)
	}
}

// rawOut is the bytes the UI wrote to the terminal through tea.Raw.
func rawOut(hs *harness) string {
	var b strings.Builder
	for _, m := range hs.other {
		if r, ok := m.(tea.RawMsg); ok {
			b.WriteString(fmt.Sprint(r.Msg))
		}
	}
	hs.other = nil
	return b.String()
}

func TestBoardNotifiesOfSessionsNotOnScreen(t *testing.T) {
	fb := threeSources()
	hs, _ := boardHarness(t, 120, 30, fb)
	if out := rawOut(hs); out != "" {
		t.Fatalf("the starting board rang: %q", out)
	}
	// Open the parser session (local, generating).
	for i := 0; i < 10; i++ {
		if r, _ := hs.m.board.selected(); r.Name == "Fix the parser at EOF" {
			break
		}
		hs.key("j")
	}
	hs.key("enter")
	hs.send(tea.FocusMsg{})
	at := func(d time.Duration) time.Time { return fixedNow.Add(-d) }
	// The parser's run (on screen) ends, and so does triage's (work)
	// with a hostile name.
	fb.m.SetSessions("local", []board.Session{
		{ID: "a1b2c3d4-0001", Name: "Fix the parser at EOF", Status: board.Idle, Updated: fixedNow, Queued: 2},
		{ID: "b2c3d4e5-0002", Name: "deploy to staging", Status: board.Failed, Updated: at(5 * time.Minute)},
		{ID: "c3d4e5f6-0003", Name: "Write the release notes for v2.3 — including the migration guide", Status: board.Idle, Updated: at(3 * time.Hour)},
	}, fixedNow)
	fb.m.SetSessions("work", []board.Session{
		{ID: "thread-7f3a", Name: "release notes", Status: board.Idle, Updated: at(2 * time.Minute)},
		{ID: "thread-91bc", Name: "triage", Status: board.Generating, Updated: fixedNow},
	}, fixedNow)
	hs.send(boardUpdatedMsg{})
	fb.m.SetSessions("work", []board.Session{
		{ID: "thread-7f3a", Name: "release notes", Status: board.Idle, Updated: at(2 * time.Minute)},
		{ID: "thread-91bc", Name: "triage\x1b]0;pwned\a", Status: board.Idle, Updated: fixedNow, LastReply: "3 issues are open"},
	}, fixedNow)
	hs.send(boardUpdatedMsg{})
	out := rawOut(hs)
	want := notify.Bytes(notify.Notification{Title: "perch: triage (work)", Body: "a reply you have not seen: 3 issues are open"}, notify.Options{Kinds: notify.All})
	if out != string(want) {
		t.Fatalf("notification bytes %q, want %q", out, want)
	}
	for _, part := range []string{"\a", "\x1b]9;perch: triage (work)", "\x1b]777;notify;perch: triage (work);a reply"} {
		if !strings.Contains(out, part) {
			t.Fatalf("notification %q lacks %q", out, part)
		}
	}
	if strings.Contains(out, "parser") {
		t.Fatalf("the session on screen rang: %q", out)
	}
	if strings.Contains(out, "pwned") {
		t.Fatalf("a name's escape reached the terminal: %q", out)
	}
	// The session on screen is marked seen instead.
	if fb.seen[len(fb.seen)-1] != (rowKey{"local", "a1b2c3d4-0001"}) {
		t.Fatalf("the session on screen was not marked seen: %v", fb.seen)
	}

	// Without focus, the session on screen rings too.
	hs.send(tea.BlurMsg{})
	fb.m.SetSessions("local", []board.Session{
		{ID: "a1b2c3d4-0001", Name: "Fix the parser at EOF", Status: board.Generating, Updated: fixedNow},
		{ID: "b2c3d4e5-0002", Name: "deploy to staging", Status: board.Failed, Updated: at(5 * time.Minute)},
		{ID: "c3d4e5f6-0003", Name: "Write the release notes for v2.3 — including the migration guide", Status: board.Idle, Updated: at(3 * time.Hour)},
	}, fixedNow)
	hs.send(boardUpdatedMsg{})
	fb.m.SetSessions("local", []board.Session{
		{ID: "a1b2c3d4-0001", Name: "Fix the parser at EOF", Status: board.Failed, Updated: fixedNow.Add(time.Second)},
		{ID: "b2c3d4e5-0002", Name: "deploy to staging", Status: board.Failed, Updated: at(5 * time.Minute)},
		{ID: "c3d4e5f6-0003", Name: "Write the release notes for v2.3 — including the migration guide", Status: board.Idle, Updated: at(3 * time.Hour)},
	}, fixedNow.Add(time.Second))
	hs.send(boardUpdatedMsg{})
	if out := rawOut(hs); !strings.Contains(out, "\x1b]9;perch: Fix the parser at EOF (local): the run failed") {
		t.Fatalf("a blurred terminal was not told of the session on screen: %q", out)
	}
}

// The help on the board says the board's keys (its filters among them),
// not the single-source task list's.
func TestBoardHelp(t *testing.T) {
	hs, _ := boardHarness(t, 120, 40, threeSources())
	hs.key("?")
	seen := hs.view()
	for i := 0; i < 20 && strings.Contains(hs.view(), "↓ more below"); i++ {
		hs.key("down")
		seen += hs.view()
	}
	for _, want := range []string{"board", "filter by status", "filter by source", "clear the filters"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the board's help lacks %q:\n%s", want, seen)
		}
	}
	if strings.Contains(seen, "new task") {
		t.Errorf("the board's help offers n (new task), which the board does not do:\n%s", seen)
	}
}

// A paste while the board's filter is typed narrows the board.
func TestBoardFilterTakesAPaste(t *testing.T) {
	hs, _ := boardHarness(t, 120, 30, threeSources())
	hs.key("/")
	hs.send(tea.PasteMsg{Content: "deploy"})
	if got := hs.m.board.filter.Text; got != "deploy" {
		t.Fatalf("board filter %q after a paste", got)
	}
	if n := len(hs.m.board.rows); n != 1 {
		t.Fatalf("%d rows after filtering by a pasted name, want 1", n)
	}
}

// A run that ended before perch watched (read at start, once) sets the
// row's state without ringing: it is what the board found, not news.
func TestBoardPastRunEndIsNotRung(t *testing.T) {
	m := board.NewModel([]board.SourceState{{Name: "local", System: "maria", URL: "http://127.0.0.1:8090/v1"},
		{Name: "work", System: "suna", URL: "https://suna.example.com/v1"}})
	for _, s := range m.Sources() {
		s.Conn = board.Live
		m.SetConn(s)
	}
	m.SetSummarized("local")
	m.SetSeen(board.Marks{board.Key("http://127.0.0.1:8090/v1", "night-1"): fixedNow.Add(-10 * time.Hour)}, fixedNow)
	m.SetSessions("work", []board.Session{{ID: "t1", Name: "triage", Status: board.Idle, Updated: fixedNow.Add(-time.Hour)}}, fixedNow)
	fb := &fakeBoard{m: m}
	hs, _ := boardHarness(t, 120, 30, fb)
	m.SetSessions("local", []board.Session{{ID: "night-1", Name: "overnight refactor", Status: board.Idle, Updated: fixedNow.Add(-2 * time.Hour)}}, fixedNow)
	hs.send(boardUpdatedMsg{})
	m.TakeEnded("local")
	m.SetSummary("local", "night-1", events.RunSummary{End: events.RunEndFailed, Reason: "provider error"}, fixedNow)
	hs.send(boardUpdatedMsg{})
	hs.contains("overnight refactor")
	hs.contains("run failed")
	if out := rawOut(hs); out != "" {
		t.Fatalf("a run that ended before perch watched rang: %q", out)
	}
}
