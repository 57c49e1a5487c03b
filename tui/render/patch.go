package render

import (
	"encoding/json"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
)

// writeBody draws write_to_file: where it wrote (the result has the
// absolute path) and the content that was appended, from the call's
// arguments.
func writeBody(r *Renderer, t *events.ToolItem, w int) ([]seg, []string) {
	path := ""
	if t.Result.Write != nil {
		path = t.Result.Write.Path
	} else if p, ok := strings.CutPrefix(strings.TrimSpace(t.Result.Text), "Content written to file at path: "); ok {
		path = p
	}
	var segs []seg
	if path != "" {
		segs = append(segs, linesSeg(r.p.dim.on("wrote ")+r.p.path.on(sanitize.Line(path))))
	} else if t.Result.Text != "" {
		segs = append(segs, textSeg(t.Result.Text, nil))
	}
	var args struct {
		Content string `json:"content"`
	}
	var tags []string
	if len(t.Call.Args) > 0 && json.Unmarshal(t.Call.Args, &args) == nil && args.Content != "" {
		c := textSeg(args.Content, nil)
		tags = append(tags, r.p.tag.on(plural(c.n, "line")))
		segs = append(segs, c)
	}
	return segs, tags
}

// patchBody draws apply_patch: the files added/modified/deleted, then the
// patch itself (from the result's diff, else the call's "patch" argument)
// as a coloured diff. HEAD sends the summary as a JSON document in a string
// (docs/protocol.md §7.5).
func patchBody(r *Renderer, t *events.ToolItem, w int) ([]seg, []string) {
	pr := t.Result.Patch
	if pr == nil {
		pr = events.WithDetails(t.Result, "apply_patch", t.Call).Patch
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
		var args struct {
			Patch string `json:"patch"`
		}
		if len(t.Call.Args) > 0 && json.Unmarshal(t.Call.Args, &args) == nil {
			diff = args.Patch
		}
	}
	if diff != "" {
		segs = append(segs, textSeg(dropPatchNoise(diff), r.p.diffChunk))
	}
	return segs, tags
}

// diffChunk colours unified-diff (and V4A patch) lines.
func (p paints) diffChunk(_ []int, ls []string, w int) []string {
	for i, l := range ls {
		f := fit(l, w)
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "),
			strings.HasPrefix(l, "diff "), strings.HasPrefix(l, "index "),
			strings.HasPrefix(l, "*** "):
			ls[i] = p.diffHeader.on(f)
		case strings.HasPrefix(l, "@@"):
			ls[i] = p.hunk.on(f)
		case strings.HasPrefix(l, "+"):
			ls[i] = p.add.on(f)
		case strings.HasPrefix(l, "-"):
			ls[i] = p.del.on(f)
		default:
			ls[i] = p.context.on(f)
		}
	}
	return ls
}

// looksLikeDiff checks the start of s for unified-diff markers: a hunk
// header and a file header.
func looksLikeDiff(s string) bool {
	s = cutBytes(s, 4096)
	hunk := strings.HasPrefix(s, "@@ ") || strings.Contains(s, "\n@@ ")
	file := strings.HasPrefix(s, "--- ") || strings.Contains(s, "\n--- ") ||
		strings.HasPrefix(s, "diff --git") || strings.Contains(s, "\ndiff --git")
	return hunk && file
}

// dropPatchNoise removes lines that carry no information in a preview
// ("*** Begin Patch", "*** End Patch", "index …"), so the collapsed view
// shows changes rather than envelope. Big diffs are left alone: filtering
// would cost a full pass for lines nobody reads.
func dropPatchNoise(diff string) string {
	if len(diff) > 1<<20 {
		return diff
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(diff, "\n") {
		t := strings.TrimRight(l, "\r\n")
		if t == "*** Begin Patch" || t == "*** End Patch" || strings.HasPrefix(t, "index ") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}
