package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
)

// composer is the message input: a bubbles textarea (real terminal cursor,
// so no blink ticks), prompt history and the web-search toggle.
type composer struct {
	ta    textarea.Model
	web   bool
	width int
	maxH  int

	history []string // sent or stashed texts, oldest first
	recall  []string // history being browsed (built when browsing starts)
	rpos    int      // index into recall; len(recall) when not browsing
	draft   string   // what was typed before browsing started
}

// newComposer is the composer with newline on the keys the user's
// [keys] give it (shift+enter, ctrl+j and alt+enter by default).
func newComposer(t themeKind, newline key.Binding) composer {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.SetPromptFunc(2, func(pi textarea.PromptInfo) string { return composerPrompt(pi.LineNumber) })
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 8
	// Long messages must fit: MaxHeight only bounds the visible rows.
	ta.MaxContentHeight = 5000
	ta.MaxWidth = 0
	ta.SetVirtualCursor(false)
	// Enter sends; newline is shift+enter by default (kitty and
	// modifyOtherKeys terminals), with ctrl+j and alt+enter for terminals
	// that cannot report it.
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys(newline.Keys()...))
	// Keys the composer uses for itself, and pgup/pgdn which scroll the
	// transcript instead of a 1-to-8-row input.
	ta.KeyMap.TransposeCharacterBackward = key.NewBinding(key.WithDisabled())
	ta.KeyMap.PageUp = key.NewBinding(key.WithDisabled())
	ta.KeyMap.PageDown = key.NewBinding(key.WithDisabled())
	ta.KeyMap.SelectAll = key.NewBinding(key.WithDisabled())
	ta.Placeholder = placeholderIdle
	c := composer{ta: ta, maxH: 8}
	c.setTheme(t)
	c.ta.Focus()
	return c
}

// composerPrompt is the prompt of the input's row n (two cells).
func composerPrompt(n int) string {
	if n == 0 {
		return "› "
	}
	return "  "
}

func (c *composer) setTheme(t themeKind) {
	st := textarea.DefaultStyles(t != themeLight)
	if t == themeNoColor {
		st = textarea.Styles{}
	}
	c.ta.SetStyles(st)
}

// setSize sets the width and the most rows the input may grow to.
func (c *composer) setSize(w, maxH int) {
	c.width = w
	if maxH != c.maxH {
		c.maxH = maxH
		c.ta.MaxHeight = max(maxH, 1)
	}
	c.ta.SetWidth(max(w, 4))
}

func (c *composer) setWidth(w int) { c.setSize(w, c.maxH) }

// height is the rows the input wants now, at most maxH.
func (c *composer) height(maxH int) int {
	return max(min(c.ta.Height(), maxH), 1)
}

func (c *composer) value() string { return c.ta.Value() }

func (c *composer) setValue(s string) {
	c.ta.SetValue(s)
	c.ta.MoveToEnd()
	c.rpos = len(c.recall)
}

func (c *composer) reset() {
	c.ta.Reset()
	c.recall, c.rpos = nil, 0
}

func (c *composer) focus() tea.Cmd { return c.ta.Focus() }
func (c *composer) blur()          { c.ta.Blur() }

func (c *composer) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	c.ta, cmd = c.ta.Update(msg)
	return cmd
}

// lines is the input's rows, exactly h of them.
func (c *composer) lines(h int) []string {
	ls := strings.Split(c.ta.View(), "\n")
	if len(ls) > h {
		ls = ls[:h]
	}
	for i := range ls {
		ls[i] = truncate(ls[i], c.width)
	}
	for len(ls) < h {
		ls = append(ls, "")
	}
	return ls
}

// cursor is where the terminal's cursor goes (nil when blurred).
func (c *composer) cursor() *tea.Cursor { return c.ta.Cursor() }

// pushHistory remembers a sent or stashed text (without repeating the last
// one).
func (c *composer) pushHistory(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	if n := len(c.history); n > 0 && c.history[n-1] == s {
		return
	}
	c.history = append(c.history, s)
}

// stash clears the input but keeps the text in history.
func (c *composer) stash() {
	c.pushHistory(c.value())
	c.reset()
}

// browse moves through history (dir -1 = older). earlier is the task's
// user messages, so recall works right after attaching too.
func (c *composer) browse(dir int, earlier func() []string) bool {
	if c.recall == nil {
		seen := make(map[string]bool)
		for _, s := range earlier() {
			if !seen[s] {
				seen[s] = true
				c.recall = append(c.recall, s)
			}
		}
		for _, s := range c.history {
			if !seen[s] {
				seen[s] = true
				c.recall = append(c.recall, s)
			}
		}
		c.rpos = len(c.recall)
		c.draft = c.value()
	}
	next := c.rpos + dir
	if next < 0 || next > len(c.recall) {
		return false
	}
	c.rpos = next
	if next == len(c.recall) {
		c.ta.SetValue(c.draft)
	} else {
		c.ta.SetValue(c.recall[next])
	}
	c.ta.MoveToEnd()
	return true
}

func (c *composer) browsing() bool { return c.recall != nil && c.rpos < len(c.recall) }

