package styles

// chromaStyle names the chroma style used to highlight file contents shown
// by tools. "" means no highlighting.
func chromaStyle(theme Theme) string {
	switch theme {
	case Light:
		return "github"
	case NoColor:
		return ""
	}
	return "github-dark"
}
