package board

import (
	"fmt"
	"github.com/perch-tui/perch/events"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func newTestModel() *Model {
	m := NewModel([]SourceState{{Name: "m", URL: "http://m"}, {Name: "s", URL: "http://s"}, {Name: "p", URL: "http://p"}})
	for _, n := range []string{"m", "s", "p"} {
		m.SetConn(SourceState{Name: n, Conn: Live})
	}
	return m
}

func changeLines(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s/%s %s→%s %s\n", c.Source, c.Session, c.Old, c.New, c.Reason)
	}
	return b.String()
}

func rowLines(rs []Row) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s/%s %s %s unread=%d held=%d\n", r.Source, r.ID, r.Status, r.Reason, r.Unread, r.Held)
	}
	return b.String()
}

// The board's story of one source over time: what it reports as changes
// (each once) and how it orders what needs the user.
func TestModelChangesAndReasons(t *testing.T) {
	type step struct {
		name    string
		do      func(m *Model) []Change
		changes string
		rows    string // "" skips the check
	}
	list := func(src string, ss ...Session) func(m *Model) []Change {
		return func(m *Model) []Change { return m.SetSessions(src, ss, at(100)) }
	}
	steps := []step{
		{"the first list is the starting point, not a change", list("m",
			Session{ID: "a", Status: Generating, Updated: at(1)},
			Session{ID: "b", Status: Idle, Updated: at(2)},
			Session{ID: "c", Status: Idle, Updated: at(3)}),
			"", "m/a generating  unread=0 held=0\nm/c idle  unread=0 held=0\nm/b idle  unread=0 held=0\n"},
		{"the same list again (a reconnect) changes nothing", list("m",
			Session{ID: "a", Status: Generating, Updated: at(1)},
			Session{ID: "b", Status: Idle, Updated: at(2)},
			Session{ID: "c", Status: Idle, Updated: at(3)}),
			"", ""},
		{"a run ends: a reply not seen, first", list("m",
			Session{ID: "a", Status: Idle, Updated: at(10)},
			Session{ID: "b", Status: Idle, Updated: at(2)},
			Session{ID: "c", Status: Generating, Updated: at(11)}),
			"m/a generating→idle reply\nm/c idle→generating \n",
			"m/a idle reply unread=1 held=0\nm/c generating  unread=0 held=0\nm/b idle  unread=0 held=0\n"},
		{"a run fails: more urgent than a reply", list("m",
			Session{ID: "a", Status: Idle, Updated: at(10)},
			Session{ID: "b", Status: Idle, Updated: at(2)},
			Session{ID: "c", Status: Failed, Updated: at(12)}),
			"m/c generating→failed failed\n",
			"m/c failed failed unread=1 held=0\nm/a idle reply unread=1 held=0\nm/b idle  unread=0 held=0\n"},
		{"a held message refused: the most urgent", func(m *Model) []Change {
			return m.SetHeld("m", map[string]Held{"b": {Undeliverable: 1, Err: "task deleted\x1b[2J"}}, at(100))
		}, "m/b idle→idle undeliverable\n",
			"m/b idle undeliverable unread=0 held=1\nm/c failed failed unread=1 held=0\nm/a idle reply unread=1 held=0\n"},
		{"a paused queue with messages", func(m *Model) []Change {
			return m.SetHeld("m", map[string]Held{"b": {Held: 2, Paused: true}}, at(100))
		}, "m/b idle→idle paused\n",
			"m/c failed failed unread=1 held=0\nm/a idle reply unread=1 held=0\nm/b idle paused unread=0 held=2\n"},
		{"two more runs of a: unread counts them", func(m *Model) []Change {
			var cs []Change
			for i, st := range []Status{Generating, Idle, Generating, Idle} {
				cs = append(cs, m.SetSessions("m", []Session{
					{ID: "a", Status: st, Updated: at(20 + i)},
					{ID: "b", Status: Idle, Updated: at(2)},
					{ID: "c", Status: Failed, Updated: at(12)}}, at(100))...)
			}
			return cs
		}, "m/a idle→generating \nm/a generating→idle reply\nm/a idle→generating \nm/a generating→idle reply\n",
			"m/c failed failed unread=1 held=0\nm/a idle reply unread=3 held=0\nm/b idle paused unread=0 held=2\n"},
		{"seen: a's reason goes", func(m *Model) []Change {
			m.MarkSeen("m", "a")
			return m.SetSeen(nil, at(100))
		}, "m/a idle→idle \n",
			"m/c failed failed unread=1 held=0\nm/b idle paused unread=0 held=2\nm/a idle  unread=0 held=0\n"},
		{"a session goes away", list("m",
			Session{ID: "a", Status: Idle, Updated: at(23)},
			Session{ID: "c", Status: Failed, Updated: at(12)}),
			"m/b idle→gone \n", ""},
		{"a new session is a change", list("m",
			Session{ID: "a", Status: Idle, Updated: at(23)},
			Session{ID: "c", Status: Failed, Updated: at(12)},
			Session{ID: "d", Status: Generating, Updated: at(30)}),
			"m/d →generating \n", ""},
		{"the source goes down: its rows say disconnected, no change", func(m *Model) []Change {
			m.SetConn(SourceState{Name: "m", Conn: Retrying, RetryIn: 2 * time.Second})
			return nil
		}, "", "m/c disconnected failed unread=1 held=0\nm/d disconnected  unread=0 held=0\nm/a disconnected  unread=0 held=0\n"},
		{"back with what happened meanwhile: only that", func(m *Model) []Change {
			m.SetConn(SourceState{Name: "m", Conn: Live})
			return m.SetSessions("m", []Session{
				{ID: "a", Status: Idle, Updated: at(23)},
				{ID: "c", Status: Failed, Updated: at(12)},
				{ID: "d", Status: Idle, Updated: at(40)}}, at(100))
		}, "m/d generating→idle reply\n", ""},
	}
	m := newTestModel()
	for _, s := range steps {
		got := changeLines(s.do(m))
		if got != s.changes {
			t.Fatalf("%s: changes\n%s\nwant\n%s", s.name, got, s.changes)
		}
		if s.rows != "" {
			if got := rowLines(m.Rows(Filter{})); got != s.rows {
				t.Fatalf("%s: rows\n%s\nwant\n%s", s.name, got, s.rows)
			}
		}
	}
	if n := m.NeedsYou(); n != 2 {
		t.Errorf("NeedsYou = %d, want 2 (c failed, d replied)", n)
	}
}