// composerKey handles keys while the composer has focus.
func (m *Model) composerKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	switch {
	case msg.String() == "f1":
		m.overlay = ovHelp
		return nil
	case key.Matches(msg, k.Send):
		return m.submit(outbox.IntentSend)
	case key.Matches(msg, k.Hold):
		return m.submit(outbox.IntentHold)
	case m.held.editing != "" && msg.String() == "esc":
		m.cancelEdit()
		return nil
	case key.Matches(msg, k.ToHeld):
		return m.focusHeldPanel()
	case key.Matches(msg, k.Editor):
		return m.openEditor()
	case key.Matches(msg, k.Leave):
		m.focus = focusTranscript
		m.comp.blur()
		return nil
	case key.Matches(msg, k.WebSearch):
		m.comp.web = !m.comp.web
		if m.comp.web {
			m.setFlash("web search on for the next messages", false)
		} else {
			m.setFlash("web search off", false)
		}
		return nil
	case key.Matches(msg, k.CancelRun):
		m.askCancel()
		return nil
	case key.Matches(msg, k.Retry):
		return m.retryHeld()
	case key.Matches(msg, k.QueueToggle):
		m.queueOpen = !m.queueOpen
		return nil
	case key.Matches(msg, k.TodosToggle):
		m.toggleTodos()
		return nil
	case msg.String() == "pgup":
		h := m.transcriptHeight()
		m.tr.scroll(m.source(), -max(h-1, 1), h)
		return nil
	case msg.String() == "pgdown":
		h := m.transcriptHeight()
		m.tr.scroll(m.source(), max(h-1, 1), h)
		return nil
	case msg.String() == "up":
		if (m.comp.value() == "" || m.comp.browsing()) && m.comp.ta.Line() == 0 {
			if m.comp.browse(-1, m.userTexts) {
				return nil
			}
		}
	case msg.String() == "down":
		if m.comp.browsing() && m.comp.ta.Line() == m.comp.ta.LineCount()-1 {
			m.comp.browse(+1, m.userTexts)
			return nil
		}
	}
	if m.comp.browsing() && msg.Text != "" {
		// Typing into a recalled message makes it the new draft.
		m.comp.recall, m.comp.rpos = nil, 0
	}
	return m.comp.update(msg)
}

// userTexts is the transcript's user messages, oldest first.
func (m *Model) userTexts() []string {
	var out []string
	for i := range m.tl.Len() {
		if it := m.tl.At(i); it.Kind == events.ItemUser {
			if s := it.Body(); strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func (m *Model) focusComposer() tea.Cmd {
	if m.mode != modeTask || !m.caps.Send {
		m.focus = focusTranscript
		return nil
	}
	m.focus = focusComposer
	return m.comp.focus()
}

// composerRule is the line above the input: it shows where focus is, what
// Enter will do (send now, or queue behind the running turn) and the
// web-search state.
func (m *Model) composerRule() string {
	st := m.ch.Rule
	if !m.caps.Send {
		note := m.caps.Note
		if note == "" {
			note = "read-only"
		}
		left := st.Render("── ") + m.ch.Dim.Render(truncate(note, max(m.w-8, 1))) + " "
		return truncate(left+st.Render(strings.Repeat("─", max(m.w-lineWidth(left), 0))), m.w)
	}
	send, hold, write := m.keyLabel("send", "enter"), m.keyLabel("hold", "ctrl+g"), m.keyLabel("leave", "tab")
	label := " message · " + send + " sends · " + hold + " holds "
	if m.focus == focusComposer {
		st = m.ch.RuleFocused
	} else {
		write = m.keyLabel("compose", "tab")
		label = " message (" + write + " to write) "
	}
	switch {
	case m.streamDown() && taskGone(m.conn.Err):
		label = " task gone · nothing can be sent to it "
	case m.streamDown():
		// Enter still writes the message down; it goes once the server
		// answers, which is all that can be promised.
		label = " disconnected · " + send + " keeps it until the server answers · " + hold + ": hold "
		if m.focus != focusComposer {
			label = " disconnected (" + write + " to write) "
		}
	case m.busy():
		label = " queue a message · " + send + ": after this turn · " + hold + ": hold "
		if m.focus != focusComposer {
			label = " queue a message (" + write + " to write) "
		}
	}
	if m.held.editing != "" {
		label = " editing held message " + m.held.editing + " · " + send + " saves · esc cancels "
	}
	right := st.Render("─")
	if m.caps.WebSearch {
		web := m.ch.Badge.Render("web off")
		if m.comp.web {
			web = m.ch.BadgeOn.Render("web on")
		}
		right = web + st.Render(" "+m.keyLabel("web_search_toggle", "ctrl+s")+" ─")
	}
	left := st.Render("──") + st.Render(label)
	lw, rw := lineWidth(left), lineWidth(right)
	if lw+rw+1 > m.w {
		return truncate(left+st.Render(strings.Repeat("─", max(m.w-lw, 0))), m.w)
	}
	return left + st.Render(strings.Repeat("─", m.w-lw-rw)) + right
}

// Placeholders say what Enter and the hold key do (Model.placeholder
// picks one, or says the stream is down).
const (
	placeholderIdle = "Message the agent — enter sends, ctrl+g holds it for later…"
)
