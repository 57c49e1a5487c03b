// Package tools is perch's one place of knowledge about agent tools across
// systems: which kind of tool a name is (a shell command, a file read, …),
// so that the reducer and the renderers switch on kinds, never on one
// system's names.
package tools

import "strings"

// Kind is what a tool does, whatever a system calls it.
type Kind uint8

const (
	Other Kind = iota
	Command
	ReadFile
	ListFiles
	Search
	WriteFile
	Patch
	Todo
	Web
)

func (k Kind) String() string {
	switch k {
	case Command:
		return "command"
	case ReadFile:
		return "read"
	case ListFiles:
		return "list"
	case Search:
		return "search"
	case WriteFile:
		return "write"
	case Patch:
		return "patch"
	case Todo:
		return "todo"
	case Web:
		return "web"
	}
	return "other"
}

// names maps the tool names of maria, Suna, pynchy (Claude Code's tools),
// Attocode, codex and common provider tool sets to their kind. Lookups
// are case-insensitive.
var names = map[string]Kind{
	// shell commands
	"execute_command": Command, "bash": Command, "shell": Command, "command": Command,
	"command_execution": Command, "run_command": Command, "exec": Command, "run_terminal_cmd": Command,
	"local_shell": Command, "run_shell_command": Command, "terminal": Command,
	// reading files
	"read_file": ReadFile, "read": ReadFile, "view": ReadFile, "cat": ReadFile, "open_file": ReadFile,
	// listing
	"list_files": ListFiles, "ls": ListFiles, "list_dir": ListFiles, "list_directory": ListFiles,
	// searching
	"search_files": Search, "grep": Search, "glob": Search, "search": Search, "codebase_search": Search,
	"grep_search": Search, "file_search": Search,
	// writing
	"write_to_file": WriteFile, "write": WriteFile, "create_file": WriteFile, "replace_in_file": WriteFile,
	"meta_write_to_file": WriteFile, "write_file": WriteFile,
	// editing by patch or replacement
	"apply_patch": Patch, "edit": Patch, "multiedit": Patch, "str_replace_editor": Patch,
	"str_replace_based_edit_tool": Patch, "file_change": Patch, "edit_file": Patch,
	// todo lists
	"todo": Todo, "todowrite": Todo, "todo_write": Todo, "todo_list": Todo, "update_plan": Todo,
	// the web
	"web_search": Web, "webfetch": Web, "web_fetch": Web, "websearch": Web, "browser": Web,
}

// KindOf says what kind of tool name is.
func KindOf(name string) Kind {
	if k, ok := names[name]; ok {
		return k
	}
	return names[strings.ToLower(name)]
}
