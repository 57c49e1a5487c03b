package fakedaemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The scripted agent pretends to work on this small Go project. SeedDemo
// writes it to disk so that the listing and file contents the agent reports
// match what a user would find in the task's cwd.

const readmeText = `# wordfreq

A tiny Go library and CLI that counts word frequencies
in text files and prints the top N words.

## Usage

    wordfreq -n 10 book.txt

## Layout

- ` + "`internal/count`" + ` holds the counting logic
- ` + "`main.go`" + ` is the CLI
`

var projectFiles = []struct{ path, content string }{
	{"Makefile", "build:\n\tgo build -o bin/wordfreq .\n\ntest:\n\tgo test ./...\n"},
	{"README.md", readmeText},
	{"go.mod", "module github.com/example/wordfreq\n\ngo 1.25\n"},
	{"internal/count/count.go", "package count\n\nimport \"strings\"\n\n// Words splits text into lower-case words.\nfunc Words(text string) []string {\n\treturn strings.Fields(strings.ToLower(text))\n}\n\n// Len returns how many words text has.\nfunc Len(words []string) int {\n\treturn lenght(words)\n}\n"},
	{"main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\n\t\"github.com/example/wordfreq/internal/count\"\n)\n\nfunc main() {\n\tfmt.Println(len(count.Words(os.Args[1])))\n}\n"},
}

// listEntry is one line of the list_files result.
type listEntry struct {
	name string
	dir  bool
}

// rootListing is list_files "." of the fake project, sorted by name as the
// tool sorts (byte order, so upper case first).
var rootListing = []listEntry{
	{"Makefile", false}, {"README.md", false}, {"go.mod", false}, {"internal", true}, {"main.go", false},
}

// writeProject materialises the fake project under dir.
func writeProject(dir string) error {
	for _, f := range projectFiles {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create project dir: %w", err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			return fmt.Errorf("write project file: %w", err)
		}
	}
	return nil
}

// systemPrompt stands in for maria's ~20 KB default prompt. It is long and
// multi-line on purpose, so clients see a realistic (escaped) payload.
const systemPrompt = "You are a highly skilled software developer with extensive knowledge in many\n" +
	"programming languages, frameworks, design patterns, and best practices.\n" +
	"\n" +
	"====\n" +
	"\n" +
	"TOOL USE\n" +
	"\n" +
	"You have access to a set of tools that are executed upon the user's approval. You can use one tool per message,\n" +
	"and will receive the result of that tool use in the user's response. You use tools step-by-step to accomplish a\n" +
	"given task, with each tool use informed by the result of the previous tool use.\n" +
	"\n" +
	"# Tool Use Guidelines\n" +
	"\n" +
	"1. Assess what information you already have and what information you need to proceed with the task.\n" +
	"2. Choose the most appropriate tool based on the task and the tool descriptions provided.\n" +
	"3. If multiple actions are needed, use one tool at a time per message to accomplish the task iteratively.\n" +
	"4. After each tool use, the user will respond with the result of that tool use.\n" +
	"\n" +
	"====\n" +
	"\n" +
	"RULES\n" +
	"\n" +
	"- Your current working directory is the project root. All paths are relative to it.\n" +
	"- Do not ask for more information than necessary. Use the tools provided to accomplish the user's request.\n" +
	"- When you run commands, prefer non-interactive flags and keep the output short.\n" +
	"- Be direct and technical in your responses. Do not start with \"Great\", \"Certainly\" or \"Sure\".\n" +
	"\n" +
	"# Todo list\n" +
	"\n" +
	"Use the `todo` tool to plan multi-step work: `create` a list, `mark_progress` when you start an item,\n" +
	"and `mark_completed` when you finish it. Keep exactly one item in progress at a time.\n" +
	"\n" +
	"# Searching\n" +
	"\n" +
	"Use `search_files` with `kind: \"regex\"` to find code. Narrow the search with `file_pattern` (for example\n" +
	"`*.go`) and keep `context_lines` small."

