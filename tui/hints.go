package tui

import (
	"strings"

	"github.com/perch-tui/perch/tui/chrome"
)

// Every hint, footer and prompt names an action's key through keyLabel,
// so that a [keys] override (Config.Keys) is the key shown everywhere, not
// only in the help.

// keyLabel is how a hint names the key of action (a KeyActions name): def,
// the hint's short form of the default keys, unless the user bound the
// action to other keys; then those keys.
func (m *Model) keyLabel(action, def string) string {
	if keys := m.cfg.Keys[action]; len(keys) > 0 {
		return strings.Join(keys, "/")
	}
	return def
}

// keyPair names two actions shown as one hint ("j/k move"): def unless
// either was bound to other keys; then the first key of each.
func (m *Model) keyPair(a, b, def string) string {
	ka, kb := m.cfg.Keys[a], m.cfg.Keys[b]
	if len(ka) == 0 && len(kb) == 0 {
		return def
	}
	first := func(action string, over []string) string {
		if len(over) > 0 {
			return over[0]
		}
		d := newKeyMap()
		return d.bindings()[action].Keys()[0]
	}
	return first(a, ka) + "/" + first(b, kb)
}

// listHints are the task list's keys.
func (m *Model) listHints() []chrome.Hint {
	hs := []chrome.Hint{major(m.keyLabel("attach", "enter"), "open")}
	if m.caps.Create {
		hs = append(hs, major(m.keyLabel("new_task", "n"), "new task"))
	}
	hs = append(hs, major(m.keyLabel("filter", "/"), "filter"))
	hs = append(hs, m.findHint()...)
	return append(hs, minor(m.keyPair("list_down", "list_up", "j/k"), "move"),
		minor(m.keyLabel("refresh", "r"), "refresh"), vital(m.keyLabel("quit", "q"), "quit"), vital(m.keyLabel("help", "?"), "keys"))
}

// findHint is the search across sessions' key, where the UI has an index
// to search (Config.Search).
func (m *Model) findHint() []chrome.Hint {
	if m.cfg.Search == nil {
		return nil
	}
	return []chrome.Hint{minor(m.keyLabel("find_all", "ctrl+f"), "search all")}
}

// boardHints are the board's keys.
func (m *Model) boardHints() []chrome.Hint {
	hs := []chrome.Hint{major(m.keyLabel("attach", "enter"), "open"), major(m.keyLabel("filter", "/"), "filter")}
	hs = append(hs, m.findHint()...)
	return append(hs, minor(m.keyLabel("board_status", "s"), "status"), minor(m.keyLabel("board_source", "S"), "source"),
		minor(m.keyPair("list_down", "list_up", "j/k"), "move"), vital(m.keyLabel("quit", "q"), "quit"), vital(m.keyLabel("help", "?"), "keys"))
}

// helpKeyLabel is the help's key where a printable key would type text (the
// composer, the held panel).
func (m *Model) helpKeyLabel() string { return m.keyLabel("help", "f1") }
