package tui

import "testing"

// A letter the held list has no action for does not type into the draft
// behind it: the panel says what it does not do, and what does.
func TestHeldListIgnoresUnboundLetters(t *testing.T) {
	hs := attached(t, 100, 30)
	hs.live()
	hs.events(user("u0", "go"), runStart("r1", fixedNow))
	hs.typ("held one")
	hs.key("ctrl+g")
	hs.typ("my draft")
	hs.key("shift+tab")
	if hs.m.focus != focusHeld {
		t.Fatal("shift+tab must focus the held panel")
	}
	hs.key("x")
	if hs.m.focus != focusHeld || hs.m.comp.value() != "my draft" {
		t.Fatalf("x: focus %v, draft %q", hs.m.focus, hs.m.comp.value())
	}
	hs.contains("x does nothing in the held list")
}
