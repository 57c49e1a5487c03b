package tui

import (
	"fmt"
	"sort"
)

// keyScopes are the actions that are live at once (a screen and focus):
// within one, two actions must not share a key, or one of them could
// never be pressed.
var keyScopes = []struct {
	name    string
	actions []string
}{
	{"task list and board", []string{"list_up", "list_down", "list_top", "list_bottom", "list_page_up", "list_page_down",
		"attach", "new_task", "filter", "refresh", "find_all", "board_status", "board_source", "help", "quit"}},
	{"transcript", []string{"down", "up", "page_down", "page_up", "half_down", "half_up", "top", "bottom",
		"prev_item", "next_item", "prev_user", "next_user", "next_error", "prev_error", "expand", "search",
		"next_match", "prev_match", "copy", "copy_code", "copy_lines", "thinking", "todos", "queue", "compose",
		"back", "held", "help", "quit", "cancel_run", "retry", "editor"}},
	{"composer", []string{"send", "hold", "newline", "history", "web_search_toggle", "leave", "cancel_run", "retry",
		"queue_toggle", "todos_toggle", "scroll_page", "to_held", "editor"}},
	{"held messages", []string{"held_up", "held_down", "held_move_up", "held_move_down", "held_edit", "held_delete",
		"held_adopt", "held_to_composer", "held_release", "held_pause", "held_back", "help"}},
	{"confirmation", []string{"yes", "no"}},
}

// KeyConflicts says which remap of over (a config file's [keys]) puts a
// key on two actions that are live at once, naming both; nil when none
// does. Only pairs with a remapped action count: perch's own keys are
// chosen not to clash.
func KeyConflicts(over map[string][]string) error {
	k := newKeyMap().with(over)
	b := k.bindings()
	for _, sc := range keyScopes {
		owner := map[string]string{} // key → action
		for _, a := range sc.actions {
			keys := append([]string(nil), b[a].Keys()...)
			sort.Strings(keys)
			for _, key := range keys {
				prev, ok := owner[key]
				if ok && prev != a && (len(over[prev]) > 0 || len(over[a]) > 0) {
					x, y := prev, a
					if len(over[x]) == 0 {
						x, y = y, x // the remapped one first
					}
					return fmt.Errorf("%q would be both %s and %s (%s); give one of them another key", key, x, y, sc.name)
				}
				if !ok {
					owner[key] = a
				}
			}
		}
	}
	return nil
}
