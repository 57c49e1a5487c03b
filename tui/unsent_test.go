package tui

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Quitting never loses typed text: the composer, failed sends and drafts
// of other tasks are handed back when the program ends.
func TestUnsentHandedBackAtExit(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.b.sendErr = errors.New("connection refused")
	hs.typ("failed words")
	hs.key("enter")
	hs.typ("still typing \x1b[2Jhere")
	hs.m.drafts["other-task-id"] = "a draft elsewhere"
	// q from the transcript quits even with text in the composer…
	hs.key("tab")
	hs.key("q")
	if !hs.m.quitting {
		t.Fatal("q did not quit")
	}
	// …and everything typed comes back on stderr.
	var out bytes.Buffer
	writeUnsent(&out, hs.m.Unsent())
	got := out.String()
	for _, want := range []string{"3 message(s)", "failed words", "connection refused", "still typing", "a draft elsewhere"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Error("unsent text printed unsanitized")
	}
	// Nothing typed: nothing printed.
	out.Reset()
	writeUnsent(&out, attached(t, 80, 24).m.Unsent())
	if out.Len() != 0 {
		t.Errorf("printed %q with nothing unsent", out.String())
	}
}
