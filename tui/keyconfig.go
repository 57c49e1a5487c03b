package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
)

// The names of the key map's actions, for perch's config file: its [keys]
// table maps these names to keys (Config.Keys), and the command line checks
// a file against KeyActions and CheckKey before the UI starts.

// bindings maps each action's name to its binding in k.
func (k *keyMap) bindings() map[string]*key.Binding {
	return map[string]*key.Binding{
		"help": &k.Help, "quit": &k.Quit,

		"list_up": &k.ListUp, "list_down": &k.ListDown, "list_top": &k.ListTop, "list_bottom": &k.ListBottom,
		"list_page_up": &k.ListPgUp, "list_page_down": &k.ListPgDown,
		"attach": &k.Attach, "new_task": &k.NewTask, "filter": &k.Filter, "refresh": &k.Refresh, "find_all": &k.FindAll,
		"board_status": &k.BoardStatus, "board_source": &k.BoardSource,

		"down": &k.Down, "up": &k.Up, "page_down": &k.PageDown, "page_up": &k.PageUp,
		"half_down": &k.HalfDown, "half_up": &k.HalfUp, "top": &k.Top, "bottom": &k.Bottom,
		"prev_item": &k.PrevItem, "next_item": &k.NextItem, "prev_user": &k.PrevUser, "next_user": &k.NextUser,
		"next_error": &k.NextErr, "prev_error": &k.PrevErr,
		"expand": &k.Expand, "search": &k.Search, "next_match": &k.NextMatch, "prev_match": &k.PrevMatch, "copy": &k.Copy,
		"copy_code": &k.CopyCode, "copy_lines": &k.CopyLines, "thinking": &k.Thinking,
		"todos": &k.Todos, "queue": &k.Queue, "compose": &k.Compose, "back": &k.Back, "held": &k.Held,

		"send": &k.Send, "hold": &k.Hold, "newline": &k.Newline, "history": &k.History, "web_search_toggle": &k.WebSearch,
		"leave": &k.Leave, "cancel_run": &k.CancelRun, "retry": &k.Retry,
		"queue_toggle": &k.QueueToggle, "todos_toggle": &k.TodosToggle, "scroll_page": &k.ScrollPage, "to_held": &k.ToHeld,
		"editor": &k.Editor,

		"held_up": &k.HeldUp, "held_down": &k.HeldDown, "held_move_up": &k.HeldMoveUp, "held_move_down": &k.HeldMoveDown,
		"held_edit": &k.HeldEdit, "held_delete": &k.HeldDelete, "held_adopt": &k.HeldAdopt, "held_to_composer": &k.HeldToComposer,
		"held_release": &k.HeldRelease, "held_pause": &k.HeldPause, "held_back": &k.HeldBack,

		"yes": &k.Yes, "no": &k.No,
	}
}

// with returns k with the keys of the actions in over replaced (their help
// rows then name the new keys). Unknown actions and empty lists are left
// alone: the command line checks a config file before the UI starts.
func (k keyMap) with(over map[string][]string) keyMap {
	b := k.bindings()
	for name, keys := range over {
		if kb, ok := b[name]; ok && len(keys) > 0 {
			kb.SetKeys(keys...)
			kb.SetHelp(strings.Join(keys, "/"), kb.Help().Desc)
		}
	}
	return k
}

// KeyActions lists, sorted, the names of the actions a config file may
// bind to other keys.
func KeyActions() []string {
	var k keyMap
	var names []string
	for name := range k.bindings() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// keyNames are the named keys, as a key press spells them.
var keyNames = map[string]bool{
	"enter": true, "tab": true, "backspace": true, "esc": true, "space": true,
	"up": true, "down": true, "left": true, "right": true, "begin": true, "find": true,
	"insert": true, "delete": true, "select": true, "pgup": true, "pgdown": true, "home": true, "end": true,
}

// keyModifiers in the order a key press spells them.
var keyModifiers = []string{"ctrl", "alt", "shift", "meta", "hyper", "super"}

// CheckKey says what is wrong with a key as a config file writes it
// ("ctrl+x", "K", "pgdown", "f5"): it must be spelt as a key press is, or
// it would never match.
func CheckKey(s string) error {
	if s == "" {
		return fmt.Errorf("an empty key")
	}
	// The key is what follows the last "+" that is not the last
	// character ("ctrl++" is ctrl and "+").
	var mods []string
	base := s
	if i := strings.LastIndex(s[:len(s)-1], "+"); i >= 0 {
		mods, base = strings.Split(s[:i], "+"), s[i+1:]
	}
	next := 0
	for _, m := range mods {
		i := indexOf(keyModifiers, m)
		if i < 0 {
			return fmt.Errorf("%q: %q is not a modifier (%s)", s, m, strings.Join(keyModifiers, ", "))
		}
		if i < next {
			return fmt.Errorf("%q: write the modifiers in the order %s", s, strings.Join(keyModifiers, "+"))
		}
		next = i + 1
	}
	switch {
	case keyNames[base]:
	case strings.HasPrefix(base, "f") && len(base) > 1:
		if n, err := strconv.Atoi(base[1:]); err != nil || n < 1 || n > 63 {
			return fmt.Errorf("%q: no such function key", s)
		}
	case len([]rune(base)) == 1 && base != " ":
	default:
		return fmt.Errorf("%q: not a key; write one character (a, K, ?), a named key (enter, esc, tab, space, up, pgdown, f1, …) or modifiers before it (ctrl+x)", s)
	}
	return nil
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