// toolDefs are the six registered tools in registration order (§6.3).
func toolDefs() []obj {
	p := func(typ, desc string, extra ...any) obj {
		return o("type", typ, "description", desc).with(extra...)
	}
	return []obj{
		o("name", "execute_command", "description", "Execute an shell command with arguments and capture its output.",
			"schema", o("type", "object", "properties", o(
				"command", p("string", "The shell command to execute."),
				"timeout", p("number", "Timeout in milliseconds.", "default", 600000),
				"max_output_lines", p("number", "Maximum number of output lines to return.", "default", 100),
			), "required", []string{"command"})),
		o("name", "list_files", "description", "List files in a directory",
			"schema", o("type", "object", "properties", o(
				"path", p("string", "The path of the directory to list, relative to the current working directory."),
			), "required", []string{"path"})),
		o("name", "read_file", "description", "Read the contents of a file at the specified path.\nUse start_line and end_line to read a range.",
			"schema", o("type", "object", "properties", o(
				"path", p("string", "The path of the file to read."),
				"start_line", p("number", "First line to read (1-based)."),
				"end_line", p("number", "Last line to read."),
			), "required", []string{"path"})),
		o("name", "todo", "description", "Request to manage the todo list for the session. Actions: read, create, add_task, update, mark_progress, mark_completed.",
			"schema", o("type", "object", "properties", o(
				"action", p("string", "The action to perform."),
				"content", p("string", "Task content; for create, one task per line."),
				"task_id", p("string", "The id of the task to update."),
				"priority", p("string", "high, medium or low."),
				"status", p("string", "pending, in_progress or completed."),
				"notes", p("string", "Optional notes."),
			), "required", []string{"action"})),
		o("name", "search_files", "description", "Search for patterns in files with three distinct modes: regex, moonbit_definition and moonbit_references.",
			"schema", o("type", "object", "properties", o(
				"context_lines", p("number", "Lines of context around each match.", "default", 2),
				"file_pattern", p("string", "Glob of files to search.", "default", "*"),
				"kind", o("type", "string", "enum", []string{"regex", "moonbit_definition", "moonbit_references"}, "description", "The search mode."),
				"path", p("string", "Directory to search."),
				"regex", p("string", "The pattern."),
				"respect_gitignore", p("boolean", "Skip files ignored by git.", "default", true),
			), "required", []string{"path", "regex", "kind"})),
		o("name", "write_to_file", "description", "Write content to a file at the specified path. \nAppends to an existing file.",
			"schema", o("type", "object", "properties", o(
				"content", p("string", "The content to write."),
				"path", p("string", "The path of the file."),
				"separator", p("string", "Separator between existing and new content.", "default", "\n"),
			), "required", []string{"path", "content"})),
	}
}

// toolsStatus is the task server's GET /v1/tools body.
var toolNames = []string{"execute_command", "list_files", "read_file", "todo", "search_files", "write_to_file"}

// ---- rendered tool output (§7), HEAD "text" and legacy "result" ----

// outputSection renders one "=== STDOUT (k lines) ===" block; k counts the
// "\n"-split parts, so a trailing newline counts one extra line, as maria does.
func outputSection(label, out string) string {
	if strings.TrimSpace(out) == "" {
		return ""
	}
	return fmt.Sprintf("\n=== %s (%d lines) ===\n%s", label, len(strings.Split(out, "\n")), out)
}

func commandText(cmd string, status int, stdout, stderr string) string {
	return fmt.Sprintf("Command %s exited with status %d.", cmd, status) +
		outputSection("STDOUT", stdout) + outputSection("STDERR", stderr)
}

func commandLegacy(cmd string, status int, stdout, stderr string) any {
	return []any{"Completed", o("command", cmd, "status", status, "stdout", stdout, "stderr", stderr, "max_output_lines", 100)}
}

func listText(path string, entries []listEntry) string {
	if len(entries) == 0 {
		return "No files found."
	}
	files, dirs := 0, 0
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		icon := "📄"
		if e.dir {
			icon = "📁"
			dirs++
		} else {
			files++
		}
		lines = append(lines, icon+" "+e.name)
	}
	return fmt.Sprintf("Directory: %s\nTotal: %d items (%d files, %d directories)\n\n", path, len(entries), files, dirs) +
		strings.Join(lines, "\n")
}

func listLegacy(path string, entries []listEntry) any {
	items := make([]obj, 0, len(entries))
	files, dirs := 0, 0
	for _, e := range entries {
		kind := "file"
		if e.dir {
			kind = "directory"
			dirs++
		} else {
			files++
		}
		items = append(items, o("name", e.name, "kind", kind, "is_hidden", strings.HasPrefix(e.name, ".")))
	}
	return o("path", path, "entries", items, "total_count", len(entries), "file_count", files, "directory_count", dirs)
}

