package tui

import (
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/tui/chrome"
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

// newChrome is the chrome of theme t (package chrome: the frame's styles
// and the task list).
func newChrome(t themeKind) chrome.Chrome { return chrome.New(t) }
