// Package mdstyle is the glamour style perch renders assistant markdown
// with, for each of perch's themes: glamour's style types, built from the
// colours of package styles, which itself knows only lipgloss.
package mdstyle

import (
	gansi "charm.land/glamour/v2/ansi"
	gstyles "charm.land/glamour/v2/styles"

	"github.com/perch-tui/perch/styles"
)

// Config returns the glamour style of a theme.
//
// Dark and Light are copies of glamour's own with the Document, Paragraph
// and Text foreground colours cleared: with them set, glamour wraps every
// padding space in its own SGR pair, which made output 8× larger and
// rendering 2× slower. Text then takes the terminal's
// default foreground, which is what the user picked anyway.
//
// The document margin is zeroed because the transcript draws its own
// gutter; glamour's two-column margin would waste width on every line.
//
// NoColor uses glamour's "notty" style (ASCII markers, no colours).
//
// The glamour package-level configs are only read: the struct copy is
// shallow, so fields are replaced with new pointers, never written through.
func Config(theme styles.Theme) gansi.StyleConfig {
	var c gansi.StyleConfig
	switch theme {
	case styles.Light:
		c = gstyles.LightStyleConfig
	case styles.NoColor:
		c = gstyles.NoTTYStyleConfig
	default:
		c = gstyles.DarkStyleConfig
		if c.CodeBlock.Chroma != nil {
			// Glamour's comment colour #676767 lies exactly between the
			// 256-colour palette's 241 and 242, and the conversion picks
			// either from run to run: the same text drew differently. 241
			// (#626262) is the nearest colour that is not a tie.
			ch, comment := *c.CodeBlock.Chroma, "#626262"
			ch.Comment.Color = &comment
			c.CodeBlock.Chroma = &ch
		}
	}
	c.Document.Color = nil
	c.Document.BackgroundColor = nil
	c.Paragraph.Color = nil
	c.Text.Color = nil
	zero := uint(0)
	c.Document.Margin = &zero
	return c
}
