package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perch-tui/perch/events"
)

// Fixtures are built by hand: the decoder that fills these types is being
// written in parallel, and these pin the shapes docs/protocol.md §7 documents.

func intp(n int) *int { return &n }

func args(v map[string]any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func toolItem(name string, a map[string]any, status events.ToolStatus, res *events.ToolResult) *events.Item {
	return &events.Item{
		Kind: events.ItemTool, ID: "call_" + name, Version: 1,
		Tool: &events.ToolItem{
			CallID: "call_" + name, Name: name,
			Call:   events.ToolCall{ID: "call_" + name, Name: name, Args: args(a)},
			Status: status, Result: res,
		},
	}
}

func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

const assistantMD = "Here is the plan:\n\n" +
	"1. Read `main.go`\n2. Fix the **bug** in the parser\n3. Run the tests\n\n" +
	"- nested\n  - items work\n\n" +
	"```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\n" +
	"| tool | calls |\n|---|---|\n| read_file | 3 |\n| execute_command | 12 |\n\n" +
	"> A quote, and a [link](https://example.com).\n"

func fixtures() map[string]*events.Item {
	legacyCmd := &events.ToolResult{
		Text: "Command go test ./... exited with status 1.\n=== STDOUT (9 lines) ===\n" + numbered("ok  pkg", 8) + "\n=== STDERR (2 lines) ===\nFAIL: TestX\n",
		Command: &events.CommandResult{
			Command: "go test ./...", ExitCode: intp(1),
			Stdout: numbered("ok  pkg", 8), Stderr: "FAIL: TestX\nexit status 1\n",
		},
	}
	headCmd := &events.ToolResult{
		Text: "Command go test ./... exited with status 1.\n=== STDOUT (9 lines) ===\n" + numbered("ok  pkg", 8) + "\n=== STDERR (3 lines) ===\nFAIL: TestX\nexit status 1\n",
	}
	fileContent := "package main\n\nimport \"fmt\"\n\n// main says hi.\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n\nfunc helper(a, b int) int {\n\treturn a + b\n}\n"
	items := map[string]*events.Item{
		"user": {Kind: events.ItemUser, Version: 1,
			Text: "Please fix the failing test in parser_test.go and explain what went wrong. " +
				"Also check that the README is up to date.\n\nThanks!"},
		"assistant": {Kind: events.ItemAssistant, Version: 1, Text: assistantMD,
			Usage: &events.Usage{InputTokens: 9213, OutputTokens: 74, CachedTokens: 9100, TotalTokens: 9287}},
		// A turn of tool calls only: its items follow, the turn still shows.
		"assistant_calls": {Kind: events.ItemAssistant, Version: 1, ToolCalls: []events.ToolCall{{ID: "c1", Name: "read_file"}, {ID: "c2", Name: "list_files"}},
			Usage: &events.Usage{InputTokens: 9610, OutputTokens: 74, CachedTokens: 9380, TotalTokens: 9684}},
		// A turn of tool calls only, with its reasoning: the reasoning shows.
		"assistant_thinking": {Kind: events.ItemAssistant, Version: 1, ToolCalls: []events.ToolCall{{ID: "c1", Name: "Edit"}},
			Thinking: "The test fails because next() stops one byte early when the input has no trailing newline.\n\n" +
				"I should look at the loop condition in lexer.go: it compares pos+1 with len(input).\n\n" +
				"Then fix it with an edit and run the tests again.\nIf they pass, update the CHANGELOG.\nAnd say what went wrong.",
			Usage: &events.Usage{InputTokens: 9610, OutputTokens: 74}},
		// The edit tools of each system show the file and a coloured diff.
		"edit_claude": toolItem("Edit", map[string]any{"file_path": "/home/u/proj/lexer/lexer.go",
			"old_string": "func (l *Lexer) next() byte {\n\tif l.pos+1 >= len(l.in) {\n\t\treturn 0\n\t}",
			"new_string": "func (l *Lexer) next() byte {\n\tif l.pos >= len(l.in) {\n\t\treturn 0\n\t}"}, events.ToolOK, &events.ToolResult{
			Text: "The file /home/u/proj/lexer/lexer.go has been updated successfully."}),
		"multiedit_claude": toolItem("MultiEdit", map[string]any{"file_path": "README.md", "edits": []any{
			map[string]any{"old_string": "v1.2", "new_string": "v1.3"},
			map[string]any{"old_string": "## Usage", "new_string": "## Usage\n\nRun `perch demo`."}}}, events.ToolOK, &events.ToolResult{
			Text: "Applied 2 edits to README.md"}),
		"edit_codex": toolItem("apply_patch", map[string]any{"changes": []any{
			map[string]any{"path": "calc/add.go", "kind": map[string]any{"type": "update"}, "diff": "@@ -1,3 +1,3 @@\n package calc\n-func Add(a, b int) int { return a - b }\n+func Add(a, b int) int { return a + b }\n"},
			map[string]any{"path": "calc/add_test.go", "kind": "add", "diff": "package calc\n\nfunc TestAdd(t *testing.T) {}\n"}}}, events.ToolOK, &events.ToolResult{
			Text: "update calc/add.go\nadd calc/add_test.go"}),
		"edit_codex_exec": toolItem("apply_patch", map[string]any{"changes": []any{
			map[string]any{"path": "hello.sh", "kind": "add"}, map[string]any{"path": "notes.txt", "kind": "update"}}}, events.ToolOK, &events.ToolResult{
			Text: "add hello.sh\nupdate notes.txt"}),
		"edit_running": toolItem("Edit", map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y"}, events.ToolRunning, nil),
		"cmd_legacy":   toolItem("execute_command", map[string]any{"command": "go test ./..."}, events.ToolOK, legacyCmd),
		"cmd_head":     toolItem("execute_command", map[string]any{"command": "go test ./..."}, events.ToolOK, headCmd),
		"cmd_ok": toolItem("execute_command", map[string]any{"command": "ls"}, events.ToolOK, &events.ToolResult{
			Text: "Command ls exited with status 0.\n=== STDOUT (3 lines) ===\nREADME.md\nmain.go\n"}),
		"cmd_timeout": toolItem("execute_command", map[string]any{"command": "sleep 5"}, events.ToolOK, &events.ToolResult{
			Text: "Command sleep 5 timed out after 1000 seconds."}),
		"cmd_error": toolItem("execute_command", map[string]any{"command": "make deploy"}, events.ToolError, &events.ToolResult{
			IsError: true, Text: "Error executing command: working directory /srv/app does not exist", ErrorText: "Error executing command: working directory /srv/app does not exist"}),
		"running":   toolItem("execute_command", map[string]any{"command": "npm install"}, events.ToolRunning, nil),
		"cancelled": toolItem("execute_command", map[string]any{"command": "make all"}, events.ToolCancelled, nil),
		"unknown":   toolItem("read_file", map[string]any{"path": "a.txt"}, events.ToolUnknown, nil),
		"error": toolItem("read_file", map[string]any{"path": "missing.go"}, events.ToolError, &events.ToolResult{
			IsError: true, Text: "Error reading file: File not found: missing.go", ErrorText: "Error reading file: File not found: missing.go"}),
		"read_legacy": toolItem("read_file", map[string]any{"path": "main.go", "start_line": 1, "end_line": 8}, events.ToolOK, &events.ToolResult{
			File: &events.FileContent{Path: "main.go", StartLine: 1, EndLine: 8, Content: fileContent}}),
		"read_head": toolItem("read_file", map[string]any{"path": "main.go"}, events.ToolOK, &events.ToolResult{
			Text: "File: main.go (lines 1-12 (12 lines))\n L01 | package main\n L02 | \n L03 | import \"fmt\"\n L04 | \n L05 | // main says hi.\n L06 | func main() {\n L07 | \tfmt.Println(\"hi\")\n L08 | }\n L09 | \n L10 | func helper(a, b int) int {\n L11 | \treturn a + b\n L12 | }"}),
		"list_legacy": toolItem("list_files", map[string]any{"path": "."}, events.ToolOK, &events.ToolResult{
			Listing: &events.FileListing{Path: ".", Entries: []events.FileEntry{
				{Name: ".git", Kind: "directory", Hidden: true}, {Name: "README.md", Kind: "file"},
				{Name: "cmd", Kind: "directory"}, {Name: "go.mod", Kind: "file"}, {Name: "go.sum", Kind: "file"},
				{Name: "latest", Kind: "symlink"}, {Name: "main.go", Kind: "file"}, {Name: "sock", Kind: "other"},
			}}}),
		"list_head": toolItem("list_files", map[string]any{"path": "src"}, events.ToolOK, &events.ToolResult{
			Text: "Directory: src\nTotal: 3 items (2 files, 1 directories)\n\n📄 app.py\n📁 lib\n📄 .env [hidden]"}),
		"write": toolItem("write_to_file", map[string]any{"path": "notes.txt", "content": "first line\nsecond line\n"}, events.ToolOK, &events.ToolResult{
			Text: "Content written to file at path: /home/u/proj/notes.txt"}),
		"patch": toolItem("apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: src/app.py\n@@ def main():\n-    print('old')\n+    print('new')\n+    return 0\n*** Add File: hello.txt\n+hello\n*** End Patch"}, events.ToolOK, &events.ToolResult{
			Text: "{\n  \"success\": true,\n  \"message\": \"Success. Updated the following files:\\nA hello.txt\\nM src/app.py\",\n  \"added\": [\n    \"hello.txt\"\n  ],\n  \"modified\": [\n    \"src/app.py\"\n  ],\n  \"deleted\": []\n}"}),
		"diff_generic": toolItem("git_diff", map[string]any{"path": "a.go"}, events.ToolOK, &events.ToolResult{
			Text: "diff --git a/a.go b/a.go\nindex 1..2 100644\n--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n package a\n-var x = 1\n+var x = 2\n"}),
		"search_legacy": toolItem("search_files", map[string]any{"path": ".", "regex": "TODO"}, events.ToolOK, &events.ToolResult{
			Search: &events.SearchResult{Message: "Search completed. Found 2 matches.", Total: 2, Hits: []events.SearchHit{
				{Path: "main.go", Line: 5, Context: "4: \n5: // TODO: fix\n6: func main() {"},
				{Path: "lib/x.go", Line: 2, Context: "1: package lib\n2: // TODO later"},
			}}}),
		"search_head": toolItem("search_files", map[string]any{"path": "src", "regex": "TODO"}, events.ToolOK, &events.ToolResult{
			Text: "Search completed. Found 1 matches.\n\nsrc/main.go:5\n4: \n5: // TODO: fix\n6: func main() {\n"}),
		"generic": toolItem("mystery_tool", map[string]any{"query": "weather"}, events.ToolOK, &events.ToolResult{
			Text: numbered("result line", 12)}),
		"todo": toolItem("todo", map[string]any{"action": "create"}, events.ToolOK, &events.ToolResult{
			Text: "✅ Operation completed: Created 2 new todo items", Todos: []events.Todo{{ID: "1"}, {ID: "2"}}}),
		"pruned": func() *events.Item {
			it := toolItem("execute_command", map[string]any{"command": "cat big.log"}, events.ToolOK, &events.ToolResult{
				Text: "Command cat big.log exited with status 0.\n=== STDOUT (2 lines) ===\nline\n"})
			it.Tool.Pruned = true
			return it
		}(),
		"hostile": toolItem("execute_command", map[string]any{"command": "cat \x1b]0;pwn\x07evil\u202e.txt"}, events.ToolOK, &events.ToolResult{
			Text: "Command x exited with status 0.\n=== STDOUT (5 lines) ===\n\x1b[31mred\x1b[0m text\x1b]52;c;ZXZpbA==\x07\nprogress 10%\rprogress 100%\r\nbad \xff\xfe bytes\nbidi \u202eevil\u202c done\n\x1b[2J\x1b[Hcleared?\ttab"}),
		"hostile_user": {Kind: events.ItemUser, Version: 1, Text: "hi \x1b[2J\x1b]0;title\x07there\rX\u2066iso\u2069 \xff end"},
		"notice_info":  {Kind: events.ItemNotice, Version: 1, Level: events.LevelInfo, Text: "Context pruned: 182k → 96k tokens"},
		"notice_warn":  {Kind: events.ItemNotice, Version: 1, Level: events.LevelWarning, Text: "Reconnecting to the daemon (attempt 3)…"},
		"notice_error": {Kind: events.ItemNotice, Version: 1, Level: events.LevelError, Text: "Provider failed: 429 Too Many Requests. The model is overloaded; the run was stopped and can be resumed by sending another message."},
	}
	return items
}

func todoFixture() []events.Todo {
	return []events.Todo{
		{ID: "1", Content: "Read the parser", Status: "completed", Priority: "high"},
		{ID: "2", Content: "Fix the off-by-one in the tokenizer loop", Status: "in_progress", Priority: "high", Notes: "see line 212"},
		{ID: "3", Content: "Run the full test suite and make sure nothing else broke", Status: "pending", Priority: "medium"},
		{ID: "4", Content: "Update README", Status: "pending", Priority: "low"},
	}
}
