package tools

import "testing"

func TestKindOf(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]Kind{
		"execute_command": Command, "Bash": Command, "command": Command, "command_execution": Command,
		"read_file": ReadFile, "Read": ReadFile, "list_files": ListFiles, "Grep": Search,
		"apply_patch": Patch, "Edit": Patch, "todo": TodoList, "TodoWrite": TodoList, "web_search": Web,
		"file_change": Patch, "todo_list": TodoList, "update_plan": TodoList,
		"exec_command": Command, "write_stdin": Command, "shell_command": Command,
		"made_up_tool": Other, "": Other,
	} {
		if got := KindOf(name); got != want {
			t.Errorf("KindOf(%q) = %v, want %v", name, got, want)
		}
	}
}
