package tui

import (
	"charm.land/lipgloss/v2"
)

// themeKind is the palette the UI chrome uses.
type themeKind uint8

const (
	themeDark themeKind = iota
	themeLight
	themeNoColor
)

// themeFromConfig resolves the configured theme. NO_COLOR (any non-empty
// value, no-color.org) wins; "auto" takes the detected background, dark
// until the terminal answers.
func themeFromConfig(flag string, getenv func(string) string, isDark bool) (t themeKind, fixed bool) {
	if getenv != nil && getenv("NO_COLOR") != "" {
		return themeNoColor, true
	}
	switch flag {
	case "dark":
		return themeDark, true
	case "light":
		return themeLight, true
	}
	if isDark {
		return themeDark, false
	}
	return themeLight, false
}

// chrome holds the styles of perch's own frame (status bar, panels, task
// list). Transcript items are styled by the item renderer.
type chrome struct {
	noColor bool

	Dim, Faint, Bold, Title    lipgloss.Style
	Accent, OK, Warn, Err      lipgloss.Style
	Key, Hint                  lipgloss.Style
	Rule, RuleFocused          lipgloss.Style
	Selected, SelectedGutter   lipgloss.Style
	Badge, BadgeOn, BadgeAlert lipgloss.Style
	Match                      lipgloss.Style
	Flash, FlashErr            lipgloss.Style
	User                       lipgloss.Style
}

func newChrome(t themeKind) chrome {
	s := lipgloss.NewStyle
	if t == themeNoColor {
		// No colours at all; keep emphasis through attributes only.
		return chrome{
			noColor: true,
			Dim:     s(), Faint: s(), Bold: s().Bold(true), Title: s().Bold(true),
			Accent: s().Bold(true), OK: s(), Warn: s().Bold(true), Err: s().Bold(true),
			Key: s().Bold(true), Hint: s(),
			Rule: s(), RuleFocused: s().Bold(true),
			Selected: s().Reverse(true), SelectedGutter: s().Bold(true),
			Badge: s(), BadgeOn: s().Reverse(true), BadgeAlert: s().Reverse(true),
			Match: s().Reverse(true), Flash: s().Bold(true), FlashErr: s().Bold(true),
			User: s().Bold(true),
		}
	}
	ld := lipgloss.LightDark(t == themeDark)
	var (
		fg      = ld(lipgloss.Color("#2b2b2b"), lipgloss.Color("#dcdcdc"))
		dim     = ld(lipgloss.Color("#6b6b6b"), lipgloss.Color("#8a8a8a"))
		faint   = ld(lipgloss.Color("#a0a0a0"), lipgloss.Color("#5c5c5c"))
		accent  = ld(lipgloss.Color("#6b3fd4"), lipgloss.Color("#b69cff"))
		ok      = ld(lipgloss.Color("#1f8a3b"), lipgloss.Color("#6fd68c"))
		warn    = ld(lipgloss.Color("#a86400"), lipgloss.Color("#f0b45a"))
		errc    = ld(lipgloss.Color("#c42b2b"), lipgloss.Color("#ff6b6b"))
		selBg   = ld(lipgloss.Color("#e4ddfa"), lipgloss.Color("#2e2640"))
		badgeBg = ld(lipgloss.Color("#e8e8e8"), lipgloss.Color("#303030"))
		matchBg = ld(lipgloss.Color("#ffe08a"), lipgloss.Color("#8a6d00"))
		matchFg = ld(lipgloss.Color("#000000"), lipgloss.Color("#ffffff"))
		user    = ld(lipgloss.Color("#1b6fb8"), lipgloss.Color("#7cc4ff"))
	)
	return chrome{
		Dim:            s().Foreground(dim),
		Faint:          s().Foreground(faint),
		Bold:           s().Foreground(fg).Bold(true),
		Title:          s().Foreground(accent).Bold(true),
		Accent:         s().Foreground(accent),
		OK:             s().Foreground(ok),
		Warn:           s().Foreground(warn),
		Err:            s().Foreground(errc),
		Key:            s().Foreground(fg).Bold(true),
		Hint:           s().Foreground(dim),
		Rule:           s().Foreground(faint),
		RuleFocused:    s().Foreground(accent),
		Selected:       s().Background(selBg),
		SelectedGutter: s().Foreground(accent).Bold(true),
		Badge:          s().Foreground(dim).Background(badgeBg).Padding(0, 1),
		BadgeOn:        s().Foreground(selBg).Background(accent).Padding(0, 1).Bold(true),
		BadgeAlert:     s().Foreground(lipgloss.Color("#ffffff")).Background(errc).Padding(0, 1).Bold(true),
		Match:          s().Foreground(matchFg).Background(matchBg),
		Flash:          s().Foreground(ok),
		FlashErr:       s().Foreground(errc).Bold(true),
		User:           s().Foreground(user).Bold(true),
	}
}
