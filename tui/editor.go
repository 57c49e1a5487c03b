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

// editorDoneMsg reports that the editor exited: err is its failure (or
// the failure to start it); path is the file it edited.
type editorDoneMsg struct {
	path string
	err  error
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

// editorProcess writes the draft to a new temporary file and returns the
// editor's command on it, with the callback that reports its end.
func (m *Model) editorProcess() (*exec.Cmd, tea.ExecCallback, error) {
	f, err := os.CreateTemp("", "perch-message-*.md")
	if err != nil {
		return nil, nil, fmt.Errorf("create the draft's file: %w", err)
	}
	path := f.Name()
	_, err = f.WriteString(m.comp.value())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("write the draft's file: %w", err)
	}
	done := func(err error) tea.Msg { return editorDoneMsg{path: path, err: err} }
	return m.editorCommand(path), done, nil
}

// openEditor hands the terminal to the editor on the draft.
func (m *Model) openEditor() tea.Cmd {
	if m.mode != modeTask || !m.caps.Send {
		return nil
	}
	cmd, done, err := m.editorProcess()
	if err != nil {
		m.setFlash("cannot open an editor: "+err.Error()+" — the draft is kept", true)
		return nil
	}
	return tea.ExecProcess(cmd, done)
}

// handleEditorDone makes the edited file the draft. The draft it replaces
// goes to history (↑ brings it back), so nothing typed is lost either way.
func (m *Model) handleEditorDone(msg editorDoneMsg) tea.Cmd {
	defer os.Remove(msg.path)
	if msg.err != nil {
		m.setFlash("the editor failed ("+oneLine(msg.err.Error())+") — the draft is kept", true)
		return nil
	}
	b, err := os.ReadFile(msg.path)
	if err != nil {
		m.setFlash("cannot read what the editor wrote ("+oneLine(err.Error())+") — the draft is kept", true)
		return nil
	}
	// Editors end a file with a newline the message never had.
	text := strings.TrimRight(string(b), "\r\n")
	if old := m.comp.value(); old != text {
		m.comp.pushHistory(old)
		m.comp.setValue(text)
	}
	return m.focusComposer()
}
