package tui

import "github.com/perch-tui/perch/tui/chrome"

// maxBannerRows bounds the banner (Config.Banner) on screen.
const maxBannerRows = 3

// bannerLines is Config.Banner (lines separated by "\n") wrapped to the
// width, dimmed, at most maxBannerRows rows (the last one cut).
func (m *Model) bannerLines() []string {
	rows := chrome.WrapLines(m.cfg.Banner, max(m.w-2, 1))
	if len(rows) > maxBannerRows {
		rows = rows[:maxBannerRows]
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = m.ch.Dim.Render(truncate("  "+r, m.w))
	}
	return out
}
