// Package tools is perch's one place of knowledge about agent tools across
// systems: which kind of tool a name is (a shell command, a file read, …),
// which argument a tool's header shows, and how each known tool-output
// format reads. The decoders and the renderers ask it; they hold no tool
// names of their own. It imports nothing of perch.
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
	TodoList
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
	case TodoList:
		return "todo"
	case Web:
		return "web"
	}
	return "other"
}

// Format is how a tool's output text is read. Each has one parser here.
type Format uint8

const (
	// Text is output shown as it is.
	Text Format = iota
	// FormatCommand is maria's execute_command text: "Command <cmd>
	// exited with status <n>." and "=== STDOUT (k lines) ===" sections
	// (ParseCommand).
	FormatCommand
	// FormatRead is maria's read_file text: "File: p (lines s-e (n
	// lines))" over " L12 | text" rows (ParseRead).
	FormatRead
	// FormatListing is maria's list_files text: "Directory: p" over
	// "📁 name" rows (ParseListing).
	FormatListing
	// FormatSearch is maria's search_files text: a message, then
	// "path:line" headers over "n: text" rows (ParseSearch).
	FormatSearch
	// FormatWrite is maria's write_to_file / replace_in_file text:
	// "Content written to file at path: p" (ParseWrite).
	FormatWrite
	// FormatMetaWrite is maria's legacy meta_write_to_file: drawn as a
	// write; its legacy structure carries a diff.
	FormatMetaWrite
	// FormatPatch is maria's apply_patch text: a JSON summary of the
	// files added, modified and deleted (ParsePatch).
	FormatPatch
	// FormatTodo is maria's todo text: the list with status and priority
	// icons (ParseTodos).
	FormatTodo
)

// Tool is what perch knows of one tool name.
type Tool struct {
	Kind Kind
	// Format is how the tool's output reads: set only for a name spelled
	// exactly as the system whose format it is spells it.
	Format Format
	// keys are the arguments the header shows, the first one set wins;
	// nil for defaultKeys.
	keys []string
	// edit is how the call's arguments describe the change to a file,
	// for an edit tool (Edits).
	edit editArgs
}

// Tool names as the systems spell them, for the code that makes a call of
// that name or checks for one.
const (
	// maria (docs/protocol.md §7)
	MariaCommand   = "execute_command"
	MariaRead      = "read_file"
	MariaList      = "list_files"
	MariaSearch    = "search_files"
	MariaWrite     = "write_to_file"
	MariaReplace   = "replace_in_file"
	MariaMetaWrite = "meta_write_to_file"
	MariaPatch     = "apply_patch"
	MariaTodo      = "todo"

	// Claude Code (and pynchy, which runs Claude Code). Since 2.1 Claude
	// Code tracks its plan with the Task* tools (TodoWrite is gone), and
	// its subagent tool is Agent (Task before).
	ClaudeBash       = "Bash"
	ClaudeTodoWrite  = "TodoWrite"
	ClaudeTaskCreate = "TaskCreate"
	ClaudeTaskUpdate = "TaskUpdate"
	ClaudeTaskList   = "TaskList"
	ClaudeTaskGet    = "TaskGet"
	ClaudeAgent      = "Agent"
	ClaudeEdit       = "Edit"
	ClaudeMultiEdit  = "MultiEdit"
	ClaudeWrite      = "Write"

	// PynchyCommand is the call pynchy's decoder makes of a "!cmd" command
	// a person ran in the chat.
	PynchyCommand = "command"

	// codex reports its tools as thread items of these types; perch shows
	// each as a call of the name after it.
	CodexCommandItem    = "command_execution"
	CodexShell          = "shell"
	CodexFileChangeItem = "file_change"
	CodexApplyPatch     = "apply_patch"
	CodexWebSearchItem  = "web_search"
	CodexWebSearch      = "web_search"
	CodexTodoItem       = "todo_list"

	// codex's own names for the tools it offers the model (0.17x), as its
	// requests and rollouts carry them: exec_command starts a command (in
	// a PTY) and write_stdin writes to or polls one still running;
	// shell_command is the single-command tool of some models.
	CodexExecCommand  = "exec_command"
	CodexWriteStdin   = "write_stdin"
	CodexShellCommand = "shell_command"
	CodexUpdatePlan   = "update_plan"
)

