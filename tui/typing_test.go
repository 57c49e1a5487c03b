package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Typing over the transcript starts a message: the first key the
// transcript does not bind (W) moves focus to the composer and is typed
// there, and so is every key after it, bound or not (h, a, t, w, n).
func TestTypingInTheTranscriptGoesToTheComposer(t *testing.T) {
	hs := attached(t, 100, 30)
	hs.live()
	hs.events(user("u1", "hello"), assistant("a1", "hi"))
	hs.key("esc")
	if hs.m.focus != focusTranscript {
		t.Fatal("esc must leave the composer")
	}
	hs.typ("What now")
	if hs.m.focus != focusComposer || hs.m.comp.value() != "What now" {
		t.Fatalf("focus %v, composer %q; want the composer holding %q", hs.m.focus, hs.m.comp.value(), "What now")
	}
}

// A key the transcript binds keeps its action: it is not typed.
func TestBoundTranscriptKeysKeepTheirAction(t *testing.T) {
	hs := attached(t, 100, 30)
	hs.live()
	hs.events(user("u1", "hello"), assistant("a1", "hi"))
	hs.key("esc")
	hs.key("]") // select an item
	hs.key("?")
	if hs.m.overlay != ovHelp || hs.m.focus != focusTranscript || hs.m.comp.value() != "" {
		t.Fatalf("? must open the help: overlay %v focus %v composer %q", hs.m.overlay, hs.m.focus, hs.m.comp.value())
	}
	hs.key("esc")
	// Keys with ctrl or alt are never text.
	hs.key("alt+w")
	hs.key("ctrl+w")
	if hs.m.focus != focusTranscript || hs.m.comp.value() != "" {
		t.Fatalf("modified keys were typed: focus %v composer %q", hs.m.focus, hs.m.comp.value())
	}
}

// A paste lands in the composer whatever has focus.
func TestPasteGoesToTheComposerFromAnyFocus(t *testing.T) {
	hs := attached(t, 100, 30)
	hs.live()
	hs.events(user("u0", "go"), runStart("r1", fixedNow))
	hs.typ("later")
	hs.key("ctrl+g")
	for _, focus := range []string{"esc", "shift+tab"} { // transcript, held list
		hs.m.comp.reset()
		hs.key(focus)
		if hs.m.focus == focusComposer {
			t.Fatalf("%s left the focus in the composer", focus)
		}
		hs.send(tea.PasteMsg{Content: "pasted"})
		if hs.m.focus != focusComposer || hs.m.comp.value() != "pasted" {
			t.Fatalf("after %s: focus %v composer %q", focus, hs.m.focus, hs.m.comp.value())
		}
	}
}

// fakeEditor writes a script that edits its file as sh commands say and
// returns a Getenv naming it as $EDITOR.
func fakeEditor(t *testing.T, script string) func(string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "editor")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return func(k string) string {
		if k == "EDITOR" {
			return path
		}
		return ""
	}
}

// editorHarness is attached, with the editor the script describes.
func editorHarness(t *testing.T, script string) *harness {
	t.Helper()
	hs := newHarness(t, 100, 30, Config{TaskID: "task-1", Getenv: fakeEditor(t, script)})
	hs.live()
	return hs
}

// runEditor presses the editor key, then runs the command perch hands the
// terminal to (as Bubble Tea would) and delivers its end.
func runEditor(t *testing.T, hs *harness) {
	t.Helper()
	hs.other = nil
	hs.key("ctrl+o")
	if len(hs.other) != 1 || !strings.Contains(fmt.Sprintf("%T", hs.other[0]), "exec") {
		t.Fatalf("ctrl+o must hand the terminal to the editor, got %v", hs.other)
	}
	path := hs.m.editorFile
	if path == "" {
		t.Fatal("no draft file handed to the editor")
	}
	hs.send(editorDone(path)(hs.m.editorCommand(path).Run()))
}

func TestComposeInEditor(t *testing.T) {
	hs := editorHarness(t, `printf ' and a long follow-up\nover two lines\n' >> "$1"`)
	hs.typ("a draft")
	runEditor(t, hs)
	if got, want := hs.m.comp.value(), "a draft and a long follow-up\nover two lines"; got != want {
		t.Fatalf("composer %q, want %q", got, want)
	}
	if hs.m.focus != focusComposer {
		t.Fatal("the composer must have focus after the editor")
	}
	// The draft it replaced is in history.
	hs.m.comp.reset()
	hs.key("up")
	if hs.m.comp.value() != "a draft" {
		t.Fatalf("↑ brought %q back, want the replaced draft", hs.m.comp.value())
	}
}

// From the transcript, the editor key writes in the editor too.
func TestComposeInEditorFromTheTranscript(t *testing.T) {
	hs := editorHarness(t, `printf 'written in the editor' > "$1"`)
	hs.key("esc")
	runEditor(t, hs)
	if hs.m.focus != focusComposer || hs.m.comp.value() != "written in the editor" {
		t.Fatalf("focus %v composer %q", hs.m.focus, hs.m.comp.value())
	}
}

// An editor that fails loses nothing: the draft stays and the flash says
// why.
func TestFailedEditorKeepsTheDraft(t *testing.T) {
	hs := editorHarness(t, `echo > "$1"; exit 3`)
	hs.typ("keep me")
	runEditor(t, hs)
	if hs.m.comp.value() != "keep me" {
		t.Fatalf("composer %q, want the draft kept", hs.m.comp.value())
	}
	hs.contains("the editor failed (exit status 3) — the draft is kept")
}

// The help names the editor key.
func TestHelpNamesTheEditorKey(t *testing.T) {
	hs := attached(t, 120, 60)
	hs.live()
	hs.key("f1")
	hs.contains("ctrl+o")
	hs.contains("write in $EDITOR")
}
