package tui

import (
	"errors"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/atotto/clipboard"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tui/render"
)

// Copy puts text on two clipboards: the system's (a clipboard tool such as
// wl-copy, xclip, xsel or pbcopy, which works wherever perch runs beside
// the desktop) and the terminal's, with OSC 52 (which works over ssh, but
// only where the terminal allows it, and a terminal that does not drops it
// without a word: crush #2456). The message says which one took it, and
// never claims a copy nothing could have made.

// Clipboard is the system clipboard. Its calls run programs: they run in
// a tea.Cmd, never in Update or View.
type Clipboard interface {
	WriteAll(text string) error
}

// systemClipboard is the native clipboard (github.com/atotto/clipboard).
type systemClipboard struct{}

var errNoClipboardTool = errors.New("no clipboard tool found (wl-copy, xclip or xsel)")

func (systemClipboard) WriteAll(text string) error {
	if clipboard.Unsupported {
		return errNoClipboardTool
	}
	return clipboard.WriteAll(text)
}

// copyDoneMsg reports the system clipboard's answer to one copy.
type copyDoneMsg struct {
	what string // "3 lines (120 bytes)", "code block 1 of 2"
	next string // what the key does when pressed again, or ""
	err  error
}

// copyState is what the last copy of a code block was, so that pressing
// the key again on the same item copies the next one.
type copyState struct {
	item  *events.Item
	block int
}

// copyOut sends text to both clipboards and says so once the system
// clipboard has answered.
func (m *Model) copyOut(text, what, next string) tea.Cmd {
	clip := m.cfg.Clipboard
	m.setFlash("copying "+what+"…", false)
	native := func() tea.Msg { return copyDoneMsg{what: what, next: next, err: clip.WriteAll(text)} }
	return tea.Batch(tea.SetClipboard(text), native)
}

// copyDone says where the copy went.
func (m *Model) copyDone(msg copyDoneMsg) {
	if msg.err == nil {
		m.setFlash("copied "+msg.what+" to the clipboard"+msg.next, false)
		return
	}
	reason := oneLine(msg.err.Error())
	if why := osc52Refused(m.cfg.Getenv); why != "" {
		m.setFlash("nothing copied: no system clipboard ("+reason+") and "+why, true)
		return
	}
	note := "your terminal must allow it"
	if m.cfg.Getenv("TMUX") != "" {
		note = "tmux needs set-clipboard on, and your terminal must allow it"
	}
	m.setFlash("sent "+msg.what+" to the terminal via OSC 52 — "+note+" (no system clipboard: "+reason+")", false)
}

// osc52Refused says why the terminal surely drops OSC 52 ("" when it may
// take it): the Linux console and dumb terminals have no clipboard.
func osc52Refused(getenv func(string) string) string {
	switch term := getenv("TERM"); term {
	case "", "dumb", "linux", "cons25":
		if term == "" {
			term = "unset"
		}
		return "the terminal (TERM=" + term + ") does not take OSC 52"
	}
	return ""
}

// copySelected copies the selected item: a message's text, a tool's output
// as the tool produced it.
func (m *Model) copySelected() tea.Cmd {
	it := m.selectedForCopy()
	if it == nil {
		return nil
	}
	text, _ := render.CopyText(it)
	if strings.TrimSpace(text) == "" {
		m.setFlash("this item has no text to copy", false)
		return nil
	}
	return m.copyOut(text, sizeOf(text), "")
}

// copyCode copies a code block of the selected message: the first, then
// the next at each press on the same item.
func (m *Model) copyCode() tea.Cmd {
	it := m.selectedForCopy()
	if it == nil {
		return nil
	}
	var blocks []render.CodeBlock
	if it.Kind != events.ItemTool {
		blocks = render.CodeBlocks(it.Body())
	}
	if len(blocks) == 0 {
		m.setFlash("no code block in this item — "+m.keys.Copy.Help().Key+" copies all of it", false)
		return nil
	}
	i := 0
	if m.copied.item == it {
		i = (m.copied.block + 1) % len(blocks)
	}
	m.copied = copyState{item: it, block: i}
	b := blocks[i]
	what := "code block " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(blocks))
	if b.Lang != "" {
		what += " (" + b.Lang + ")"
	}
	what += ", " + sizeOf(b.Code)
	next := ""
	if len(blocks) > 1 {
		next = " — " + m.keys.CopyCode.Help().Key + " again for the next"
	}
	return m.copyOut(b.Code, what, next)
}

