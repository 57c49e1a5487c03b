package tools

import "strings"

// listHeader starts list_files' HEAD text.
const listHeader = "Directory: "

// IsListing says whether text is of FormatListing, cheaply: a decoder that
// reads the listing only when it is drawn checks this first.
func IsListing(text string) bool { return strings.HasPrefix(text, listHeader) }

// listIcons are list_files' entry icons and the kinds they stand for.
var listIcons = [...]struct{ icon, kind string }{
	{"📁 ", "directory"}, {"📄 ", "file"}, {"🔗 ", "symlink"}, {"❓ ", "other"},
}

// ParseListing reads maria's list_files text (FormatListing): "Directory:
// p\nTotal: …\n\n<icon> name". nil when the text is not of this format.
func ParseListing(text string) *FileListing {
	if !IsListing(text) {
		return nil
	}
	lines := strings.Split(text, "\n")
	l := &FileListing{Path: strings.TrimPrefix(lines[0], listHeader)}
	n := 0
	for _, line := range lines[1:] {
		for _, ic := range listIcons {
			if strings.HasPrefix(line, ic.icon) {
				n++
				break
			}
		}
	}
	if n > 0 {
		l.Entries = make([]FileEntry, 0, n) // kept: no room to spare
	}
	for _, line := range lines[1:] {
		kind := ""
		for _, ic := range listIcons {
			if strings.HasPrefix(line, ic.icon) {
				kind, line = ic.kind, strings.TrimPrefix(line, ic.icon)
				break
			}
		}
		if kind == "" {
			continue
		}
		e := FileEntry{Name: line, Kind: kind}
		if n, ok := strings.CutSuffix(line, " [hidden]"); ok {
			e.Name, e.Hidden = n, true
		}
		l.Entries = append(l.Entries, e)
	}
	return l
}
