package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// fakeIndex answers Config.Search from its hits, recording the queries.
type fakeIndex struct {
	hits    []SearchHit
	err     error
	queries []string
}

func (f *fakeIndex) search(_ context.Context, q string) ([]SearchHit, error) {
	f.queries = append(f.queries, q)
	return f.hits, f.err
}

func snip(parts ...string) []SnippetPart {
	var out []SnippetPart
	for i, p := range parts {
		out = append(out, SnippetPart{Text: p, Match: i%2 == 1})
	}
	return out
}

var findHits = []SearchHit{
	{Session: "aaaa1111-older", System: "codex", Title: "Tidy the build", At: fixedNow.Add(-48 * time.Hour), Role: "assistant",
		Snippet: snip("the ", "flaky", " test is gone")},
	{Session: "bbbb2222-newer", System: "claude-code", At: fixedNow.Add(-2 * time.Hour), Role: "tool", Tool: "Bash", Deleted: true,
		// Hostile: an escape that would clear the screen, a bidi override,
		// markup that must stay text.
		Snippet: snip("ran \x1b[2J\u202ego test ", "flaky", " <b>[red]x[/red]</b>")},
}

func findHarness(t *testing.T, ix *fakeIndex, cfg Config) *harness {
	t.Helper()
	cfg.Search = ix.search
	hs := newHarness(t, 100, 30, cfg)
	hs.taskList(events.Task{ID: "aaaa1111-older", Name: "Tidy the build", Created: fixedNow.Add(-72 * time.Hour)})
	return hs
}

func TestFindAllSearchesAndShowsHits(t *testing.T) {
	ix := &fakeIndex{hits: findHits}
	hs := findHarness(t, ix, Config{})
	hs.contains("ctrl+f search all")
	hs.key("ctrl+f")
	hs.contains("search all sessions")
	hs.typ("flak*")
	if len(ix.queries) != 0 {
		t.Fatalf("searched while typing: %q", ix.queries)
	}
	hs.key("enter")
	if len(ix.queries) != 1 || ix.queries[0] != "flak*" {
		t.Fatalf("queries %q", ix.queries)
	}
	v := hs.view()
	// Newest first, whatever order the index gave.
	if i, j := strings.Index(v, "bbbb2222"), strings.Index(v, "Tidy the build"); i < 0 || j < 0 || i > j {
		t.Fatalf("hits not newest first:\n%s", v)
	}
	hs.contains("2 hits, newest first")
	hs.contains("(source deleted)")
	hs.contains("tool Bash")
	raw := hs.m.View().Content
	if strings.Contains(raw, "\x1b[2J") || strings.Contains(raw, "\u202e") {
		t.Fatalf("hostile text reached the screen: %q", raw)
	}
	hs.contains("<b>[red]x[/red]</b>") // markup shown as the text it is
	// The match is styled as the match style renders it.
	if want := hs.m.ch.Match.Render("flaky"); !strings.Contains(raw, want) {
		t.Fatalf("the match is not highlighted: %q", raw)
	}
	checkFrame(t, hs.m)
	// esc closes; the list is back.
	hs.key("esc")
	hs.lacks("search all sessions")
	hs.contains("Tidy the build")
}

func TestFindAllSaysHowToFillAnEmptyIndex(t *testing.T) {
	hs := newHarness(t, 80, 24, Config{Search: (&fakeIndex{err: ErrNoIndex}).search})
	hs.taskList(events.Task{ID: "t1", Name: "one"})
	hs.key("ctrl+f")
	hs.typ("anything")
	hs.key("enter")
	checkFrame(t, hs.m)
	// Whole at 80 columns.
	hs.contains("run perch index")
	hs.contains("search again")
}

func TestFindAllNewerQuerySupersedes(t *testing.T) {
	ix := &fakeIndex{hits: findHits}
	hs := findHarness(t, ix, Config{})
	hs.key("ctrl+f")
	hs.typ("old")
	_, first := hs.m.Update(keyMsg("enter")) // its answer is held back
	hs.key("backspace")
	hs.typ("ld new")
	ix.hits = findHits[:1]
	hs.key("enter")
	hs.run(first) // the older search answers last
	if got := len(hs.m.find.hits); got != 1 {
		t.Fatalf("%d hits: the older search's answer replaced the newer one's", got)
	}
}

