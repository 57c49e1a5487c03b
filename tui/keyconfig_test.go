package tui

import "testing"

func TestCheckKey(t *testing.T) {
	for _, ok := range []string{"a", "K", "?", "+", "ctrl++", "ctrl+x", "ctrl+alt+x", "shift+tab", "pgdown", "f5", "space", "alt+enter"} {
		if err := CheckKey(ok); err != nil {
			t.Errorf("CheckKey(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ctl+x", "alt+ctrl+x", "pagedown", "f99", "ctrl+", "two words"} {
		if CheckKey(bad) == nil {
			t.Errorf("CheckKey(%q) passed", bad)
		}
	}
	for _, name := range []string{"cancel_run", "hold", "held_release", "quit"} {
		found := false
		for _, a := range KeyActions() {
			found = found || a == name
		}
		if !found {
			t.Errorf("KeyActions lacks %s", name)
		}
	}
}

// A [keys] override from the config file takes the action's keys: the new
// key does what the old one did, and the old one no longer does.
func TestKeyOverridesApply(t *testing.T) {
	hs := newHarness(t, 100, 40, Config{TaskID: "task-1", Keys: map[string][]string{"help": {"F"}}})
	hs.key("tab")
	hs.key("?") // unbound now: typed into the composer
	hs.lacks("next user turn")
	hs.key("esc")
	hs.key("F")
	hs.contains("next user turn")
}

// A remapped newline is the composer's newline: the new key breaks the
// line, and the old one no longer does.
func TestNewlineRemapReachesTheComposer(t *testing.T) {
	hs := newHarness(t, 100, 40, Config{TaskID: "task-1", Keys: map[string][]string{"newline": {"ctrl+n"}}})
	hs.typ("one")
	hs.key("ctrl+n")
	hs.typ("two")
	hs.key("ctrl+j")
	if got := hs.m.comp.value(); got != "one\ntwo" {
		t.Fatalf("composer %q, want one\\ntwo", got)
	}
}
