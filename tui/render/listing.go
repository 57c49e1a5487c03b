package render

import (
	"fmt"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/styles"
)

// listFilesBody draws list_files entries with directory/file markers and
// the counts as header tags. HEAD text ("📁 name [hidden]" rows) is parsed
// into the same shape; its emoji markers are replaced because their width
// differs between terminals.
func listFilesBody(r *Renderer, t *events.ToolItem, w int) ([]seg, []string) {
	fl := t.Result.Listing
	if fl == nil {
		fl = parseListText(t.Result.Text)
	}
	if fl == nil {
		return genericBody(r, t, w)
	}
	if len(fl.Entries) == 0 {
		return []seg{linesSeg(r.p.subtle.on("(empty)"))}, nil
	}
	files, dirs := 0, 0
	for _, e := range fl.Entries {
		if e.Kind == "directory" {
			dirs++
		} else {
			files++
		}
	}
	tags := []string{r.p.tag.on(fmt.Sprintf("%s, %s", plural(files, "file"), plural(dirs, "dir")))}
	entries := fl.Entries
	p := r.p
	return []seg{{n: len(entries), gen: func(i int) string {
		e := entries[i]
		name := sanitize.Line(e.Name)
		var s string
		switch e.Kind {
		case "directory":
			s = p.dir.on(styles.IconDir + " " + name + "/")
		case "symlink":
			s = p.symlink.on(styles.IconSymlink + " " + name)
		case "file":
			s = p.file.on(styles.IconFile + " " + name)
		default:
			s = p.file.on(styles.IconOther + " " + name)
		}
		if e.Hidden {
			s += p.subtle.on(" (hidden)")
		}
		return s
	}}}, tags
}

// parseListText reads "Directory: …\nTotal: …\n\n📁 name [hidden]" text.
func parseListText(text string) *events.FileListing {
	if strings.TrimSpace(text) == "No files found." {
		return &events.FileListing{}
	}
	head, body, ok := strings.Cut(text, "\n\n")
	path, found := strings.CutPrefix(head, "Directory: ")
	if !ok || !found {
		return nil
	}
	path, _, _ = strings.Cut(path, "\n")
	fl := &events.FileListing{Path: path}
	for _, l := range strings.Split(trimTrailingNewlines(body), "\n") {
		e := events.FileEntry{Kind: "other"}
		for _, k := range [...][2]string{{"📁 ", "directory"}, {"📄 ", "file"}, {"🔗 ", "symlink"}, {"❓ ", "other"}} {
			if rest, ok := strings.CutPrefix(l, k[0]); ok {
				e.Kind, l = k[1], rest
				break
			}
		}
		if rest, ok := strings.CutSuffix(l, " [hidden]"); ok {
			e.Hidden, l = true, rest
		}
		e.Name = l
		fl.Entries = append(fl.Entries, e)
	}
	return fl
}
