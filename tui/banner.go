package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// maxBannerRows bounds the banner (Config.Banner) on screen.
const maxBannerRows = 3

// bannerLines is Config.Banner (lines separated by "\n") wrapped to the
// width, dimmed, at most maxBannerRows rows (the last one cut).
func (m *Model) bannerLines() []string {
	// Wrapped at spaces only: a command line's URL and paths stay whole
	// words, for a terminal's copy.
	rows := strings.Split(ansi.Wrap(m.cfg.Banner, max(m.w-2, 1), ""), "\n")
	if len(rows) > maxBannerRows {
		rows = rows[:maxBannerRows]
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = m.ch.Dim.Render(truncate("  "+r, m.w))
	}
	return out
}