func TestFindAllEnterAttachesAListedSessionAndSelectsTheHit(t *testing.T) {
	hs := findHarness(t, &fakeIndex{hits: findHits}, Config{})
	hs.key("ctrl+f")
	hs.typ("flaky")
	hs.key("enter")
	hs.key("j") // the older hit: a session the list holds
	hs.key("enter")
	if hs.m.mode != modeTask || hs.m.task.ID != "aaaa1111-older" {
		t.Fatalf("mode %v task %q", hs.m.mode, hs.m.task.ID)
	}
	if w := hs.ctl.watches; len(w) == 0 || w[len(w)-1].taskID != "aaaa1111-older" {
		t.Fatalf("watches %+v", w)
	}
	at := findHits[0].At
	var evs []events.Event
	for i := range 30 {
		ev := assistant("a"+itoa(i), "line "+itoa(i))
		ev.Created = at.Add(time.Duration(i-20) * time.Minute)
		if i == 5 || i == 20 || i == 25 {
			ev.Text = "the flaky test, again"
		}
		evs = append(evs, ev)
	}
	hs.events(evs...)
	// The match at the hit's time (item 20), not the first nor the last.
	if it := hs.m.tl.At(hs.m.tr.sel); hs.m.tr.sel < 0 || it.ID != "a20" {
		t.Fatalf("selected item %d, want a20", hs.m.tr.sel)
	}
	if hs.m.search.query != "flaky" {
		t.Fatalf("transcript search %q", hs.m.search.query)
	}
}

func TestFindAllOpensAnUnknownSessionFromTheIndex(t *testing.T) {
	rec := client.Capabilities{Recording: true}
	file := &fakeBackend{name: "claude-code", caps: &rec}
	closed := 0
	var opened []string
	cfg := Config{OpenIndexed: func(_ context.Context, id string) (IndexedSession, error) {
		opened = append(opened, id)
		return IndexedSession{Backend: file, TaskID: id, Close: func() { closed++ }}, nil
	}}
	hs := findHarness(t, &fakeIndex{hits: findHits}, cfg)
	home := hs.m.b
	hs.key("ctrl+f")
	hs.typ("flaky")
	hs.key("enter")
	hs.key("enter") // the newest: a session of no list
	if len(opened) != 1 || opened[0] != "bbbb2222-newer" {
		t.Fatalf("opened %q", opened)
	}
	if hs.m.mode != modeTask || hs.m.b != file || !hs.m.caps.Replay || hs.m.caps.Send {
		t.Fatalf("mode %v, backend %v, caps %+v", hs.m.mode, hs.m.b.Name(), hs.m.caps)
	}
	hs.events(user("u1", "run the tests"), assistant("a1", "the flaky test fails once in ten"))
	if hs.m.tr.sel < 0 || hs.m.tl.At(hs.m.tr.sel).ID != "a1" {
		t.Fatalf("selected %d", hs.m.tr.sel)
	}
	hs.contains("replay of")
	// Leaving goes back to the list through the backend it had, and
	// closes the replay.
	hs.run(hs.m.detach())
	if hs.m.b != home || closed != 1 || hs.m.replay != nil {
		t.Fatalf("backend %v, closed %d", hs.m.b.Name(), closed)
	}
	hs.contains("Tidy the build")
	// The replayed session did not join the list: its backend is gone.
	if _, ok := hs.m.list.byID("bbbb2222-newer"); ok {
		t.Fatal("the replayed session is in the list")
	}
}

func TestFindAllOpenFailureIsSaid(t *testing.T) {
	cfg := Config{OpenIndexed: func(context.Context, string) (IndexedSession, error) {
		return IndexedSession{}, errors.New("session bbbb2222 is a live session of http://x: open it with perch attach")
	}}
	hs := findHarness(t, &fakeIndex{hits: findHits}, cfg)
	hs.key("ctrl+f")
	hs.typ("flaky")
	hs.key("enter")
	hs.key("enter")
	if hs.m.mode != modeList {
		t.Fatal("opened a session that failed to open")
	}
	hs.contains("perch attach")
}

func TestFindAllKeyRemap(t *testing.T) {
	hs := findHarness(t, &fakeIndex{hits: findHits}, Config{Keys: map[string][]string{"find_all": {"alt+f"}}})
	hs.contains("alt+f search all")
	hs.key("ctrl+f")
	hs.lacks("search all sessions")
	hs.key("alt+f")
	hs.contains("search all sessions")
	hs.key("esc")
	hs.key("?")
	hs.contains("alt+f")
}

