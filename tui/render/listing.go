package render

import (
	"fmt"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/tools"
)

// listFilesBody draws list_files entries with directory/file markers and
// the counts as header tags. HEAD text ("📁 name [hidden]" rows) is parsed
// into the same shape; its emoji markers are replaced because their width
// differs between terminals.
func listFilesBody(r *Renderer, t *events.ToolItem, w int) ([]seg, []string) {
	res := t.Output()
	fl := res.FileListing()
	if fl == nil {
		fl = events.WithDetails(res, tools.FormatListing, t.Call).FileListing()
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
