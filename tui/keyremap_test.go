package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

// perch's own keys never clash.
func TestDefaultKeysDoNotConflict(t *testing.T) {
	if err := KeyConflicts(nil); err != nil {
		t.Fatal(err)
	}
}

func TestKeyConflictsNameBothActions(t *testing.T) {
	for _, tc := range []struct {
		over map[string][]string
		want string // "" for no conflict
	}{
		{map[string][]string{"hold": {"ctrl+x"}}, `"ctrl+x" would be both hold and cancel_run (composer)`},
		{map[string][]string{"cancel_run": {"ctrl+g"}}, `"ctrl+g" would be both cancel_run and hold (composer)`},
		{map[string][]string{"next_error": {"y"}}, `"y" would be both next_error and copy (transcript)`},
		{map[string][]string{"refresh": {"s"}}, `"s" would be both refresh and board_status (task list and board)`},
		{map[string][]string{"hold": {"ctrl+b"}, "cancel_run": {"ctrl+g"}}, ""}, // swapped: no clash
		{map[string][]string{"hold": {"j"}}, ""},                                // j is the transcript's, not the composer's
	} {
		err := KeyConflicts(tc.over)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.over, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want+"; give one of them another key"):
			t.Errorf("%v: %v, want %q", tc.over, err, tc.want)
		}
	}
}

// Every action bound to another key (alt+f1, alt+f2, … one each): every
// hint of every screen, the composer's rule and its placeholder name the
// keys in force, never perch's defaults.
func TestRemappedKeysInEveryHint(t *testing.T) {
	over := map[string][]string{}
	for i, a := range KeyActions() {
		over[a] = []string{fmt.Sprintf("alt+f%d", i+1)}
	}
	if err := KeyConflicts(over); err != nil {
		t.Fatal(err)
	}
	remapped := regexp.MustCompile(`^alt\+f\d+(/alt\+f\d+)?$`)
	newAttached := func(t *testing.T) *harness {
		hs := newHarness(t, 160, 40, Config{TaskID: "task-1", Keys: over, Outbox: &Outbox{Store: outbox.NewMemStore()}})
		live := connState{Phase: sse.PhaseLive, Since: fixedNow}
		hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, State: &live})
		return hs
	}
	states := []struct {
		name string
		hs   func(t *testing.T) *harness
	}{
		{"task list", func(t *testing.T) *harness {
			hs := newHarness(t, 160, 40, Config{Keys: over})
			hs.taskList(events.Task{ID: "task-1", Name: "one"})
			return hs
		}},
		{"task list with an index", func(t *testing.T) *harness {
			hs := newHarness(t, 160, 40, Config{Keys: over, Search: (&fakeIndex{}).search})
			hs.taskList(events.Task{ID: "task-1", Name: "one"})
			return hs
		}},
		{"search all sessions, hits", func(t *testing.T) *harness {
			hs := newHarness(t, 160, 40, Config{Keys: over, Search: (&fakeIndex{hits: findHits}).search})
			hs.taskList(events.Task{ID: "task-1", Name: "one"})
			hs.run(hs.m.openFind()) // keyMsg spells no f13
			hs.typ("flaky")
			hs.key("enter")
			if !hs.m.find.results {
				t.Fatal("the search's hits are not shown")
			}
			return hs
		}},
		{"composer, idle", newAttached},
		{"composer, busy", func(t *testing.T) *harness {
			hs := newAttached(t)
			hs.events(user("u1", "go"), runStart("r1", fixedNow))
			return hs
		}},
		{"transcript", func(t *testing.T) *harness {
			hs := newAttached(t)
			hs.events(user("u1", "go"), assistant("a1", "done"))
			hs.m.focus = focusTranscript
			hs.m.search.query = "done"
			return hs
		}},
		{"held panel", func(t *testing.T) *harness {
			hs := newAttached(t)
			hs.m.focus = focusHeld
			return hs
		}},
	}
	// fixed are hint keys that are no action's (an overlay's esc, as the
	// filter's and the transcript search's).
	fixed := map[string][]string{"search all sessions, hits": {"type", "esc"}}
	defaults := []string{"enter", "ctrl+g", "ctrl+x", "shift+tab", "tab", "esc", "f1", "j/k", "[/]", "ctrl+s", "ctrl+o"}
	for _, st := range states {
		t.Run(st.name, func(t *testing.T) {
			hs := st.hs(t)
			for _, h := range hs.m.keyHints() {
				if !remapped.MatchString(h.Key) && !slices.Contains(fixed[st.name], h.Key) {
					t.Errorf("hint %q %q names a default key", h.Key, h.Desc)
				}
			}
			if hs.m.mode != modeTask {
				return
			}
			for what, text := range map[string]string{"rule": ansi.Strip(hs.m.composerRule()), "placeholder": hs.m.placeholder()} {
				for _, d := range defaults {
					if strings.Contains(text, " "+d+" ") || strings.Contains(text, " "+d+":") || strings.Contains(text, "("+d+" ") {
						t.Errorf("%s names the default key %q: %q", what, d, text)
					}
				}
			}
		})
	}
	// The empty list's word names the new-task key in force.
	empty := newHarness(t, 160, 40, Config{Keys: over})
	empty.taskList()
	empty.contains("press " + over["new_task"][0] + " to start one")

	hs := newAttached(t)
	hs.events(user("u1", "go"), runStart("r1", fixedNow))
	hs.m.overlay = ovConfirmCancel
	line, _ := hs.m.hintsLine()
	if l := ansi.Strip(line); !strings.Contains(l, over["yes"][0]+" yes") || !strings.Contains(l, over["no"][0]+" no") {
		t.Errorf("the cancel prompt: %q", l)
	}
}
