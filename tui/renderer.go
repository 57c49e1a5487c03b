package tui

// newItemRenderer picks the transcript item renderer for a theme.
func newItemRenderer(t themeKind, ch chrome) itemRenderer {
	return newPlainRenderer(ch)
}
