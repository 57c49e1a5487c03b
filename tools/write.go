package tools

import (
	"encoding/json"
	"strings"
)

// writePrefixes start the texts of maria's write_to_file and
// replace_in_file, before the path written.
var writePrefixes = [...]string{"Content written to file at path: ", "Changes applied to ", "New file created and content written to "}

// ParseWrite reads maria's write_to_file / replace_in_file text
// (FormatWrite): where it wrote. nil when the text is not of this format.
func ParseWrite(text string) *WriteResult {
	var w *WriteResult
	for _, p := range writePrefixes {
		if strings.HasPrefix(text, p) {
			w = &WriteResult{Path: strings.TrimSpace(strings.TrimPrefix(text, p))}
		}
	}
	return w
}

// ParsePatch reads maria's apply_patch text (FormatPatch): a JSON summary
// {"message", "added", "modified", "deleted"}, or else a message. The diff
// is the patch the call sent (args are the call's).
func ParsePatch(text string, args json.RawMessage) *PatchResult {
	var w struct {
		Message  string   `json:"message"`
		Added    []string `json:"added"`
		Modified []string `json:"modified"`
		Deleted  []string `json:"deleted"`
	}
	p := &PatchResult{Diff: PatchText(args)}
	if json.Unmarshal([]byte(text), &w) == nil {
		p.Message, p.Added, p.Modified, p.Deleted = w.Message, w.Added, w.Modified, w.Deleted
	} else {
		p.Message = text
	}
	return p
}

// LooksLikeDiff checks the start of s for unified-diff markers: a hunk
// header and a file header.
func LooksLikeDiff(s string) bool {
	s = cut(s, 4096)
	hunk := strings.HasPrefix(s, "@@ ") || strings.Contains(s, "\n@@ ")
	file := strings.HasPrefix(s, "--- ") || strings.Contains(s, "\n--- ") ||
		strings.HasPrefix(s, "diff --git") || strings.Contains(s, "\ndiff --git")
	return hunk && file
}

// DiffLine is what one line of a unified diff or a V4A patch is.
type DiffLine uint8

const (
	DiffContext DiffLine = iota
	DiffHeader           // "--- a", "+++ b", "diff …", "index …", "*** Update File: …"
	DiffHunk             // "@@ … @@"
	DiffAdd
	DiffDel
)

// DiffLineOf classifies one line of a diff or patch.
func DiffLineOf(l string) DiffLine {
	switch {
	case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "),
		strings.HasPrefix(l, "diff "), strings.HasPrefix(l, "index "),
		strings.HasPrefix(l, "*** "):
		return DiffHeader
	}
	return HunkLineOf(l)
}

// DropPatchNoise removes the lines of a diff that carry no information in
// a preview ("*** Begin Patch", "*** End Patch", "index …"), so that a
// collapsed view shows changes rather than envelope. Big diffs are left
// alone: filtering would cost a full pass for lines nobody reads.
func DropPatchNoise(diff string) string {
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
