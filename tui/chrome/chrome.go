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

// Hints renders "key desc" pairs in w cells, dropping the last pairs first
// when they do not fit.
func (c Chrome) Hints(w int, pairs ...string) string {
	segs := make([]Segment, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		segs = append(segs, Segment{c.Key.Render(pairs[i]) + " " + c.Hint.Render(pairs[i+1]), len(pairs) - i})
	}
	return LayoutSegments(segs, c.Separator(), w)
}
