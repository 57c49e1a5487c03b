package tui

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// A long message is easier to write in the user's own editor (opencode's
// and crush's external editor): the draft goes to a temporary file, the
// editor runs in the terminal perch hands over (tea.ExecProcess), and the
// file's text comes back as the draft. If anything fails the draft stays
// as it was and the flash says why.

// editorReadyMsg: the draft was written to path (or could not be, err),
// for the editor to open.
type editorReadyMsg struct {
	path string
	err  error
}

// editorDoneMsg reports that the editor exited: err is its failure (or
// the failure to start it); text is what it left in the file, readErr
// why that could not be read.
type editorDoneMsg struct {
	text    string
	err     error
	readErr error
}

// editorCommand is the user's editor on path: $VISUAL, else $EDITOR, else
// vi. The variable may carry arguments ("code --wait").
func (m *Model) editorCommand(path string) *exec.Cmd {
	ed := strings.Fields(m.cfg.Getenv("VISUAL"))
	if len(ed) == 0 {
		ed = strings.Fields(m.cfg.Getenv("EDITOR"))
	}
	if len(ed) == 0 {
		ed = []string{"vi"}
	}
	return exec.Command(ed[0], append(ed[1:], path)...)
}

// openEditor writes the draft to a new temporary file (in a command:
// no IO in Update), then hands the terminal to the editor on it.
func (m *Model) openEditor() tea.Cmd {
	if m.mode != modeTask || !m.caps.Send {
		return nil
	}
	draft := m.comp.value()
	return func() tea.Msg {
		path, err := writeDraft(draft)
		return editorReadyMsg{path: path, err: err}
	}
}

func writeDraft(draft string) (string, error) {
	f, err := os.CreateTemp("", "perch-message-*.md")
	if err != nil {
		return "", fmt.Errorf("create the draft's file: %w", err)
	}
	path := f.Name()
	_, err = f.WriteString(draft)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("write the draft's file: %w", err)
	}
	return path, nil
}

// handleEditorReady runs the editor on the draft's file.
func (m *Model) handleEditorReady(msg editorReadyMsg) tea.Cmd {
	if msg.err != nil {
		m.setFlash("cannot open an editor: "+msg.err.Error()+" — the draft is kept", true)
		return nil
	}
	m.editorFile = msg.path
	return tea.ExecProcess(m.editorCommand(msg.path), editorDone(msg.path))
}

// editorDone reads what the editor left in path once it exited and
// removes the file. Bubble Tea calls it when the terminal is back, before
// the message reaches Update.
func editorDone(path string) tea.ExecCallback {
	return func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorDoneMsg{err: err}
		}
		b, rerr := os.ReadFile(path)
		return editorDoneMsg{text: string(b), readErr: rerr}
	}
}

// handleEditorDone makes the edited file the draft. The draft it replaces
// goes to history (↑ brings it back), so nothing typed is lost either way.
func (m *Model) handleEditorDone(msg editorDoneMsg) tea.Cmd {
	m.editorFile = ""
	switch {
	case msg.err != nil:
		m.setFlash("the editor failed ("+oneLine(msg.err.Error())+") — the draft is kept", true)
		return nil
	case msg.readErr != nil:
		m.setFlash("cannot read what the editor wrote ("+oneLine(msg.readErr.Error())+") — the draft is kept", true)
		return nil
	}
	// Editors end a file with a newline the message never had.
	text := strings.TrimRight(msg.text, "\r\n")
	if old := m.comp.value(); old != text {
		m.comp.pushHistory(old)
		m.comp.setValue(text)
	}
	return m.focusComposer()
}