// askCopyLines opens the prompt for a range of the selected item's lines.
func (m *Model) askCopyLines() {
	it := m.selectedForCopy()
	if it == nil {
		return
	}
	text, first := render.CopyText(it)
	if text == "" {
		m.setFlash("this item has no text to copy", false)
		return
	}
	m.overlay = ovSearch
	m.search.input = ""
	m.search.lines = lineRange{from: first, to: first + strings.Count(text, "\n")}
}

// lineRange is the lines a copy-lines prompt offers, numbered as shown.
type lineRange struct{ from, to int }

// copyLines copies the lines of the selected item that spec names: "12",
// "12-20", "12-" (to the end) or "-20" (from the start), numbered as the
// view numbers them (a file read's own line numbers, else from 1).
func (m *Model) copyLines(spec string) tea.Cmd {
	it := m.selectedForCopy()
	if it == nil {
		return nil
	}
	text, first := render.CopyText(it)
	lines := strings.Split(text, "\n")
	last := first + len(lines) - 1
	from, to, ok := parseRange(strings.TrimSpace(spec), first, last)
	if !ok {
		m.setFlash("lines "+strconv.Quote(spec)+" not understood: give a line or a range, e.g. "+
			strconv.Itoa(first)+"-"+strconv.Itoa(min(first+9, last)), true)
		return nil
	}
	if from < first || to > last || from > to {
		m.setFlash("no lines "+strconv.Itoa(from)+"-"+strconv.Itoa(to)+": this item has lines "+
			strconv.Itoa(first)+"-"+strconv.Itoa(last), true)
		return nil
	}
	out := strings.Join(lines[from-first:to-first+1], "\n")
	what := "line " + strconv.Itoa(from)
	if to > from {
		what = "lines " + strconv.Itoa(from) + "-" + strconv.Itoa(to)
	}
	return m.copyOut(out, what+" ("+strconv.Itoa(len(out))+" bytes)", "")
}

// parseRange reads "a", "a-b", "a-" or "-b" (first and last fill the open
// ends).
func parseRange(s string, first, last int) (from, to int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	num := func(t string, def int) (int, bool) {
		t = strings.TrimSpace(t)
		if t == "" {
			return def, true
		}
		n, err := strconv.Atoi(t)
		return n, err == nil
	}
	if s == "" || s == "-" {
		return 0, 0, false
	}
	from, ok1 := num(a, first)
	if !isRange {
		return from, from, ok1 && a != ""
	}
	to, ok2 := num(b, last)
	return from, to, ok1 && ok2
}

// selectedForCopy is the selected item (selecting the bottom-most visible
// one when none is), or nil with a message.
func (m *Model) selectedForCopy() *events.Item {
	if m.tr.sel < 0 || m.tr.sel >= m.tl.Len() {
		m.moveSelection(0)
	}
	if m.tr.sel < 0 || m.tr.sel >= m.tl.Len() {
		m.setFlash("nothing to copy", false)
		return nil
	}
	return m.tl.At(m.tr.sel)
}

// sizeOf is "3 lines (120 bytes)".
func sizeOf(text string) string {
	n := strings.Count(text, "\n") + 1
	return strconv.Itoa(n) + " line" + plural(n) + " (" + strconv.Itoa(len(text)) + " bytes)"
}

// copyLinesKey edits the copy-lines prompt; enter copies.
func (m *Model) copyLinesKey(msg tea.KeyPressMsg) tea.Cmd {
	done := func() {
		m.overlay = ovNone
		m.search.lines = lineRange{}
		m.search.input = ""
	}
	switch msg.String() {
	case "esc":
		done()
	case "enter":
		spec := m.search.input
		done()
		return m.copyLines(spec)
	case "backspace", "ctrl+h":
		if r := []rune(m.search.input); len(r) > 0 {
			m.search.input = string(r[:len(r)-1])
		} else {
			done()
		}
	case "ctrl+u":
		m.search.input = ""
	default:
		m.search.input += msg.Text
	}
	return nil
}

// copyLinesLine is the prompt row: "copy lines 3-9  of 1-57 · enter copy
// · esc cancel".
func (m *Model) copyLinesLine() (string, *tea.Cursor) {
	r := m.search.lines
	prompt := m.ch.Accent.Render("copy lines ")
	in := m.search.input
	line := prompt + in
	right := m.ch.Hint.Render("  of " + strconv.Itoa(r.from) + "-" + strconv.Itoa(r.to) + ", e.g. " +
		strconv.Itoa(r.from) + "-" + strconv.Itoa(min(r.from+9, r.to)) + " · enter copy · esc cancel")
	if lineWidth(line)+lineWidth(right) <= m.w {
		line += right
	}
	c := tea.NewCursor(min(lineWidth(prompt)+lineWidth(in), max(m.w-1, 0)), 0)
	return truncate(line, m.w), c
}
