package render

import (
	"strconv"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/tools"
)

// writeBody draws write_to_file: where it wrote (the result has the
// absolute path) and the content that was appended, from the call's
// arguments.
func writeBody(r *Renderer, t *events.ToolItem, w int) ([]seg, []string) {
	res := t.Output()
	wr := res.Write
	if wr == nil {
		wr = tools.ParseWrite(strings.TrimSpace(res.Text))
	}
	var segs []seg
	if wr != nil && wr.Path != "" {
		segs = append(segs, linesSeg(r.p.dim.on("wrote ")+r.p.path.on(sanitize.Line(wr.Path))))
	} else if res.Text != "" {
		segs = append(segs, textSeg(res.Text, nil))
	}
	var tags []string
	if content := tools.WriteContent(t.Call.Args); content != "" {
		c := textSeg(content, nil)
		tags = append(tags, r.p.tag.on(plural(c.n, "line")))
		segs = append(segs, c)
	}
	return segs, tags
}

// patchBody draws apply_patch: the files added/modified/deleted, then the
// patch itself (from the result's diff, else the call's patch) as a
// coloured diff. HEAD sends the summary as a JSON document in a string
// (docs/protocol.md §7.5).
func patchBody(r *Renderer, t *events.ToolItem, w int) ([]seg, []string) {
	res := t.Output()
	pr := res.Patch
	if pr == nil {
		pr = events.WithDetails(res, tools.FormatPatch, t.Call).Patch
	}
	if pr == nil {
		return genericBody(r, t, w)
	}
	var segs []seg
	var files []string
	for _, f := range pr.Added {
		files = append(files, r.p.add.on("A "+sanitize.Line(f)))
	}
	for _, f := range pr.Modified {
		files = append(files, r.p.hunk.on("M "+sanitize.Line(f)))
	}
	for _, f := range pr.Deleted {
		files = append(files, r.p.del.on("D "+sanitize.Line(f)))
	}
	if len(files) == 0 && pr.Message != "" {
		segs = append(segs, textSeg(pr.Message, nil))
	}
	segs = append(segs, linesSeg(files...))
	var tags []string
	if n := len(pr.Added) + len(pr.Modified) + len(pr.Deleted); n > 0 {
		tags = append(tags, r.p.tag.on(plural(n, "file")))
	}
	diff := pr.Diff
	if diff == "" {
		diff = tools.PatchText(t.Call.Args)
	}
	if diff != "" {
		segs = append(segs, textSeg(tools.DropPatchNoise(diff), r.p.diffChunk))
	}
	return segs, tags
}

// editBody draws the changes an edit tool's call makes (tools.Edits):
// each file's diff, coloured, under a line naming the file when the
// header's path is not enough (several files, a rename, or no diff).
// Tags count the files and the lines added and removed, as crush and
// opencode show them.
func (r *Renderer) editBody(edits []tools.FileEdit) ([]seg, []string) {
	var segs []seg
	added, removed := 0, 0
	for _, e := range edits {
		if len(edits) > 1 || e.Diff == "" || e.MovedTo != "" {
			segs = append(segs, linesSeg(r.p.fileLine(e)))
		}
		if e.Diff != "" {
			segs = append(segs, textSeg(e.Diff, r.p.hunkChunk))
		}
		a, d := e.Stat()
		added, removed = added+a, removed+d
	}
	var tags []string
	if len(edits) > 1 {
		tags = append(tags, r.p.tag.on(plural(len(edits), "file")))
	}
	var stat []string
	if added > 0 {
		stat = append(stat, r.p.add.on("+"+strconv.Itoa(added)))
	}
	if removed > 0 {
		stat = append(stat, r.p.del.on("-"+strconv.Itoa(removed)))
	}
	if len(stat) > 0 {
		tags = append(tags, strings.Join(stat, " "))
	}
	return segs, tags
}

// fileLine names one file of an edit: "A new.txt", "M a.go", "D old.go",
// "R a.go → b.go", in the colour of what happened to it.
func (p paints) fileLine(e tools.FileEdit) string {
	path := sanitize.Line(e.Path)
	switch {
	case e.MovedTo != "":
		return p.hunk.on("R " + path + " → " + sanitize.Line(e.MovedTo))
	case e.Op == tools.EditAdd:
		return p.add.on("A " + path)
	case e.Op == tools.EditDelete:
		return p.del.on("D " + path)
	}
	return p.hunk.on("M " + path)
}

// hunkChunk colours the lines of an edit's diff (tools.HunkLineOf).
func (p paints) hunkChunk(_ []int, ls []string, w int) []string {
	return p.colourDiff(ls, w, tools.HunkLineOf)
}

// diffChunk colours unified-diff (and V4A patch) lines.
func (p paints) diffChunk(_ []int, ls []string, w int) []string {
	return p.colourDiff(ls, w, tools.DiffLineOf)
}

func (p paints) colourDiff(ls []string, w int, classify func(string) tools.DiffLine) []string {
	for i, l := range ls {
		f := fit(l, w)
		switch classify(l) {
		case tools.DiffHeader:
			ls[i] = p.diffHeader.on(f)
		case tools.DiffHunk:
			ls[i] = p.hunk.on(f)
		case tools.DiffAdd:
			ls[i] = p.add.on(f)
		case tools.DiffDel:
			ls[i] = p.del.on(f)
		default:
			ls[i] = p.context.on(f)
		}
	}
	return ls
}
