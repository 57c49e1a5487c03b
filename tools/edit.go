package tools

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// editArgs is how an edit tool's call describes the change it makes.
type editArgs uint8

const (
	editNone editArgs = iota
	// editReplace: one file, old text replaced by new (Claude Code's Edit
	// old_string/new_string, maria's replace_in_file search/replace).
	editReplace
	// editMulti: one file, several replacements (Claude Code's MultiEdit
	// "edits": [{old_string, new_string}]).
	editMulti
	// editContent: content written to one file (Claude Code's Write,
	// maria's write_to_file, which appends).
	editContent
	// editChanges: codex's file changes ("changes", a list of {path,
	// kind, diff} or, in older releases, a map of path to {add|update|
	// delete}). maria's apply_patch shares the name; its V4A "patch" is
	// drawn from the patch itself (PatchText).
	editChanges
)

// Edit operations, as FileEdit.Op says them.
const (
	EditAdd    = "add"
	EditUpdate = "update"
	EditDelete = "delete"
)

// FileEdit is the change an edit tool's call makes to one file.
type FileEdit struct {
	Path string
	// Op is EditAdd, EditUpdate or EditDelete; "" when the call does not
	// say (an Edit is an update, a Write may add or replace).
	Op string
	// MovedTo is the new path of a renamed file ("" when not renamed).
	MovedTo string
	// Diff is the change as the lines of a unified diff without file
	// headers: "+added", "-removed", " context", and "@@" lines between
	// hunks (with line numbers only where the tool gave them). "" when
	// the call gives no content (a codex change of an older release).
	Diff string
}

// Stat counts the added and removed lines of the edit's diff.
func (e FileEdit) Stat() (added, removed int) {
	for l := range strings.SplitSeq(e.Diff, "\n") {
		switch HunkLineOf(l) {
		case DiffAdd:
			added++
		case DiffDel:
			removed++
		}
	}
	return added, removed
}

// maxDiffInput bounds the text an edit is diffed from: a line diff of
// megabytes would stall the screen, so bigger edits show as the old lines
// removed and the new ones added.
const maxDiffInput = 256 << 10

// Edits reads the changes an edit tool's call makes from its arguments
// (args as JSON): one FileEdit a file, in the order the call gives them.
// nil for a tool that edits no file or arguments that say nothing.
func Edits(name string, args json.RawMessage) []FileEdit {
	shape := Lookup(name).edit
	if shape == editNone || len(args) == 0 || args[0] != '{' {
		return nil
	}
	var a map[string]json.RawMessage
	if json.Unmarshal(args, &a) != nil {
		return nil
	}
	path := str(a["file_path"])
	if path == "" {
		path = str(a["path"])
	}
	switch shape {
	case editReplace:
		oldKey, newKey := "old_string", "new_string"
		if _, ok := a[oldKey]; !ok {
			oldKey, newKey = "search", "replace"
		}
		if path == "" && str(a[newKey]) == "" && str(a[oldKey]) == "" {
			return nil
		}
		return []FileEdit{{Path: path, Op: EditUpdate, Diff: lineDiff(str(a[oldKey]), str(a[newKey]))}}
	case editMulti:
		var edits []struct {
			Old string `json:"old_string"`
			New string `json:"new_string"`
		}
		if json.Unmarshal(a["edits"], &edits) != nil || len(edits) == 0 {
			return nil
		}
		var parts []string
		for _, e := range edits {
			parts = append(parts, lineDiff(e.Old, e.New))
		}
		return []FileEdit{{Path: path, Op: EditUpdate, Diff: strings.Join(parts, "\n@@\n")}}
	case editContent:
		content := str(a["content"])
		if path == "" && content == "" {
			return nil
		}
		return []FileEdit{{Path: path, Diff: prefixLines(content, "+")}}
	case editChanges:
		return changes(a["changes"])
	}
	return nil
}

// EditFiles lists the files an edit tool's call changes.
func EditFiles(name string, args json.RawMessage) []string {
	var files []string
	for _, e := range Edits(name, args) {
		if e.Path != "" {
			files = append(files, e.Path)
		}
	}
	return files
}

