package tui

import "testing"

// `?` in the task list must show the keys, as it does in the task view.
func TestHelpFromTaskList(t *testing.T) {
	hs := newHarness(t, 100, 40, Config{})
	hs.key("?")
	hs.contains("next user turn")
	hs.key("x")
	hs.lacks("next user turn")
}
