// Package chrome draws perch's own frame — the task list, the status and
// hint rows, and the text helpers every line goes through — with lipgloss
// alone, apart from the transcript's renderer and its libraries.
package chrome

import (
	"charm.land/lipgloss/v2"

	"github.com/perch-tui/perch/styles"
)

// Chrome is the subset of styles.Styles perch's own frame (status bar,
// panels, task list) draws with, under short names. Transcript items are
// styled by the item renderer.
type Chrome struct {
	St *styles.Styles

	Dim, Faint, Bold, Title    lipgloss.Style
	Accent, OK, Warn, Err      lipgloss.Style
	Key, Hint                  lipgloss.Style
	Rule, RuleFocused          lipgloss.Style
	SelectedGutter, Selected   lipgloss.Style
	Badge, BadgeOn, BadgeAlert lipgloss.Style
	Match                      lipgloss.Style
	Flash, FlashErr            lipgloss.Style
}

// New returns the chrome of theme t.
func New(t styles.Theme) Chrome {
	st := styles.New(t)
	return Chrome{
		St:             st,
		Dim:            st.Dim,
		Faint:          st.Subtle,
		Bold:           st.Bold,
		Title:          st.App.Title,
		Accent:         st.StatusBar.Generating,
		OK:             st.StatusBar.Connected,
		Warn:           st.StatusBar.Reconnecting,
		Err:            st.StatusBar.Disconnected,
		Key:            st.StatusBar.Key,
		Hint:           st.StatusBar.Desc,
		Rule:           st.Composer.Border,
		RuleFocused:    st.Composer.BorderFocused,
		SelectedGutter: st.Selected,
		Selected:       st.Queue.Selected,
		Badge:          st.Dim.Reverse(t == styles.NoColor).Padding(0, 1),
		BadgeOn:        st.Search.Current.Bold(true).Padding(0, 1),
		BadgeAlert:     st.Tool.ExitBad.Reverse(true).Padding(0, 1),
		Match:          st.Search.Match,
		Flash:          st.StatusBar.Info,
		FlashErr:       st.Notice.Error.Bold(true),
	}
}

// Connecting is the connection segment before a stream has reported any
// state.
func (c Chrome) Connecting() string { return c.Dim.Render("◌ connecting") }

// Separator joins the segments of a status or hint row.
func (c Chrome) Separator() string { return c.Faint.Render(" · ") }

// Hint is one "key desc" pair of a hints row.
type Hint struct {
	Key, Desc string
	Prio      HintPrio
}

// HintPrio says which hints a narrow row drops first.
type HintPrio int

const (
	// HintMinor: good to know, dropped first.
	HintMinor HintPrio = iota
	// HintMajor: what the view is for.
	HintMajor
	// HintVital: the way to the help and the way back, which a user
	// must always be able to find; dropped last, at widths too narrow
	// for anything else.
	HintVital
)

// Hints renders hints in w cells, in order. When they do not fit, the
// least important go first, the later first among equals.
func (c Chrome) Hints(w int, hs ...Hint) string {
	segs := make([]Segment, 0, len(hs))
	for i, h := range hs {
		segs = append(segs, Segment{c.Key.Render(h.Key) + " " + c.Hint.Render(h.Desc), int(h.Prio)*len(hs) + len(hs) - i})
	}
	return LayoutSegments(segs, c.Separator(), w)
}

// FlashRow shows a flash message in the hints row, with the vital hints
// of hs after it when both fit; else the message alone: it says what just
// happened, and lasts a few seconds.
func (c Chrome) FlashRow(w int, flash string, isErr bool, hs ...Hint) string {
	st := c.Flash
	if isErr {
		st = c.FlashErr
	}
	msg := st.Render(flash)
	var vital []Hint
	for _, h := range hs {
		if h.Prio == HintVital {
			vital = append(vital, h)
		}
	}
	if len(vital) > 0 {
		tail := c.Separator() + c.Hints(w, vital...)
		if Width(msg)+Width(tail) <= w {
			return msg + tail
		}
	}
	return Truncate(msg, w)
}