// changes reads codex's file changes: a list of {path, kind, diff} (kind
// a string, or an object {type, move_path}), or the older map of path to
// {"add": {content}} | {"delete": {content}} | {"update": {unified_diff,
// move_path}} (or {"type": …, …} in its place).
func changes(raw json.RawMessage) []FileEdit {
	var list []struct {
		Path string          `json:"path"`
		Kind json.RawMessage `json:"kind"`
		Diff string          `json:"diff"`
	}
	if json.Unmarshal(raw, &list) == nil {
		out := make([]FileEdit, 0, len(list))
		for _, c := range list {
			e := FileEdit{Path: c.Path}
			if k := str(c.Kind); k != "" {
				e.Op = k
			} else {
				var ko struct {
					Type     string `json:"type"`
					MovePath string `json:"move_path"`
				}
				_ = json.Unmarshal(c.Kind, &ko)
				e.Op, e.MovedTo = ko.Type, ko.MovePath
			}
			e.Diff = changeDiff(e.Op, c.Diff)
			out = append(out, e)
		}
		return out
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	out := make([]FileEdit, 0, len(paths))
	for _, p := range paths {
		var c map[string]json.RawMessage
		_ = json.Unmarshal(m[p], &c)
		body := c
		op := str(c["type"])
		if op == "" {
			for _, k := range []string{EditAdd, EditDelete, EditUpdate} {
				if v, ok := c[k]; ok {
					op = k
					body = nil
					_ = json.Unmarshal(v, &body)
				}
			}
		}
		text := str(body["unified_diff"])
		if text == "" {
			text = str(body["content"])
		}
		out = append(out, FileEdit{Path: p, Op: op, MovedTo: str(body["move_path"]), Diff: changeDiff(op, text)})
	}
	return out
}

// changeDiff is the diff of one codex change: an added file's content as
// added lines, a deleted one's as removed lines, an update's unified diff
// without its file headers.
func changeDiff(op, text string) string {
	if text == "" {
		return ""
	}
	switch op {
	case EditAdd:
		if !LooksLikeDiff(text) {
			return prefixLines(text, "+")
		}
	case EditDelete:
		if !LooksLikeDiff(text) {
			return prefixLines(text, "-")
		}
	}
	return dropFileHeaders(text)
}

// dropFileHeaders removes the "diff …", "index …", "--- a" and "+++ b"
// lines before the first hunk of a unified diff: the file is named apart.
func dropFileHeaders(diff string) string {
	rest := diff
	for rest != "" {
		l, after, _ := strings.Cut(rest, "\n")
		if DiffLineOf(l) != DiffHeader {
			break
		}
		rest = after
	}
	return strings.TrimRight(rest, "\n")
}

// lineDiff is a line diff of a replacement, as hunks without file headers
// whose line numbers (relative to the replaced text, not the file) are
// left out.
func lineDiff(before, after string) string {
	if before != "" && !strings.HasSuffix(before, "\n") {
		before += "\n"
	}
	if after != "" && !strings.HasSuffix(after, "\n") {
		after += "\n"
	}
	if len(before)+len(after) > maxDiffInput {
		return strings.TrimRight(prefixLines(before, "-")+"\n"+prefixLines(after, "+"), "\n")
	}
	u, err := udiff.ToUnifiedDiff("", "", before, udiff.Lines(before, after), udiff.DefaultContextLines)
	if err != nil {
		return strings.TrimRight(prefixLines(before, "-")+"\n"+prefixLines(after, "+"), "\n")
	}
	var b strings.Builder
	for i, h := range u.Hunks {
		if i > 0 {
			b.WriteString("@@\n")
		}
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				b.WriteByte('-')
			case udiff.Insert:
				b.WriteByte('+')
			default:
				b.WriteByte(' ')
			}
			b.WriteString(strings.TrimSuffix(l.Content, "\n"))
			b.WriteByte('\n')
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// prefixLines puts p before every line of s (its final newline dropped).
func prefixLines(s, p string) string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return ""
	}
	return p + strings.ReplaceAll(s, "\n", "\n"+p)
}

// HunkLineOf classifies one line of a FileEdit's Diff. Unlike DiffLineOf
// it knows no file headers (there are none), so an added "++ x" line is
// an addition.
func HunkLineOf(l string) DiffLine {
	switch {
	case strings.HasPrefix(l, "@@"):
		return DiffHunk
	case strings.HasPrefix(l, "+"):
		return DiffAdd
	case strings.HasPrefix(l, "-"):
		return DiffDel
	}
	return DiffContext
}
