package tui

import (
	"charm.land/lipgloss/v2"

	"github.com/perch-tui/perch/styles"
)

// themeKind is the palette in use.
type themeKind = styles.Theme

const (
	themeDark    = styles.Dark
	themeLight   = styles.Light
	themeNoColor = styles.NoColor
)

// themeFromConfig resolves the configured theme (styles.ThemeFromEnv:
// NO_COLOR wins, then the flag, then the detected background, dark until
// the terminal answers). fixed means a background reply must not change it.
func themeFromConfig(flag string, getenv func(string) string, isDark bool) (t themeKind, fixed bool) {
	t = styles.ThemeFromEnv(flag, getenv, isDark)
	if t == styles.NoColor {
		return t, true
	}
	switch flag {
	case "dark", "light", "none", "nocolor", "no-color", "mono":
		return t, true
	}
	return t, false
}

// chrome is the subset of styles.Styles perch's own frame (status bar,
// panels, task list) draws with, under short names. Transcript items are
// styled by the item renderer.
type chrome struct {
	st *styles.Styles

	Dim, Faint, Bold, Title    lipgloss.Style
	Accent, OK, Warn, Err      lipgloss.Style
	Key, Hint                  lipgloss.Style
	Rule, RuleFocused          lipgloss.Style
	SelectedGutter, Selected   lipgloss.Style
	Badge, BadgeOn, BadgeAlert lipgloss.Style
	Match                      lipgloss.Style
	Flash, FlashErr            lipgloss.Style
}

func newChrome(t themeKind) chrome {
	st := styles.New(t)
	c := chrome{
		st:             st,
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
		Badge:          st.Dim.Reverse(t == themeNoColor).Padding(0, 1),
		BadgeOn:        st.Search.Current.Bold(true).Padding(0, 1),
		BadgeAlert:     st.Tool.ExitBad.Reverse(true).Padding(0, 1),
		Match:          st.Search.Match,
		Flash:          st.StatusBar.Info,
		FlashErr:       st.Notice.Error.Bold(true),
	}
	return c
}