func TestModelOrderAcrossSourcesAndFilters(t *testing.T) {
	m := newTestModel()
	m.SetSessions("m", []Session{{ID: "m1", Name: "build", Status: Generating, Updated: at(1)}, {ID: "m2", Name: "docs", Status: Idle, Updated: at(1)}}, at(0))
	m.SetSessions("s", []Session{{ID: "s1", Name: "Build site", Status: Generating, Updated: at(1)}}, at(0))
	m.SetSessions("p", []Session{{ID: "p1", Name: "chat", Status: Idle, Updated: at(1)}}, at(0))
	m.SetSessions("s", []Session{{ID: "s1", Name: "Build site", Status: Idle, Updated: at(5)}}, at(0))
	m.SetSessions("m", []Session{{ID: "m1", Name: "build", Status: Failed, Updated: at(4)}, {ID: "m2", Name: "docs", Status: Idle, Updated: at(1)}}, at(0))
	cases := []struct {
		f    Filter
		want string
	}{
		{Filter{}, "m/m1 failed failed unread=1 held=0\ns/s1 idle reply unread=1 held=0\nm/m2 idle  unread=0 held=0\np/p1 idle  unread=0 held=0\n"},
		{Filter{Source: "s"}, "s/s1 idle reply unread=1 held=0\n"},
		{Filter{Status: Idle}, "s/s1 idle reply unread=1 held=0\nm/m2 idle  unread=0 held=0\np/p1 idle  unread=0 held=0\n"},
		{Filter{Text: "BUILD"}, "m/m1 failed failed unread=1 held=0\ns/s1 idle reply unread=1 held=0\n"},
		{Filter{Text: "p1"}, "p/p1 idle  unread=0 held=0\n"},
		{Filter{NeedsYou: true}, "m/m1 failed failed unread=1 held=0\ns/s1 idle reply unread=1 held=0\n"},
	}
	for _, c := range cases {
		if got := rowLines(m.Rows(c.f)); got != c.want {
			t.Errorf("Rows(%+v):\n%s\nwant\n%s", c.f, got, c.want)
		}
	}
}

// Untrusted names and replies reach a row sanitized and bounded.
func TestModelSanitizes(t *testing.T) {
	m := newTestModel()
	name := "evil\x1b]0;pwned\a\u202eeman\n" + strings.Repeat("x", 10<<10)
	m.SetSessions("m", []Session{{ID: "a", Name: name, Status: Idle, LastReply: "\n\n  Done\x1b[31m: all green\r\nsecond line"}}, at(0))
	r := m.Rows(Filter{})[0]
	if strings.ContainsAny(r.Name, "\x1b\a\u202e\n") || len([]rune(r.Name)) > MaxName {
		t.Errorf("name %q", r.Name)
	}
	if !strings.HasPrefix(r.Name, "evileman⏎xxx") {
		t.Errorf("name %q", r.Name[:20])
	}
	if r.LastReply != "Done: all green" {
		t.Errorf("last reply %q", r.LastReply)
	}
	m.SetConn(SourceState{Name: "s", Conn: Down, Err: "bad\x1b[2J" + strings.Repeat("y", 5000)})
	if e := m.Sources()[1].Err; strings.Contains(e, "\x1b") || len([]rune(e)) > MaxError {
		t.Errorf("source error %q", e)
	}
}