func readText(path, content string) string {
	lines := strings.Split(content, "\n")
	width := len(fmt.Sprint(len(lines)))
	var b strings.Builder
	fmt.Fprintf(&b, "File: %s (lines 1-%d (%d lines))", path, len(lines), len(lines))
	for i, l := range lines {
		fmt.Fprintf(&b, "\n L%0*d | %s", width, i+1, l)
	}
	return b.String()
}

func readLegacy(path, content string) any {
	return o("path", path, "content", content, "start_line", 1, "end_line", len(strings.Split(content, "\n")))
}

// searchHit is one search_files match.
type searchHit struct {
	path    string
	line    int
	match   string
	context []string // lines line-1, line, line+1
}

func searchText(hits []searchHit) string {
	if len(hits) == 0 {
		return "No matches found."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Search completed. Found %d matches.\n\n", len(hits))
	for _, h := range hits {
		fmt.Fprintf(&b, "%s:%d\n%s\n", h.path, h.line, searchContext(h))
	}
	return b.String()
}

func searchContext(h searchHit) string {
	lines := make([]string, len(h.context))
	for i, l := range h.context {
		lines[i] = fmt.Sprintf("%d: %s", h.line-1+i, l)
	}
	return strings.Join(lines, "\n")
}

func searchLegacy(regex string, hits []searchHit) any {
	results := make([]obj, 0, len(hits))
	for _, h := range hits {
		results = append(results, o("context", searchContext(h), "line_number", h.line, "match_line", h.match, "path", h.path))
	}
	return []any{"SearchResultData", o("kind", "Regex", "query", regex, "path", ".", "file_pattern", "*.go", "context_lines", 1,
		"total_matches", len(hits), "results", results, "truncated", false,
		"message", fmt.Sprintf("Search completed. Found %d matches.", len(hits)))}
}

// todo is one todo item (§8.6).
type todo struct {
	id, content, priority, status, created, updated string
}

func (t todo) json() obj {
	return o("content", t.content, "created_at", t.created, "id", t.id, "priority", t.priority, "status", t.status, "updated_at", t.updated)
}

func todosJSON(ts []todo) []obj {
	out := make([]obj, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.json())
	}
	return out
}

// statusIcon and priorityIcon are switches, not maps: a package-level map
// is built at package initialisation, which every perch command pays.
func statusIcon(status string) string {
	switch status {
	case "Completed":
		return "✅"
	case "InProgress":
		return "🔄"
	case "Pending":
		return "⏳"
	}
	return ""
}

func priorityIcon(priority string) string {
	switch priority {
	case "High":
		return "🔴"
	case "Medium":
		return "🟡"
	case "Low":
		return "🟢"
	}
	return ""
}

func todoLine(t todo) string {
	return fmt.Sprintf("  %s %s [%s] %s", priorityIcon(t.priority), statusIcon(t.status), t.id, t.content)
}

// todoWriteText renders the todo tool's Write output (§7.7).
func todoWriteText(message string, all, updated []todo, created bool) string {
	var b strings.Builder
	b.WriteString("✅ Operation completed: " + message + "\n\n")
	if created {
		b.WriteString("📝 Newly created todos:\n")
		for _, t := range all {
			b.WriteString(todoLine(t) + "\n")
		}
	} else {
		b.WriteString("📝 Current todo list:\n")
		for _, t := range all {
			b.WriteString(todoLine(t) + "\n")
		}
		b.WriteString("\n✨ Updated items:\n")
		for _, t := range updated {
			b.WriteString(todoLine(t) + "\n")
		}
	}
	n := map[string]int{}
	for _, t := range all {
		n[t.status]++
	}
	fmt.Fprintf(&b, "\n📊 Current summary: Total %d items | Pending %d | In Progress %d | Completed %d",
		len(all), n["Pending"], n["InProgress"], n["Completed"])
	return b.String()
}

func todoLegacy(message string, all, updated []todo, created bool) any {
	return []any{"Write", o("todos", todosJSON(all), "message", message, "updated_todos", todosJSON(updated), "is_new_creation", created)}
}