// names maps tool names to what perch knows of them, by system; a name
// several systems share is listed under the first. Lookups are
// case-insensitive for the kind (see Lookup).
var names = map[string]Tool{
	// maria: the formats of the HEAD texts, and the header arguments
	MariaCommand:   {Kind: Command, Format: FormatCommand, keys: []string{"command"}},
	MariaRead:      {Kind: ReadFile, Format: FormatRead},
	MariaList:      {Kind: ListFiles, Format: FormatListing},
	MariaSearch:    {Kind: Search, Format: FormatSearch, keys: []string{"regex", "path"}},
	MariaWrite:     {Kind: WriteFile, Format: FormatWrite, edit: editContent},
	MariaReplace:   {Kind: WriteFile, Format: FormatWrite, edit: editReplace},
	MariaMetaWrite: {Kind: WriteFile, Format: FormatMetaWrite},
	MariaPatch:     {Kind: Patch, Format: FormatPatch, keys: []string{"path"}, edit: editChanges},
	MariaTodo:      {Kind: TodoList, Format: FormatTodo, keys: []string{"action"}},

	// Suna
	"create_file": {Kind: WriteFile}, "web_search": {Kind: Web}, "web_fetch": {Kind: Web},

	// Claude Code and pynchy (lower-cased)
	"bash": {Kind: Command}, "read": {Kind: ReadFile}, "ls": {Kind: ListFiles}, "grep": {Kind: Search},
	"glob": {Kind: Search}, "write": {Kind: WriteFile}, "edit": {Kind: Patch}, "multiedit": {Kind: Patch},
	"todowrite": {Kind: TodoList}, "webfetch": {Kind: Web}, "websearch": {Kind: Web}, PynchyCommand: {Kind: Command},
	ClaudeTaskCreate: {Kind: TodoList, keys: []string{"subject"}}, ClaudeTaskUpdate: {Kind: TodoList, keys: []string{"taskId", "status"}},
	ClaudeTaskList: {Kind: TodoList}, ClaudeTaskGet: {Kind: TodoList, keys: []string{"taskId"}},
	ClaudeAgent: {keys: []string{"description", "subagent_type"}}, "notebookedit": {Kind: Patch},
	ClaudeEdit:      {Kind: Patch, keys: []string{"file_path"}, edit: editReplace},
	ClaudeMultiEdit: {Kind: Patch, keys: []string{"file_path"}, edit: editMulti},
	ClaudeWrite:     {Kind: WriteFile, keys: []string{"file_path"}, edit: editContent},

	// Attocode
	"write_file": {Kind: WriteFile}, "edit_file": {Kind: Patch},

	// codex: the calls perch makes of its items, and the item types
	CodexShell: {Kind: Command}, CodexCommandItem: {Kind: Command}, CodexFileChangeItem: {Kind: Patch},
	CodexTodoItem: {Kind: TodoList}, CodexUpdatePlan: {Kind: TodoList}, "local_shell": {Kind: Command},
	CodexExecCommand: {Kind: Command, keys: []string{"cmd"}}, CodexWriteStdin: {Kind: Command, keys: []string{"chars"}},
	CodexShellCommand: {Kind: Command, keys: []string{"command"}},

	// provider tool sets and other agents
	"run_command": {Kind: Command}, "exec": {Kind: Command}, "run_terminal_cmd": {Kind: Command},
	"run_shell_command": {Kind: Command}, "terminal": {Kind: Command},
	"view": {Kind: ReadFile}, "cat": {Kind: ReadFile}, "open_file": {Kind: ReadFile},
	"list_dir": {Kind: ListFiles}, "list_directory": {Kind: ListFiles},
	"search": {Kind: Search}, "codebase_search": {Kind: Search}, "grep_search": {Kind: Search}, "file_search": {Kind: Search},
	"str_replace_editor": {Kind: Patch}, "str_replace_based_edit_tool": {Kind: Patch},
	"todo_write": {Kind: TodoList}, "browser": {Kind: Web},
}

// Lookup is what perch knows of a tool name. The kind is found whatever
// the case; a format and header arguments only for the name as its
// system spells it (another spelling may be another system's tool).
func Lookup(name string) Tool {
	if t, ok := names[name]; ok {
		return t
	}
	return Tool{Kind: names[strings.ToLower(name)].Kind}
}

// KindOf says what kind of tool name is.
func KindOf(name string) Kind { return Lookup(name).Kind }

// FormatOf is how name's output text reads.
func FormatOf(name string) Format { return Lookup(name).Format }