// Unread survives a restart: the marks are kept in a file, and a session
// that ran while perch was not looking is unread at the next start.
func TestSeenSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	seen := OpenSeen(SeenFile(dir))
	m := newTestModel()
	m.SetSessions("m", []Session{{ID: "a", Status: Generating, Updated: at(1)}, {ID: "b", Status: Idle, Updated: at(1)}}, at(0))
	if _, err := seen.Save(m.TakeBaseline()); err != nil {
		t.Fatal(err)
	}
	m.SetSessions("m", []Session{{ID: "a", Status: Idle, Updated: at(5)}, {ID: "b", Status: Idle, Updated: at(1)}}, at(0))

	// Another perch, started now, reads the marks.
	marks, err := OpenSeen(SeenFile(dir)).Load()
	if err != nil {
		t.Fatal(err)
	}
	m2 := newTestModel()
	m2.SetSeen(marks, at(0))
	m2.SetSessions("m", []Session{{ID: "a", Status: Idle, Updated: at(5)}, {ID: "b", Status: Idle, Updated: at(1)}}, at(0))
	if got, want := rowLines(m2.Rows(Filter{})), "m/a idle reply unread=1 held=0\nm/b idle  unread=0 held=0\n"; got != want {
		t.Fatalf("after restart:\n%s\nwant\n%s", got, want)
	}
	// The user looks at a in the second perch; the first one agrees once
	// it reads the file again.
	key, mark, _ := m2.MarkSeen("m", "a")
	other := OpenSeen(SeenFile(dir))
	if _, err := other.Save(Marks{key: mark}); err != nil {
		t.Fatal(err)
	}
	if !seen.Changed() {
		t.Fatal("the first perch does not see the file changed")
	}
	marks, _ = seen.Load()
	if got := changeLines(m.SetSeen(marks, at(0))); got != "m/a idle→idle \n" {
		t.Errorf("first perch after the mark: %q", got)
	}
	if seen.Changed() {
		t.Error("Changed after Load")
	}
}

// Two perch processes saving marks at once lose none (marks only move
// forward, and each save is merged with the file).
func TestSeenConcurrentSaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "seen.json")
	done := make(chan error)
	for w := 0; w < 2; w++ {
		go func() {
			s := OpenSeen(path)
			for i := 0; i < 20; i++ {
				if _, err := s.Save(Marks{Key("u", fmt.Sprintf("w%d-%d", w, i)): at(i)}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	marks, _ := OpenSeen(path).Load()
	if len(marks) != 40 {
		t.Errorf("%d marks, want 40", len(marks))
	}
}

// A session that ran while perch was not watching (its activity is newer
// than the user's seen mark) is summarized once when the board first
// lists it: a run that failed overnight shows failed with its reason, and
// that is the state the board found, not a change it reports.
func TestRunThatEndedBeforeTheBoardIsSummarizedNotReported(t *testing.T) {
	m := newTestModel()
	m.SetSummarized("m")
	m.SetSeen(Marks{Key("http://m", "a"): at(1), Key("http://m", "b"): at(5)}, at(10))
	if cs := m.SetSessions("m", []Session{{ID: "a", Status: Idle, Updated: at(5)}, {ID: "b", Status: Idle, Updated: at(5)}}, at(10)); len(cs) != 0 {
		t.Fatalf("the first list reported changes:\n%s", changeLines(cs))
	}
	ended := m.TakeEnded("m")
	if len(ended) != 1 || ended[0] != "a" {
		t.Fatalf("summaries asked for %q, want only a (b was seen since it ran)", ended)
	}
	if r := m.Rows(Filter{}); !r[0].Settling && !r[1].Settling {
		t.Fatalf("no row settling while its summary is read:\n%s", rowLines(r))
	}
	cs := m.SetSummary("m", "a", events.RunSummary{End: events.RunEndFailed, Reason: "provider error"}, at(11))
	if len(cs) != 0 {
		t.Fatalf("a past run's end was reported as a change:\n%s", changeLines(cs))
	}
	rows := m.Rows(Filter{})
	if got := rowLines(rows[:1]); got != "m/a failed failed unread=1 held=0\n" || rows[0].Detail != "provider error" || rows[0].Settling {
		t.Fatalf("row after the summary: %s (detail %q, settling %v)", got, rows[0].Detail, rows[0].Settling)
	}
}
