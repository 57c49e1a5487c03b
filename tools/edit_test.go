package tools

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestEdits: what each system's edit tool changes, read from its call.
func TestEdits(t *testing.T) {
	cases := []struct {
		name, args string
		want       []FileEdit
	}{
		{ClaudeEdit, `{"file_path":"/w/a.go","old_string":"x := 1\nreturn x","new_string":"x := 2\nreturn x"}`,
			[]FileEdit{{Path: "/w/a.go", Op: EditUpdate, Diff: "-x := 1\n+x := 2\n return x"}}},
		{ClaudeMultiEdit, `{"file_path":"b.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":""}]}`,
			[]FileEdit{{Path: "b.go", Op: EditUpdate, Diff: "-a\n+b\n@@\n-c"}}},
		{ClaudeWrite, `{"file_path":"n.txt","content":"one\ntwo\n"}`,
			[]FileEdit{{Path: "n.txt", Diff: "+one\n+two"}}},
		{MariaWrite, `{"path":"CHANGELOG.md","content":"## 2026\n"}`,
			[]FileEdit{{Path: "CHANGELOG.md", Diff: "+## 2026"}}},
		{MariaReplace, `{"path":"r.py","search":"old","replace":"new"}`,
			[]FileEdit{{Path: "r.py", Op: EditUpdate, Diff: "-old\n+new"}}},
		// codex exec: no content comes with a change
		{CodexApplyPatch, `{"changes":[{"path":"calc/add.go","kind":"update"}]}`,
			[]FileEdit{{Path: "calc/add.go", Op: EditUpdate}}},
		// codex app-server: the diff, and a kind object with a move
		{CodexApplyPatch, `{"changes":[{"path":"a.txt","kind":{"type":"add"},"diff":"hi\n"},{"path":"b.go","kind":{"type":"update","move_path":"c.go"},"diff":"--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@\n-x\n+y\n"}]}`,
			[]FileEdit{{Path: "a.txt", Op: EditAdd, Diff: "+hi"}, {Path: "b.go", Op: EditUpdate, MovedTo: "c.go", Diff: "@@ -1 +1 @@\n-x\n+y"}}},
		// codex's older events: a map of path to change
		{CodexApplyPatch, `{"changes":{"z.txt":{"delete":{"content":"gone\n"}},"a.go":{"update":{"unified_diff":"@@ -1 +1 @@\n-1\n+2\n","move_path":null}}}}`,
			[]FileEdit{{Path: "a.go", Op: EditUpdate, Diff: "@@ -1 +1 @@\n-1\n+2"}, {Path: "z.txt", Op: EditDelete, Diff: "-gone"}}},
		// maria's apply_patch is a V4A patch, drawn from PatchText
		{MariaPatch, `{"patch":"*** Begin Patch\n*** End Patch"}`, nil},
		{MariaCommand, `{"command":"ls"}`, nil},
		{ClaudeEdit, `not json`, nil},
	}
	for _, c := range cases {
		got := Edits(c.name, json.RawMessage(c.args))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Edits(%s, %s)\n got %#v\nwant %#v", c.name, c.args, got, c.want)
		}
	}
	if a, r := (FileEdit{Diff: "+++x\n-a\n b\n+c"}).Stat(); a != 2 || r != 1 {
		t.Errorf("Stat = +%d -%d, want +2 -1", a, r)
	}
	if got := KeyArg(CodexApplyPatch, json.RawMessage(`{"changes":[{"path":"a","kind":"add"},{"path":"b","kind":"update"}]}`), ""); got != "a +1 more" {
		t.Errorf("KeyArg of codex changes = %q", got)
	}
	if got := KeyArg(ClaudeEdit, json.RawMessage(`{"file_path":"/w/a.go","old_string":"x"}`), ""); got != "/w/a.go" {
		t.Errorf("KeyArg of Edit = %q", got)
	}
}