// No index to search (Config.Search nil): no key, no hint.
func TestFindAllOffWithoutSearch(t *testing.T) {
	hs := newHarness(t, 100, 30, Config{})
	hs.taskList(events.Task{ID: "t1", Name: "one"})
	hs.lacks("search all")
	hs.key("ctrl+f")
	hs.lacks("search all sessions")
}

func TestGoldenFindAllAt80x24(t *testing.T) {
	hs := newHarness(t, 80, 24, Config{Search: (&fakeIndex{hits: findHits}).search})
	hs.taskList(events.Task{ID: "aaaa1111-older", Name: "Tidy the build"})
	hs.key("ctrl+f")
	hs.typ("flaky")
	hs.key("enter")
	checkFrame(t, hs.m)
	golden.RequireEqual(t, hs.view())
}

// On the board, a hit opens through its session's own source, also when
// the board's filter hides its row.
func TestFindAllOnTheBoardOpensThroughTheSource(t *testing.T) {
	hs, bes := boardHarness(t, 100, 30, threeSources())
	hs.m.cfg.Search = (&fakeIndex{hits: []SearchHit{{Session: "thread-91bc", System: "suna", At: fixedNow,
		Role: "assistant", Snippet: snip("the ", "triage", " is done")}}}).search
	hs.key("/")
	hs.typ("release")
	hs.key("enter")
	hs.lacks("triage")
	hs.key("ctrl+f")
	hs.typ("triage")
	hs.key("enter")
	hs.key("enter")
	if hs.m.mode != modeTask || hs.m.task.ID != "thread-91bc" || hs.m.b != bes["work"] || hs.m.replay != nil {
		t.Fatalf("mode %v task %q backend %s", hs.m.mode, hs.m.task.ID, hs.m.b.Name())
	}
	u := user("u1", "triage the inbox")
	u.Created = fixedNow.Add(-3 * time.Hour)
	hs.events(u, assistant("a1", "the triage is done"))
	if hs.m.tr.sel < 0 || hs.m.tl.At(hs.m.tr.sel).ID != "a1" {
		t.Fatalf("selected %d", hs.m.tr.sel)
	}
}

// Every size draws a whole frame, the selection in view.
func TestFindAllFramesAtEverySize(t *testing.T) {
	var many []SearchHit
	for i := range 40 {
		h := findHits[i%2]
		h.At = fixedNow.Add(-time.Duration(i) * time.Minute)
		many = append(many, h)
	}
	for _, sz := range [][2]int{{1, 1}, {10, 2}, {20, 3}, {40, 5}, {80, 24}} {
		hs := newHarness(t, sz[0], sz[1], Config{Search: (&fakeIndex{hits: many}).search})
		hs.taskList(events.Task{ID: "t1", Name: "one"})
		hs.key("ctrl+f")
		hs.typ("flaky")
		hs.key("enter")
		for range 30 {
			hs.key("j")
			checkFrame(t, hs.m)
		}
		if sz[1] == 24 && !strings.Contains(hs.view(), "2026-03-27 09:30") { // the 31st hit
			t.Fatalf("the selection is out of view:\n%s", hs.view())
		}
	}
}

// From one replay to another: the rule names the file shown now, not the
// one shown before (its memo is keyed on the note).
func TestFindAllReplayFromAReplayNamesItsFile(t *testing.T) {
	rec := client.Capabilities{Recording: true}
	file := &fakeBackend{name: "claude-code", caps: &rec}
	cfg := Config{TaskID: "aaaa1111-older", Search: (&fakeIndex{hits: findHits}).search,
		OpenIndexed: func(_ context.Context, id string) (IndexedSession, error) {
			return IndexedSession{Backend: file, TaskID: id}, nil
		}}
	hs := newHarnessOn(t, 100, 30, cfg, &fakeBackend{name: "codex", caps: &rec})
	hs.taskList(events.Task{ID: "aaaa1111-older", Name: "Tidy the build"})
	hs.events(assistant("a1", "done"))
	hs.contains("(codex) — read-only")
	hs.key("esc")
	hs.key("ctrl+f")
	hs.typ("flaky")
	hs.key("enter")
	hs.key("enter")
	hs.contains("(claude-code) — read-only")
}
