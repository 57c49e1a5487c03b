package tui

import "testing"

// ctrl+c with text in the composer clears it (recoverable with ↑) even when
// the transcript has focus; it must never quit and drop what was typed.
func TestCtrlCFromTranscriptKeepsComposerText(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.typ("half a thought")
	hs.key("tab") // focus the transcript
	hs.key("ctrl+c")
	if hs.m.quitting {
		t.Fatal("ctrl+c quit with unsent text in the composer")
	}
	hs.key("tab")
	hs.key("up")
	if hs.m.comp.value() != "half a thought" {
		t.Fatalf("cleared text must come back with ↑, got %q", hs.m.comp.value())
	}
}
